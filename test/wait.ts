// Waiting in tests for what another process, connection or timer brings about.

/**
 * Resolves once `condition` holds, checked every `everyMs`; throws, naming `what`, when it still does not after
 * `timeoutMs`.
 */
export async function until(
  condition: () => boolean | Promise<boolean>,
  what: string,
  timeoutMs = 30_000,
  everyMs = 50,
): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, everyMs))
  }
}
