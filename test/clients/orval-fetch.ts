// The fetch that orval's generated functions call: the base URL and the key come from the environment the
// check runs the program in. It returns what orval's types describe: the status, the parsed body, the headers.
export async function rubricaFetch<T>(url: string, init: RequestInit): Promise<T> {
  const response = await fetch(new URL(url, process.env.RUBRICA_URL), {
    ...init,
    headers: { ...(init.headers as Record<string, string>), authorization: `Bearer ${process.env.RUBRICA_KEY}` },
  })
  const text = await response.text()
  return { status: response.status, data: text ? JSON.parse(text) : {}, headers: response.headers } as T
}
