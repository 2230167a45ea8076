// CI check: the committed migrations, applied in order to an empty database, give exactly prisma/schema.prisma.
import { diffMigrationsToSchema } from './schema-engine.ts'

const sql = await diffMigrationsToSchema()
if (sql.trim() !== '') {
  console.error(`The migrations do not produce prisma/schema.prisma. Missing SQL:\n${sql}`)
  console.error('Run: npm run db:migrate:new -- <name>')
  process.exit(1)
}
console.log('Migrations match prisma/schema.prisma.')
