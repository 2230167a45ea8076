// The error envelope, in named parts: generated clients get a type for the response, its detail, the codes and
// the conflict's existing contact. Not named `Error`, which every generator would export over the global Error.
import { Type } from '@sinclair/typebox'
import { EmailStatusSchema, EXAMPLE_ID } from '../contacts/model.js'
import { StringEnum } from '../schemas/string-enum.js'
import { ERROR_CODES } from './catalogue.js'

export const ErrorCodeSchema = StringEnum(ERROR_CODES, {
  $id: 'ErrorCode',
  description: 'Codice dell’errore, per i programmi',
  examples: ['not_found'],
})

export const ExistingContactSchema = Type.Object(
  {
    id: Type.String({ format: 'uuid', description: 'Id del contatto che ha già questa email', examples: [EXAMPLE_ID] }),
    status: Type.Ref(EmailStatusSchema),
  },
  { $id: 'ExistingContact', additionalProperties: false, description: 'Solo con conflict: il contatto già esistente' },
)

export const ErrorDetailSchema = Type.Object(
  {
    code: Type.Ref(ErrorCodeSchema),
    message: Type.String({ description: 'Messaggio leggibile, in italiano', examples: ['Risorsa non trovata.'] }),
    existing: Type.Optional(Type.Ref(ExistingContactSchema)),
  },
  { $id: 'ErrorDetail', additionalProperties: false },
)

export const ErrorResponseSchema = Type.Object(
  { error: Type.Ref(ErrorDetailSchema) },
  { $id: 'ErrorResponse', additionalProperties: false },
)

/** The schemas routes refer to by $id: the document's components. */
export const errorSchemas = [ErrorCodeSchema, ExistingContactSchema, ErrorDetailSchema, ErrorResponseSchema]
