// The reference page in a real headless Chromium (Debian's /usr/bin/chromium, installed by .ci/run), used as a
// person would: on a server with the demo data, authorise with the demo key, "Try it out" on the list (contacts
// come back) and on create with the example body (201). A screenshot is left in tmp/docs.png and named in the
// output. Run with `npm run test:browser`.
import { mkdirSync, readFileSync } from 'node:fs'
import { chromium, type Page } from 'playwright-core'
import t from 'tap'
import { build } from '../test/helper.ts'

const SCREENSHOT = 'tmp/docs.png'

/** Opens an operation by its deep-link id, presses "Try it out" and "Execute"; returns the live response. */
async function tryItOut(page: Page, operationId: string): Promise<{ status: string; body: string }> {
  const block = page.locator(`#operations-contacts-${operationId}`)
  await block.locator('.opblock-summary').click()
  await block.locator('.try-out__btn').click()
  await block.locator('.execute').click()
  const live = block.locator('.live-responses-table .response')
  await live.first().waitFor({ timeout: 30_000 })
  const status = (await live.locator('.response-col_status').first().textContent())?.trim() ?? ''
  const body = (await block.locator('.live-responses-table .microlight').first().textContent()) ?? ''
  return { status, body }
}

t.test('/docs: a person authorises, lists and creates with the page alone', async (t) => {
  const { app } = await build(t)
  const address = await app.listen({ host: '127.0.0.1', port: 0 })
  const demo = await app.demo.createIfEmpty()
  if (!demo) throw new Error('the demo organisation was not created')
  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  })
  t.teardown(() => browser.close())
  const page = await browser.newPage({ viewport: { width: 1280, height: 1600 } })
  const outside: string[] = []
  page.on('request', (request) => {
    if (!request.url().startsWith(address)) outside.push(request.url())
  })
  await page.goto(`${address}/docs`)
  await page.waitForSelector('.opblock', { timeout: 30_000 })
  t.equal(await page.title(), 'rubrica · riferimento API', "the page says rubrica's name")
  const logo = await page.locator('.topbar-wrapper img').getAttribute('src')
  t.match(logo, /^data:image\/svg\+xml/, "the top bar shows rubrica's logo, not the package's")
  const operations = await page.$$eval('.opblock', (blocks) =>
    blocks.map((block) =>
      [
        block.querySelector('.opblock-summary-method')?.textContent?.trim(),
        block
          .querySelector('.opblock-summary-path')
          ?.textContent?.replace(/\u200b/g, '')
          .trim(),
      ].join(' '),
    ),
  )
  // Every operation of the document, and the request sent to webhooks (shown by its name).
  const document = JSON.parse(readFileSync('openapi.json', 'utf8')) as {
    paths: Record<string, Record<string, unknown>>
    webhooks: Record<string, Record<string, unknown>>
  }
  const documented = [
    ...Object.entries(document.paths).flatMap(([path, methods]) =>
      Object.keys(methods).map((method) => `${method.toUpperCase()} ${path}`),
    ),
    ...Object.entries(document.webhooks).flatMap(([name, methods]) =>
      Object.keys(methods).map((method) => `${method.toUpperCase()} ${name}`),
    ),
  ]
  t.ok(documented.includes('POST /api/v1/contacts'), 'the document read has the operations')
  t.same(operations.sort(), documented.sort(), 'the page shows every operation of the document')

  await page.locator('.auth-wrapper .authorize').click()
  await page.locator('.modal-ux input').fill(demo.key)
  await page.locator('.modal-ux .auth-btn-wrapper .authorize').click()
  await page.locator('.modal-ux .btn-done').click()

  const list = await tryItOut(page, 'listContacts')
  t.equal(list.status, '200', 'Try it out on the list answers 200')
  const listed = JSON.parse(list.body) as { data: unknown[] }
  t.ok(listed.data.length > 0, `with the demo contacts (${listed.data.length})`)

  const created = await tryItOut(page, 'createContact')
  t.equal(created.status, '201', `Try it out on create with the example body answers 201: ${created.body}`)

  mkdirSync('tmp', { recursive: true })
  await page.evaluate(() => window.scrollTo(0, 0))
  await page.screenshot({ path: SCREENSHOT })
  t.comment(`screenshot: ${SCREENSHOT}`)
  t.same(outside, [], 'no request leaves the service')
})
