// Validates openapi.json against the OpenAPI 3.1 schema and resolves every $ref (npm run openapi:check).
import SwaggerParser from '@apidevtools/swagger-parser'

const api = await SwaggerParser.validate('openapi.json')
console.log(`openapi.json is a valid OpenAPI ${'openapi' in api ? api.openapi : 'document'}.`)
