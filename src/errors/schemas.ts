// The error envelope, in named parts: generated clients get a type for the response, its detail, the codes and
// the conflict's existing resource. Not named `Error`, which every generator would export over the global Error.
// The conflict's `existing` member is the shape of another feature's resource: that feature hands it over
// (fastify.errorDetails.conflict), so that this folder imports no feature.
import { type TSchema, Type } from '@sinclair/typebox'
import fp from 'fastify-plugin'
import { StringEnum } from '../schemas/string-enum.js'
import { ERROR_CODES } from './catalogue.js'

export const ErrorCodeSchema = StringEnum(ERROR_CODES, {
  $id: 'ErrorCode',
  description: 'Codice dell’errore, per i programmi',
  examples: ['not_found'],
})

/** What ErrorDetail may carry beside its code and message: named schemas, each added before the detail. */
export interface ErrorMembers {
  /** Only with `conflict`: the resource that already holds what the request asked for. */
  existing?: TSchema
}

/** The envelope's schemas for the members given, each after the schemas it refers to. */
export function errorSchemas(members: ErrorMembers): TSchema[] {
  const detail = Type.Object(
    {
      code: Type.Ref(ErrorCodeSchema),
      message: Type.String({ description: 'Messaggio leggibile, in italiano', examples: ['Risorsa non trovata.'] }),
      ...(members.existing && { existing: Type.Optional(Type.Ref(members.existing)) }),
    },
    { $id: 'ErrorDetail', additionalProperties: false },
  )
  const response = Type.Object({ error: Type.Ref(detail) }, { $id: 'ErrorResponse', additionalProperties: false })
  return [ErrorCodeSchema, ...(members.existing ? [members.existing] : []), detail, response]
}

/** The envelope as responses refer to it, by its $id. */
export const ErrorResponseRef = Type.Ref('ErrorResponse')

export interface ErrorDetails {
  /** The conflict's `existing` member, from the feature whose resource it is. */
  conflict(existing: TSchema): void
  /** What the features gave so far. */
  members(): ErrorMembers
}

declare module 'fastify' {
  interface FastifyInstance {
    errorDetails: ErrorDetails
  }
}

/** Collects the members features give: registered before them. */
export const errorDetailsPlugin = fp(
  async function errorDetails(fastify) {
    const given: ErrorMembers = {}
    fastify.decorate('errorDetails', {
      conflict: (existing: TSchema) => {
        given.existing = existing
      },
      members: () => ({ ...given }),
    } satisfies ErrorDetails)
  },
  { name: 'error-details' },
)

/** Adds the envelope's schemas once the features have given their members: registered after them. */
export const errorSchemasPlugin = fp(
  async function errorSchemasOnApp(fastify) {
    for (const schema of errorSchemas(fastify.errorDetails.members())) fastify.addSchema(schema)
  },
  { name: 'error-schemas', dependencies: ['error-details'] },
)
