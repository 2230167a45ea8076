import { defineConfig } from 'prisma/config'

// The CLI is only used here to generate the client; migrations are applied by rubrica's own runner
// (src/db/migrate.ts) because Prisma's native schema engine cannot be downloaded on every machine.
export default defineConfig({
  schema: 'prisma/schema.prisma',
  migrations: { path: 'prisma/migrations' },
})
