// npm run sql:write: writes the statements' .sql files and prisma/functions.sql from the code and the migrations
// (scripts/sql-files.ts). The suite fails while the committed files and the code differ.
import { writeFileSync } from 'node:fs'
import { FUNCTIONS_FILE, functionsText, statementTexts } from './sql-files.ts'

const statements = statementTexts()
for (const [path, text] of statements) writeFileSync(path, text)
writeFileSync(FUNCTIONS_FILE, await functionsText())
console.log(`Wrote ${[...statements.keys(), FUNCTIONS_FILE].join(', ')}`)
