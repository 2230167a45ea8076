// Every repository path that the docs, the README, comments and messages name exists: `src/…`, `docs/…`,
// `test/…`, `bench/…`, `scripts/…` and the other top folders, and every relative link of the Markdown pages (with
// its #anchor, a heading of the page it links to). A file moved or renamed fails here until what names it follows.
// Paths git ignores (what commands write, such as bench/results/) are outputs, not required to exist.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs'
import { dirname, join } from 'node:path'
import t from 'tap'

const TOP_FOLDERS = ['src', 'docs', 'test', 'bench', 'scripts', 'examples', 'prisma', 'deploy', 'browser', 'bin']
/** Where paths are named: every text file of these folders, and these files. */
const NAMING_FILES = ['README.md', 'Dockerfile', 'compose.yaml', '.ci/run', 'package.json']
/** Not read: generated code (made by npm run generate) and binary or dump files. */
const NOT_READ = [/^src\/generated\//, /^test\/clients\/generated\//, /\.(gz|png|jpg|sql|lock)$/]

function filesBelow(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name)
    return statSync(path).isDirectory() ? filesBelow(path) : [path]
  })
}

/** What .gitignore ignores below the repository's root, as path prefixes (`bench/results/`). */
const ignored = readFileSync('.gitignore', 'utf8')
  .split('\n')
  .map((line) => line.trim())
  .filter((line) => line !== '' && !line.startsWith('#') && !line.includes('*'))
  .map((line) => line.replace(/^\//, ''))

// A path as text names it, or a glob (`src/rate-limit/*.ts`, `test/**/*.test.ts`): whether it fits.
function exists(path: string): boolean {
  if (!path.includes('*')) return existsSync(path)
  const source = path
    .replace(/[.+?^${}()|[\]\\]/g, '\\$&')
    .replace(/\*\*\//g, '(?:.+/)?')
    .replace(/\*/g, '[^/]*')
  const glob = new RegExp(`^${source}$`)
  const top = path.split('/', 1)[0] as string
  return existsSync(top) && filesBelow(top).some((file) => glob.test(file))
}

/** Repository paths named in `text`: a top folder, a slash and more, not part of a URL or a longer path. */
function namedPaths(text: string): string[] {
  const pattern = new RegExp(`(?<![\\w@./:$~-])((?:${TOP_FOLDERS.join('|')})/[\\w./*-]*)`, 'g')
  return [...text.matchAll(pattern)].map((match) => (match[1] as string).replace(/[.,:;]+$/, ''))
}

/** GitHub's anchor of a heading: lower case, punctuation dropped, spaces as hyphens. */
const anchorOf = (heading: string) =>
  heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N} _-]/gu, '')
    .replace(/ /g, '-')

const anchorsOf = (page: string) =>
  new Set([...readFileSync(page, 'utf8').matchAll(/^#{1,6} (.+)$/gm)].map((match) => anchorOf(match[1] as string)))

const naming = [...TOP_FOLDERS.filter((folder) => existsSync(folder)).flatMap(filesBelow), ...NAMING_FILES]
  .filter((file) => existsSync(file) && !NOT_READ.some((pattern) => pattern.test(file)))
  .sort()

t.test('every repository path named in the docs, comments and messages exists', async (t) => {
  const missing: string[] = []
  let checked = 0
  for (const file of naming) {
    for (const path of namedPaths(readFileSync(file, 'utf8'))) {
      if (ignored.some((prefix) => path.startsWith(prefix))) continue
      checked++
      if (!exists(path)) missing.push(`${file} names ${path}`)
    }
  }
  t.ok(checked > 500, `${checked} paths checked`)
  t.same(missing, [], 'every path named exists')
})

t.test('every relative link of the Markdown pages reaches a file, and its anchor a heading', async (t) => {
  const broken: string[] = []
  let checked = 0
  for (const page of naming.filter((file) => file.endsWith('.md'))) {
    for (const [, target] of readFileSync(page, 'utf8').matchAll(/\]\(([^)\s]+)\)/g)) {
      if (!target || /^(https?:|mailto:)/.test(target)) continue
      checked++
      const [path = '', anchor] = target.split('#', 2)
      const linked = path === '' ? page : join(dirname(page), path)
      if (!existsSync(linked)) broken.push(`${page} links ${target}: no ${linked}`)
      else if (anchor && !anchorsOf(linked).has(anchor)) broken.push(`${page} links ${target}: no such heading`)
    }
  }
  t.ok(checked > 20, `${checked} links checked`)
  t.same(broken, [], 'every link reaches')
})

/** `docs/<page>.md#<anchor>` and `docs/<page>.md, "<Heading>"` pointers in text, as messages and comments write them. */
function namedSections(text: string): Array<{ page: string; anchor: string }> {
  const byAnchor = [...text.matchAll(/\b(docs\/[\w./-]+\.md)#([\w-]+)/g)].map(([, page, anchor]) => ({
    page: page as string,
    anchor: anchor as string,
  }))
  const byHeading = [...text.matchAll(/\b(docs\/[\w./-]+\.md), "([^"\n]+)"/g)].map(([, page, heading]) => ({
    page: page as string,
    anchor: anchorOf(heading as string),
  }))
  return [...byAnchor, ...byHeading]
}

t.test('every section a message, comment or page points to by name is a heading of that page', async (t) => {
  const sqlFiles = ['prisma', 'src'].flatMap(filesBelow).filter((file) => file.endsWith('.sql'))
  const broken: string[] = []
  let checked = 0
  for (const file of [...naming, ...sqlFiles]) {
    for (const { page, anchor } of namedSections(readFileSync(file, 'utf8'))) {
      checked++
      if (!existsSync(page) || !anchorsOf(page).has(anchor)) broken.push(`${file} points to ${page}#${anchor}`)
    }
  }
  t.ok(checked >= 3, `${checked} pointers checked`)
  t.same(broken, [], 'every pointer lands')
})

t.test("a link labelled with a page's file name links that page", async (t) => {
  const mislabelled: string[] = []
  for (const page of naming.filter((file) => file.endsWith('.md'))) {
    for (const [link, label, target] of readFileSync(page, 'utf8').matchAll(/\[([\w-]+\.md)\]\(([^)\s]+)\)/g)) {
      const path = (target as string).split('#', 1)[0] as string
      const linked = path === '' ? page : path
      if (!linked.endsWith(`/${label}`) && linked !== label) mislabelled.push(`${page}: ${link}`)
    }
  }
  t.same(mislabelled, [], 'labels name the page they link')
})

t.test('the path check sees what it must', async (t) => {
  t.same(namedPaths('see src/api.ts, and docs/api.md#batch-import.'), ['src/api.ts', 'docs/api.md'])
  t.same(namedPaths('http://127.0.0.1:3000/docs and https://x.io/src/a.ts and ../src/db and $bin/node'), [])
  t.ok(exists('src/rate-limit/*.ts'), 'a glob that fits')
  t.ok(exists('test/**/*.test.ts'), 'a glob across folders')
  // Spelt in two pieces, so that this file does not name it.
  t.notOk(exists(['src', 'routes/api/v1/index.ts'].join('/')), 'the path issue #29 found stale')
  t.equal(anchorOf('For integrations: safe retries, no lost updates'), 'for-integrations-safe-retries-no-lost-updates')
  t.same(namedSections('(docs/operations.md, "Running on Citus") and see docs/deployment.md#adding-a-worker.'), [
    { page: 'docs/deployment.md', anchor: 'adding-a-worker' },
    { page: 'docs/operations.md', anchor: 'running-on-citus' },
  ])
})
