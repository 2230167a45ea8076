import { Type } from '@sinclair/typebox'
import { ERROR_CODES } from '../errors.js'
import { StringEnum } from './string-enum.js'

export const ErrorSchema = Type.Object(
  {
    error: Type.Object({
      code: StringEnum(ERROR_CODES),
      message: Type.String({ description: 'Messaggio leggibile, in italiano' }),
      existing: Type.Optional(
        Type.Object(
          { id: Type.String({ format: 'uuid' }), status: Type.String() },
          { description: 'Solo con conflict: il contatto già esistente' },
        ),
      ),
    }),
  },
  { $id: 'Error' },
)
