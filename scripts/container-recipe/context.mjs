// The Docker build context: the committed files that .dockerignore lets through, copied to a directory.
import { spawnSync } from 'node:child_process'
import { cpSync, existsSync, mkdirSync, readFileSync } from 'node:fs'
import { dirname, join, posix } from 'node:path'
import { fail } from './dockerfile.mjs'

/** One .dockerignore pattern as a regular expression (Go filepath.Match plus `**`). */
function patternToRegExp(pattern) {
  let re = ''
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i]
    if (c === '*' && pattern[i + 1] === '*') {
      i++
      if (pattern[i + 1] === '/') {
        i++
        re += '(?:.*/)?'
      } else re += '.*'
    } else if (c === '*') re += '[^/]*'
    else if (c === '?') re += '[^/]'
    else if (c === '[' && pattern.indexOf(']', i) > i) {
      const end = pattern.indexOf(']', i)
      re += pattern.slice(i, end + 1).replace('[!', '[^')
      i = end
    } else re += c.replace(/[.+^${}()|\\\]]/g, '\\$&')
  }
  return new RegExp(`^${re}$`)
}

/** .dockerignore rules in file order. */
function ignoreRules(file) {
  if (!existsSync(file)) return []
  const rules = []
  for (let line of readFileSync(file, 'utf8').split('\n')) {
    line = line.trim()
    if (!line || line.startsWith('#')) continue
    const negate = line.startsWith('!')
    const pattern = posix.normalize((negate ? line.slice(1) : line).trim()).replace(/^\/+|\/+$/g, '')
    if (!pattern || pattern === '.') continue
    rules.push({ negate, re: patternToRegExp(pattern) })
  }
  return rules
}

/** Docker's rule: a path is excluded when the last rule matching it, or one of its parent folders, excludes. */
function ignored(path, rules) {
  const parts = path.split('/')
  const candidates = parts.map((_, i) => parts.slice(0, i + 1).join('/'))
  let result = false
  for (const rule of rules) if (candidates.some((c) => rule.re.test(c))) result = !rule.negate
  return result
}

/** Copies the context of the clone to `out` and prints how many files it holds. */
export function context(clone, out) {
  const listed = spawnSync('git', ['-C', clone, 'ls-files', '-z'], { encoding: 'utf8' })
  if (listed.status !== 0) fail(`git ls-files: ${listed.stderr}`)
  const rules = ignoreRules(join(clone, '.dockerignore'))
  let kept = 0
  for (const file of listed.stdout.split('\0').filter(Boolean)) {
    if (ignored(file, rules)) continue
    mkdirSync(dirname(join(out, file)), { recursive: true })
    cpSync(join(clone, file), join(out, file), { preserveTimestamps: true, verbatimSymlinks: true })
    kept++
  }
  console.log(kept)
}
