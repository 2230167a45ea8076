// The house's shape, checked: every feature folder (a folder of src/ with a plugin.ts that calls
// fastify.apiRoutes.add) is registered once in src/app.ts, and app.ts registers no feature that has no folder;
// no folder of src/ imports a folder that imports it (../shared/tools/folder-loops.mjs, where it is at hand);
// no page of docs/ is over 30 KB and the README is under 12 KB, so that each stays one read.
import { execFileSync } from 'node:child_process'
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs'
import { join } from 'node:path'
import t from 'tap'

const read = (path: string) => readFileSync(path, 'utf8')

/** The folders of src/ with a plugin.ts: each one a feature or a part of the app, registered as one plugin. */
const pluginFolders = () => readdirSync('src').filter((name) => existsSync(join('src', name, 'plugin.ts')))

/** The folders whose plugin.ts `file` imports and registers (the name it imports is used after the imports). */
function registeredIn(file: string): string[] {
  const text = read(file)
  const body = text.slice(text.search(/^export default/m))
  return [...text.matchAll(/^import (\w+)(?:, \{[^}]*\})? from '\.\/([\w-]+)\/plugin\.js'$/gm)]
    .filter(([, name]) => new RegExp(`\\b${name}\\b`).test(body))
    .map(([, , folder]) => folder as string)
}

t.test('every folder with a plugin.ts is registered once, by src/app.ts or src/api.ts, and only those', async (t) => {
  const folders = pluginFolders().sort()
  const features = folders.filter((folder) => read(join('src', folder, 'plugin.ts')).includes('apiRoutes.add('))
  t.ok(features.length >= 4, `the features (a plugin.ts that adds routes): ${features.join(', ')}`)
  const registered = [...registeredIn('src/app.ts'), ...registeredIn('src/api.ts')]
  t.same([...registered].sort(), folders, 'app.ts and api.ts register each such folder, and no other')
  t.equal(new Set(registered).size, registered.length, 'each once')
  for (const folder of features) {
    const imports = read('src/app.ts').match(new RegExp(`from '\\./${folder}/`, 'g')) ?? []
    t.equal(imports.length, 1, `app.ts takes ${folder}/ through its plugin.ts alone`)
  }
})

t.test('no folder of src/ imports a folder that imports it', async (t) => {
  const tool = join('..', 'shared', 'tools', 'folder-loops.mjs')
  if (!existsSync(tool)) {
    t.comment(`${tool} is not at hand here`)
    return
  }
  const output = execFileSync(process.execPath, [tool, '.'], { encoding: 'utf8' })
  t.match(output, /^0 folder pairs import each other; 0 strongly connected group\(s\)/m, output)
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
