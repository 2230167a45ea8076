// The house's shape, checked: the features (the folders of src/ whose plugin.ts calls fastify.apiRoutes.add) are
// the lines of src/features.ts, each once, and the other folders with a plugin.ts are registered by src/app.ts or
// src/api.ts; the steps of docs/contributing.md "Adding a feature" (one folder, one line in src/features.ts) are
// followed on a scratch feature in a copy of src/, whose app then serves its route behind authentication and
// documents it; no folder of src/ imports a folder that imports it, directly or around a loop (read from the
// sources' imports, in every clone); no function of src/ is over 60 lines, its comments and SQL text counted; no page of docs/ is over
// 30 KB and the README is under 12 KB, so that each stays one read.
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join, relative, resolve, sep } from 'node:path'
import { pathToFileURL } from 'node:url'
import t from 'tap'
import ts from 'typescript'
import type { buildApp } from '../../src/app.ts'
import { features } from '../../src/features.ts'
import { createTestDatabase } from '../database.ts'
import { createTenantWithKey, request, testConfig } from '../helper.ts'

const read = (path: string) => readFileSync(path, 'utf8')

/** The folders of `src` with a plugin.ts: each one a feature or a part of the app, registered as one plugin. */
const pluginFolders = (src = 'src') => readdirSync(src).filter((name) => existsSync(join(src, name, 'plugin.ts')))

/** The folders of `src` whose plugin.ts adds routes under /api/v1: the features. */
const featureFolders = (src = 'src') =>
  pluginFolders(src).filter((folder) => read(join(src, folder, 'plugin.ts')).includes('apiRoutes.add('))

/** A line of src/features.ts: the feature's plugin, imported from its folder. */
const FEATURE_LINE = /^ {2}\(await import\('\.\/([\w-]+)\/plugin\.js'\)\)\.default,$/gm

/** The folders src/features.ts lists, in its order. */
const listedIn = (featuresTs: string) => [...featuresTs.matchAll(FEATURE_LINE)].map(([, folder]) => folder as string)

/** What is wrong with a list of features against the feature folders: empty when each folder is listed once. */
function registrationProblems(listed: readonly string[], folders: readonly string[]): string[] {
  return [
    ...folders.filter((folder) => !listed.includes(folder)).map((folder) => `${folder}/ is not listed`),
    ...listed.filter((folder) => !folders.includes(folder)).map((folder) => `${folder} is listed but is no feature`),
    ...listed.filter((folder, i) => listed.indexOf(folder) !== i).map((folder) => `${folder} is listed twice`),
  ]
}

/** The folders whose plugin.ts `file` imports and registers (the name it imports is used after the imports). */
function registeredIn(file: string): string[] {
  const text = read(file)
  const body = text.slice(text.search(/^export default/m))
  return [...text.matchAll(/^import (\w+)(?:, \{[^}]*\})? from '\.\/([\w-]+)\/plugin\.js'$/gm)]
    .filter(([, name]) => new RegExp(`\\b${name}\\b`).test(body))
    .map(([, , folder]) => folder as string)
}

t.test(
  'src/features.ts lists every feature folder once, and app.ts or api.ts registers the other plugins',
  async (t) => {
    const folders = featureFolders()
    t.ok(folders.length >= 4, `the features (a plugin.ts that adds routes): ${folders.join(', ')}`)
    const listed = listedIn(read('src/features.ts'))
    t.same(registrationProblems(listed, folders), [], 'each feature folder is one line of src/features.ts')
    t.equal(features.length, listed.length, 'the list app.ts registers is those lines and nothing else')
    for (const [i, folder] of listed.entries()) {
      const plugin = (await import(`../../src/${folder}/plugin.ts`)).default
      t.equal(features[i], plugin, `line ${i + 1}: ${folder}/plugin.ts`)
    }
    const others = pluginFolders().filter((folder) => !folders.includes(folder))
    const registered = [...registeredIn('src/app.ts'), ...registeredIn('src/api.ts')]
    t.same([...registered].sort(), others.sort(), 'app.ts and api.ts register each other plugin folder, and no other')
    t.equal(new Set(registered).size, registered.length, 'each once')
    for (const folder of folders) {
      t.notMatch(
        read('src/app.ts'),
        new RegExp(`from '\\./${folder}/`),
        `app.ts takes ${folder}/ through features.ts alone`,
      )
    }
  },
)

t.test('the check of the list fails on a folder left out, one listed twice, and one that is no feature', async (t) => {
  const folders = ['contacts', 'events', 'tags']
  t.same(registrationProblems(['contacts', 'events', 'tags'], folders), [])
  t.same(registrationProblems(['contacts', 'events'], folders), ['tags/ is not listed'])
  t.same(registrationProblems(['contacts', 'events', 'tags', 'events'], folders), ['events is listed twice'])
  t.same(registrationProblems([...folders, 'health'], folders), ['health is listed but is no feature'])
  t.same(listedIn("  (await import('./tags/plugin.js')).default,\n  // (await import('./x/plugin.js')).default,\n"), [
    'tags',
  ])
})

/** The scratch feature of the steps: one GET route with its scope and access, its tag, and its plugin. */
const SCRATCH_FILES = {
  'routes.ts': `import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from '@sinclair/typebox'
import { COMMON_CODES, errorResponses, success } from '../openapi/responses.js'
import { NoQuerySchema } from '../schemas/limits.js'

const schema = {
  operationId: 'listScratch',
  tags: ['scratch'],
  querystring: NoQuerySchema,
  response: { 200: success('Prova', Type.Object({ ok: Type.Boolean() })), ...errorResponses(COMMON_CODES) },
}

const routes: FastifyPluginAsyncTypebox = async (fastify) => {
  fastify.get('/', { config: { scopes: ['contacts:read'], access: 'read' }, schema }, async () => ({ ok: true }))
}

export default routes
`,
  'plugin.ts': `import fp from 'fastify-plugin'
import routes from './routes.js'

export default fp(
  async function scratch(fastify) {
    fastify.openapiSections.addTag({ name: 'scratch', description: 'Prova' })
    fastify.apiRoutes.add(routes, { prefix: '/scratch' })
  },
  { name: 'scratch', dependencies: ['api-routes', 'openapi-sections'] },
)
`,
}

t.test('adding a feature is one folder and one line: a scratch feature, added so, is served', async (t) => {
  // A copy of src/ beside its own package.json (ES modules) and a link to the project's node_modules.
  const root = mkdtempSync(join(tmpdir(), 'rubrica-scratch-feature-'))
  t.teardown(() => rmSync(root, { recursive: true, force: true }))
  cpSync('src', join(root, 'src'), { recursive: true })
  writeFileSync(join(root, 'package.json'), JSON.stringify({ type: 'module' }))
  symlinkSync(resolve('node_modules'), join(root, 'node_modules'), 'dir')
  const src = join(root, 'src')
  t.same(featureFolders(src), featureFolders(), 'the copy has the features of src/')

  // The steps of docs/contributing.md: the folder, then its line in features.ts.
  mkdirSync(join(src, 'scratch'))
  for (const [name, text] of Object.entries(SCRATCH_FILES)) {
    writeFileSync(join(src, 'scratch', name), text)
  }
  const featuresTs = read(join(src, 'features.ts'))
  const lastLine = [...featuresTs.matchAll(FEATURE_LINE)].at(-1)?.[0] ?? ''
  writeFileSync(
    join(src, 'features.ts'),
    featuresTs.replace(lastLine, `${lastLine}\n  (await import('./scratch/plugin.js')).default,`),
  )
  t.same(registrationProblems(listedIn(read(join(src, 'features.ts'))), featureFolders(src)), [], 'listed once')

  const copy: { buildApp: typeof buildApp } = await import(pathToFileURL(join(src, 'app.ts')).href)
  const config = testConfig()
  const db = await createTestDatabase({ poolSize: config.DATABASE_POOL_SIZE })
  t.teardown(() => db.close())
  const app = await copy.buildApp(config, { database: db.database })
  t.teardown(() => app.close())
  await app.ready()
  const { key } = await createTenantWithKey(app)
  const answer = await request(app, key, { method: 'GET', url: '/api/v1/scratch' })
  t.equal(answer.statusCode, 200)
  t.same(answer.json(), { ok: true })
  t.equal(answer.headers['x-ratelimit-limit'], '60', 'rate limited as every route of the API')
  t.equal((await app.inject({ method: 'GET', url: '/api/v1/scratch' })).statusCode, 401, 'behind authentication')
  const document = (await app.inject({ method: 'GET', url: '/openapi.json' })).json()
  t.same(document.paths['/api/v1/scratch']?.get?.security, [{ apiKey: ['contacts:read'] }], 'documented, guarded')
  t.equal(document.tags.at(-1)?.name, 'scratch', 'its tag last, as its line')
})

/** The folders of src/ (its first level; contacts/batch counts as contacts) each folder's sources import. */
function folderImports(): Map<string, Map<string, string>> {
  const folderOf = (path: string) => relative('src', path).split(sep)[0] as string
  const graph = new Map<string, Map<string, string>>()
  for (const file of sourcesBelow('src').filter((path) => relative('src', path).includes(sep))) {
    const from = folderOf(file)
    for (const { fileName } of ts.preProcessFile(readFileSync(file, 'utf8')).importedFiles) {
      if (!fileName.startsWith('.')) continue
      const target = resolve(dirname(file), fileName)
      const to = folderOf(target)
      if (to === from || to.startsWith('..') || !relative('src', target).includes(sep)) continue
      const edges = graph.get(from) ?? new Map<string, string>()
      if (!edges.has(to)) edges.set(to, `${file} imports ${fileName}`)
      graph.set(from, edges)
    }
  }
  return graph
}

/** A loop of folders that import one another, each step with one import that makes it; none: []. */
function folderLoop(graph: Map<string, Map<string, string>>): string[] {
  const done = new Set<string>()
  const path: string[] = []
  const visit = (folder: string): string[] => {
    if (path.includes(folder)) {
      const loop = [...path.slice(path.indexOf(folder)), folder]
      return loop.slice(1).map((to, i) => graph.get(loop[i] as string)?.get(to) as string)
    }
    if (done.has(folder)) return []
    path.push(folder)
    for (const to of graph.get(folder)?.keys() ?? []) {
      const found = visit(to)
      if (found.length > 0) return found
    }
    path.pop()
    done.add(folder)
    return []
  }
  for (const folder of graph.keys()) {
    const found = visit(folder)
    if (found.length > 0) return found
  }
  return []
}

t.test('no folder of src/ imports a folder that imports it, directly or around a loop', async (t) => {
  const graph = folderImports()
  t.ok(graph.get('contacts')?.has('db'), 'the import graph is read (contacts imports db)')
  t.same(folderLoop(graph), [], 'no loop of folders')
  t.same(
    folderLoop(
      new Map([
        ['a', new Map([['b', 'a imports b']])],
        ['b', new Map([['a', 'b imports a']])],
      ]),
    ),
    ['a imports b', 'b imports a'],
  )
})

/** TypeScript files below `dir`, the generated ones aside. */
function sourcesBelow(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name)
    if (statSync(path).isDirectory()) return name === 'generated' ? [] : sourcesBelow(path)
    return path.endsWith('.ts') ? [path] : []
  })
}

/** The functions of a source over `max` lines, each named by its line: every line but blank ones counts. */
function longFunctions(file: string, text: string, max: number): string[] {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true)
  const found: string[] = []
  const visit = (node: ts.Node) => {
    if (ts.isFunctionLike(node) && 'body' in node && node.body) {
      const lines = text
        .slice(node.getStart(source), node.getEnd())
        .split('\n')
        .filter((line) => line.trim())
      const at = source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1
      if (lines.length > max) found.push(`${file}:${at}: ${lines.length} lines`)
    }
    ts.forEachChild(node, visit)
  }
  visit(source)
  return found
}

t.test('no function of src/ is over 60 lines, counting its comments and SQL text', async (t) => {
  const files = sourcesBelow('src')
  t.ok(files.length > 50, `${files.length} files`)
  t.same(
    files.flatMap((file) => longFunctions(file, read(file), 60)),
    [],
    'every function at most 60 lines',
  )
  // 61 lines: its first and last, 30 of comments and 29 of a statement's text; the blank line does not count.
  const long = (comments: number) =>
    `const f = () => {\n${'  // why\n'.repeat(comments)}\n  const sql = \`\n${'    SELECT 1\n'.repeat(27)}  \`\n}\n`
  t.same(longFunctions('long.ts', long(30), 60), ['long.ts:1: 61 lines'], 'comments and SQL text count')
  t.same(longFunctions('long.ts', long(29), 60), [], '60 lines are allowed')
})

/** Markdown files below `dir`. */
function pagesBelow(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name)
    if (statSync(path).isDirectory()) return pagesBelow(path)
    return path.endsWith('.md') ? [path] : []
  })
}

t.test('each page of docs/ stays under 30 KB, the README under 12 KB', async (t) => {
  for (const page of pagesBelow('docs')) {
    const size = statSync(page).size
    t.ok(size <= 30_000, `${page}: ${size} bytes`)
  }
  const readme = statSync('README.md').size
  t.ok(readme < 12_000, `README.md: ${readme} bytes`)
})
