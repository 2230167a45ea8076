import { pageStatement, rowsFor } from '../src/contacts/search/sql.ts'
const s = pageStatement({ groups: [[{ field: 'email', op: 'eq', value: 'grown-7@example.it' }]], includeArchived: false, sort: '-createdAt' } as never, rowsFor(50))
console.log(s.sql.replace(/^SELECT[\s\S]*?FROM \(/, 'SELECT * FROM ('), JSON.stringify(s.params), s.name)
