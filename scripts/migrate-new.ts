// npm run db:migrate:new -- <name>: writes prisma/migrations/<timestamp>_<name>/migration.sql with the SQL that
// takes the committed migrations to prisma/schema.prisma (Prisma's own layout, so `prisma migrate` agrees).
import { existsSync, mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { diffMigrationsToSchema, lockfileContent, migrationsDir } from './schema-engine.ts'

const name = process.argv[2]
if (!name || !/^[a-z0-9_]+$/.test(name)) {
  console.error('Usage: npm run db:migrate:new -- <name>   (lowercase letters, digits and _)')
  process.exit(1)
}
const sql = await diffMigrationsToSchema()
if (sql.trim() === '') {
  console.error('prisma/schema.prisma already matches the migrations: nothing to write.')
  process.exit(1)
}
const stamp = new Date().toISOString().replace(/\D/g, '').slice(0, 14)
const dir = join(migrationsDir, `${stamp}_${name}`)
mkdirSync(dir, { recursive: true })
writeFileSync(join(dir, 'migration.sql'), sql)
const lock = join(migrationsDir, 'migration_lock.toml')
if (!existsSync(lock)) {
  writeFileSync(lock, lockfileContent)
}
console.log(`Wrote ${dir}/migration.sql`)
