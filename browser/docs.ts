// The reference page in a real headless Chromium (Debian's /usr/bin/chromium, installed by .ci/run):
// it renders from the service alone and lists the four operations. Run with `npm run test:browser`.
import { chromium } from 'playwright-core'
import t from 'tap'
import { build } from '../test/helper.ts'

t.test('/docs lists the four operations', async (t) => {
  const { app } = await build(t)
  const address = await app.listen({ host: '127.0.0.1', port: 0 })
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
  const page = await browser.newPage()
  const outside: string[] = []
  page.on('request', (request) => {
    if (!request.url().startsWith(address)) outside.push(request.url())
  })
  await page.goto(`${address}/docs`)
  await page.waitForSelector('.opblock', { timeout: 30_000 })
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
  t.same(operations.sort(), [
    'GET /api/v1/contacts',
    'GET /api/v1/contacts/{id}',
    'PATCH /api/v1/contacts/{id}',
    'POST /api/v1/contacts',
  ])
  t.same(outside, [], 'no request leaves the service')
  await page.screenshot({ path: 'tmp/docs.png', fullPage: false }).catch(() => {})
})
