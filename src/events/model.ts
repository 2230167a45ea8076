// The event feed's shapes: an Event is one change of a contact, with the contact as GET returned it right after
// that change (or, once the contact is erased, its id alone); a page of them comes with the position to read on
// from. Positions are a tenant's own event numbers,
// written as decimal strings: opaque to clients, and telling nothing about other tenants.
import { type Static, Type } from '@sinclair/typebox'
import { ContactSchema, ErasedContactSchema } from '../contacts/model.js'
import { POSITION, Timestamp } from '../schemas/common.js'
import { LIMITS } from '../schemas/limits.js'
import { StringEnum } from '../schemas/string-enum.js'

export const EVENT_TYPES = ['contact.created', 'contact.updated', 'contact.erased'] as const
export type EventType = (typeof EVENT_TYPES)[number]

export const EventTypeSchema = StringEnum(EVENT_TYPES, {
  $id: 'EventType',
  description:
    'Che cosa è successo al contatto: creato, modificato, o cancellato su richiesta dell’interessato (contact.erased)',
  examples: ['contact.updated'],
})
const EventTypeRef = Type.Unsafe<EventType>(Type.Ref(EventTypeSchema))

const EXAMPLE_EVENT = {
  id: '2d9c8f0e-41b7-4c5e-8a0f-6b1e9d3c7a52',
  type: 'contact.updated',
  occurredAt: '2026-03-02T16:05:12.345Z',
  data: ContactSchema.examples[0],
}

export const EventSchema = Type.Object(
  {
    id: Type.String({ format: 'uuid', description: 'Id dell’evento: lo stesso in ogni consegna webhook' }),
    type: EventTypeRef,
    occurredAt: Timestamp({ description: 'Quando è avvenuto il cambiamento' }),
    data: Type.Union([Type.Ref(ContactSchema), Type.Ref(ErasedContactSchema)], {
      description:
        'Il contatto come lo restituiva GET subito dopo il cambiamento; se il contatto è stato poi cancellato su ' +
        'richiesta dell’interessato (e in contact.erased), solo il suo id con `erased: true`',
    }),
  },
  { $id: 'Event', additionalProperties: false, examples: [EXAMPLE_EVENT] },
)
export type Event = Static<typeof EventSchema>

/**
 * How many events a page filtered by type reads at most: the events of other types are read to be left out, and
 * a tenant can hold a million of them after its position (an import, followed for its updates).
 */
export const FEED_WINDOW = 1000

export const EventPageSchema = Type.Object(
  {
    data: Type.Array(Type.Ref(EventSchema), { description: 'Eventi dal più vecchio' }),
    next: Type.String({
      pattern: POSITION,
      description: 'Posizione da passare come `after` per continuare; mai null: senza eventi nuovi è quella inviata',
      examples: ['1042'],
    }),
    hasMore: Type.Boolean({
      description: `true se dopo \`next\` ci sono già altri eventi da leggere; con \`type\`, una pagina legge al più ${new Intl.NumberFormat('it-IT').format(FEED_WINDOW)} eventi e può tornare con meno di \`limit\` eventi, anche nessuno, e \`hasMore\` true`,
    }),
  },
  {
    $id: 'EventPage',
    additionalProperties: false,
    examples: [{ data: [EXAMPLE_EVENT], next: '1042', hasMore: false }],
  },
)
export type EventPage = Static<typeof EventPageSchema>

export const EventListQuerySchema = Type.Object(
  {
    // No example: the reference page would fill it in and start at an arbitrary position.
    after: Type.Optional(
      Type.String({
        pattern: POSITION,
        description:
          'Posizione di una risposta precedente (`next`), oppure `now` per la fine attuale; omesso: dal più vecchio evento conservato',
      }),
    ),
    limit: Type.Integer({
      minimum: 1,
      maximum: LIMITS.pageSize,
      default: 100,
      description: 'Eventi per pagina; solo cifre decimali',
      examples: [100],
    }),
    type: Type.Optional(EventTypeRef),
  },
  { additionalProperties: false },
)
export type EventListQuery = Static<typeof EventListQuerySchema>

/** The schemas routes refer to by $id: the document's components. */
export const eventSchemas = [EventTypeSchema, EventSchema, EventPageSchema]
