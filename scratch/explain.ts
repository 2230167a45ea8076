import { pageStatement, rowsFor } from '../src/contacts/search/sql.ts'
const s = pageStatement({ groups: [], includeArchived: false, sort: '-createdAt' } as never, rowsFor(1))
console.log(s.sql)
