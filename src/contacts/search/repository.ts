// Searching a tenant's contacts: a page of a search in its order, its `next`, and, when asked, how many it finds.
// Every statement names the tenant (src/contacts/search/sql.ts). A walk by -updatedAt ends with the contacts
// that changed while it went on, which moved before it (docs/api-search.md, "Walking every page").
import fp from 'fastify-plugin'
import type { Database } from '../../db/database.js'
import { REPLANNED } from '../../db/statement-name.js'
import { type ApiError, errors } from '../../errors/catalogue.js'
import { problem } from '../../errors/validation-messages.js'
import type { CompileValidator, Validator } from '../../plugins/app/validation.js'
import type { CustomFieldRegistry } from '../custom-fields/registry.js'
import { CUSTOM_FIELD_PREFIX, CUSTOM_OPERATORS, customValueSchema } from '../custom-fields/search.js'
import type { Contact } from '../model.js'
import { SearchAdmission, WAIT_MS } from './admission.js'
import { type Cursor, decodeCursor, encodeCursor, walkSnapshot } from './cursor.js'
import { type Filter, SEARCH_LIMITS, type SearchPage, type SearchRequest, type Sort } from './model.js'
import {
  changedStatement,
  countStatement,
  ledByTags,
  ledByWords,
  type Position,
  pageStatement,
  rowsFor,
  type SearchSpec,
  type Statement,
  tagsPageStatement,
  type Walk,
  wordsPageStatement,
  wordsReadAgainStatement,
} from './sql.js'

/**
 * A contact as a page's statement answers it: with its position's instants, and a walk's on a first page (the
 * answer's serializer leaves them out).
 */
export type PageRow = Contact & {
  positionCreated: string
  positionUpdated: string
  walkBound?: string
  walkSnapshot?: string
  walkNode?: string
}

const searchBusy = () => errors.searchBusy(Math.ceil(WAIT_MS / 1000))

/** SQLSTATE of a statement cancelled by statement_timeout. */
const QUERY_CANCELED = '57014'

export class SearchRepository {
  constructor(
    private readonly db: Database,
    /** How long a count may take before the answer goes without it. */
    private readonly countTimeoutMs: number,
    /** Whose turn it is to run a search planned with its values (those that may read many contacts). */
    private readonly admission: SearchAdmission,
    /** The tenants' own fields, which filters may name (`fields.<name>`). */
    private readonly fields: CustomFieldRegistry,
    private readonly compile: CompileValidator,
  ) {}

  /** Validators of the values of filters on the tenant's own fields, by field, type and operator. */
  private readonly customValues = new Map<string, Validator>()

  /**
   * The groups with each filter on a field of the tenant's own given its definition, or the error that names the
   * first such filter at fault: a field the tenant does not define, an operator its type lacks, a value of another
   * type.
   */
  private async withDefinitions(tenantId: string, groups: SearchSpec['groups']): Promise<SearchSpec['groups']> {
    if (!groups.some((group) => group.some((filter) => filter.field.startsWith(CUSTOM_FIELD_PREFIX)))) return groups
    const fields = await this.fields.of(tenantId)
    const wrong = (g: number, f: number, what: string): ApiError =>
      errors.invalidInput('invalid_body', `Il filtro "filterGroups[${g}].filters[${f}]" non è valido: ${what}.`)
    return groups.map((group, g) =>
      group.map((filter, f) => {
        if (!filter.field.startsWith(CUSTOM_FIELD_PREFIX)) return filter
        const name = filter.field.slice(CUSTOM_FIELD_PREFIX.length)
        const definition = fields.byName.get(name)
        if (!definition) {
          const known = fields.definitions.map((d) => d.name).join(', ') || 'nessuno'
          throw wrong(g, f, `il campo proprio "${name}" non esiste; i campi propri sono: ${known}`)
        }
        const ops = CUSTOM_OPERATORS[definition.type]
        if (!ops.includes(filter.op)) {
          throw wrong(
            g,
            f,
            `l’operatore "${filter.op}" non si applica a "${filter.field}"; i suoi operatori sono: ${ops.join(', ')}`,
          )
        }
        const schema = customValueSchema(definition, filter.op, SEARCH_LIMITS.values)
        if (schema === undefined) {
          if ('value' in filter) throw wrong(g, f, `con "${filter.op}" non va indicato "value"`)
          return { ...filter, definition }
        }
        if (!('value' in filter))
          throw wrong(g, f, `manca "value", il valore con cui "${filter.op}" confronta "${filter.field}"`)
        const key = JSON.stringify([definition, filter.op])
        let validate = this.customValues.get(key)
        if (!validate) {
          validate = this.compile({ schema, httpPart: 'body' })
          if (this.customValues.size > 10_000) this.customValues.clear()
          this.customValues.set(key, validate)
        }
        if (!validate(filter.value)) {
          const error = validate.errors?.[0]
          throw wrong(g, f, `"value" non è valido per un campo ${definition.type}${error ? `: ${problem(error)}` : ''}`)
        }
        return { ...filter, definition }
      }),
    )
  }

  /** A page's statement, in its turn when it may read many contacts (its plan depends on its values). */
  run(tenantId: string, statement: Statement): Promise<PageRow[]> {
    const read = () => this.db.query<PageRow>(statement.name, statement.sql, [tenantId, ...statement.params])
    return statement.name === REPLANNED ? this.admission.inTurn(tenantId, read, searchBusy) : read()
  }

  /**
   * `rows` contacts of the search in its order, after `after`: a search of one word through contact_words first; a
   * page it leaves short is the last, or, when the word is rare under its first three characters, read again as
   * PostgreSQL plans it.
   */
  async page(tenantId: string, spec: SearchSpec, rows: number, after?: Position, walkStart = false) {
    if (ledByWords(spec)) {
      const page = await this.run(tenantId, wordsPageStatement(spec, rows, after))
      if (page.length === rows) return page
      const again = wordsReadAgainStatement(spec, after)
      const [check] = await this.db.query<{ readAgain: boolean }>(again.name, again.sql, [tenantId, ...again.params])
      if (check?.readAgain === false) return page
    } else if (ledByTags(spec)) {
      const page = await this.run(tenantId, tagsPageStatement(spec, rows, after))
      if (page.length === rows) return page
    }
    return this.run(tenantId, pageStatement(spec, rows, after, walkStart))
  }

  /** A page of the search and the cursor of the next (null on the last), as the search's answer has them. */
  async search(tenantId: string, request: SearchRequest): Promise<SearchPage> {
    const spec: SearchSpec = {
      groups: await this.withDefinitions(
        tenantId,
        (request.filterGroups ?? []).map((group) => group.filters as Filter[]),
      ),
      ...(request.query !== undefined && { query: request.query }),
      includeArchived: request.includeArchived ?? false,
      sort: request.sort ?? '-createdAt',
    }
    const limit = request.limit ?? 50
    const cursor = request.cursor === undefined ? undefined : decodeCursor(request.cursor, spec.sort)
    const { rows, next } =
      spec.sort === '-updatedAt'
        ? await this.walkByUpdated(tenantId, spec, limit, cursor)
        : await this.walk(tenantId, spec, limit, cursor)
    const total = request.count ? await this.count(tenantId, spec) : undefined
    return { data: rows, next: next && encodeCursor(next), ...(total !== undefined && { total }) }
  }

  /** A page in an order no change moves a contact back in: createdAt's, or updatedAt's forwards. */
  private async walk(tenantId: string, spec: SearchSpec, limit: number, cursor?: Cursor) {
    const rows = await this.page(tenantId, spec, rowsFor(limit), cursor?.at)
    return {
      rows: rows.slice(0, limit),
      next: rows.length > limit ? { sort: spec.sort, at: positionOf(rows[limit - 1], spec.sort) } : null,
    }
  }

  /**
   * A page by -updatedAt. The first page notes the walk; when the walk has passed every contact, its last pages are
   * the contacts changed since it began, which moved before it, oldest change first. A walk of one page is one
   * snapshot and needs none.
   */
  private async walkByUpdated(tenantId: string, spec: SearchSpec, limit: number, cursor?: Cursor) {
    if (cursor === undefined) {
      const page = await this.page(tenantId, spec, rowsFor(limit), undefined, true)
      const first = page[0]
      if (page.length <= limit || first === undefined) return { rows: page.slice(0, limit), next: null }
      const walk: Walk = {
        bound: first.walkBound as string,
        snapshot: walkSnapshot(first.walkSnapshot as string),
        node: first.walkNode as string,
      }
      return { rows: page.slice(0, limit), next: { sort: spec.sort, at: positionOf(page[limit - 1], spec.sort), walk } }
    }
    const walk = cursor.walk as Walk
    let page: PageRow[] = []
    if (!cursor.changed) {
      page = await this.page(tenantId, spec, rowsFor(limit), cursor.at)
      if (page.length > limit)
        return { rows: page.slice(0, limit), next: { ...cursor, at: positionOf(page[limit - 1], spec.sort) } }
    }
    // Every contact passed: the rest of the page, and the next ones, are those changed since the walk began.
    const room = limit - page.length
    const from = cursor.changed ? cursor.at : undefined
    const changed = await this.run(tenantId, changedStatement(spec, room + 1, walk, from))
    const kept = changed.slice(0, room)
    const last = kept.at(-1)
    const shown = new Set(page.map((row) => row.id))
    return {
      rows: [...page, ...kept.filter((row) => !shown.has(row.id))],
      // More changed contacts follow: from the last one kept, or from where this page began when it kept none.
      next:
        changed.length > room
          ? {
              sort: spec.sort,
              walk,
              changed: true,
              ...(last ? { at: positionOf(last, spec.sort) } : from && { at: from }),
            }
          : null,
    }
  }

  /**
   * How many contacts the search finds, or undefined when counting them takes longer than the count's timeout
   * (the answer then goes without it rather than late).
   */
  async count(tenantId: string, spec: SearchSpec): Promise<number | undefined> {
    const statement = countStatement(spec)
    try {
      return await this.admission.inTurn(
        tenantId,
        () =>
          this.db.transaction(async (query) => {
            await query('search_count_timeout', "SELECT set_config('statement_timeout', $1, true)", [
              String(this.countTimeoutMs),
            ])
            const [row] = await query<{ total: number }>(statement.name, statement.sql, [tenantId, ...statement.params])
            return row?.total ?? 0
          }),
        searchBusy,
      )
    } catch (error) {
      if ((error as { code?: unknown }).code === QUERY_CANCELED) return undefined
      throw error
    }
  }
}

/** Where a page in `sort`'s order goes on from after this contact. */
function positionOf(row: PageRow | undefined, sort: Sort): Position {
  const { positionCreated, positionUpdated } = row as PageRow
  return sort === 'createdAt' || sort === '-createdAt'
    ? { created: positionCreated }
    : { created: positionCreated, updated: positionUpdated }
}

declare module 'fastify' {
  interface FastifyInstance {
    contactSearch: SearchRepository
  }
}

export const searchRepository = fp(
  async function searchRepository(fastify) {
    const { SEARCH_COUNT_TIMEOUT_MS, DATABASE_POOL_SIZE } = fastify.config
    const admission = new SearchAdmission(Math.max(1, DATABASE_POOL_SIZE - 1))
    fastify.decorate(
      'contactSearch',
      new SearchRepository(
        fastify.db,
        SEARCH_COUNT_TIMEOUT_MS,
        admission,
        fastify.customFieldRegistry,
        fastify.compileValidator,
      ),
    )
  },
  { name: 'search-repository', dependencies: ['database', 'custom-fields'] },
)
