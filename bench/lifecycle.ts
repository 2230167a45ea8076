// How a run ends, whichever way it ends (done, failed, interrupted by a signal, or over its time budget): the
// cleanup steps registered along the way run once, in the order they were registered.
import { note } from './output.ts'
import { killWrk } from './wrk.ts'

type CleanupStep = () => Promise<void> | void

const steps: CleanupStep[] = []
let cleaning: Promise<void> | undefined
let interrupted = false

/** Adds a step to the cleanup (stop the servers, drop the database, remove the scripts…). */
export function onCleanup(step: CleanupStep): void {
  steps.push(step)
}

/** Runs the cleanup steps; later calls wait for the first one. */
export function cleanup(): Promise<void> {
  cleaning ??= (async () => {
    for (const step of steps) await step()
  })()
  return cleaning
}

/** On SIGINT or SIGTERM: stop wrk, clean up and exit 130. */
export function cleanUpOnSignals(): void {
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => {
      interrupted = true
      note(`${signal}: stopping servers and cleaning up`)
      killWrk()
      void cleanup().finally(() => process.exit(130))
    })
  }
}

export const wasInterrupted = () => interrupted

/** Called before each load run: after a signal, nothing new starts while cleanup() runs. */
export function stopIfInterrupted(): void {
  if (interrupted) throw new Error('interrupted')
}

/** Aborts the run (cleanup, exit 1) if it outlasts `seconds`: a hung child must not hold CI forever. */
export function startWatchdog(seconds: number): void {
  const watchdog = setTimeout(() => {
    note(`the whole run exceeded its ${Math.round(seconds)} s budget: aborting`)
    void cleanup().finally(() => process.exit(1))
  }, seconds * 1000)
  watchdog.unref()
}
