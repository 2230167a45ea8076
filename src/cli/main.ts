// The operators' command line (`rubrica`): migrations, tenants, API keys, tags, archiving and fake data.
// It opens the database from the same configuration as the server. With --json every command prints exactly
// one JSON object on stdout; errors go to stderr with exit code 1. runCli returns the exit code instead of
// exiting, so tests run it in-process.
import { WriteStream } from 'node:tty'
import cliProgress from 'cli-progress'
import { Argument, Command, CommanderError, InvalidArgumentError, Option } from 'commander'
import { announceAuthChange } from '../admin/announce.js'
import { createApiKey, KEY_LABEL_MAX_LENGTH, listApiKeys, parseScopes, revokeApiKey } from '../admin/api-keys.js'
import { archiveContact, unarchiveContact } from '../admin/contacts.js'
import { AdminError, assertUuid, cleanText } from '../admin/guards.js'
import { SEED_LIMITS, seed } from '../admin/seed.js'
import { cleanTagName, createTags, listTags, TAG_NAME_MAX_LENGTH } from '../admin/tags.js'
import {
  createTenant,
  listTenants,
  setTenantStatus,
  TENANT_NAME_MAX_LENGTH,
  TENANT_STATUSES,
} from '../admin/tenants.js'
import { ROLES, type Scope } from '../api-key.js'
import { loadConfig } from '../config.js'
import { type Database, type DatabaseOptions, databaseOptionsFrom, openDatabase } from '../db/database.js'
import { deployMigrations } from '../db/migrate.js'
import type { Role, TenantStatus } from '../generated/prisma/enums.js'

export interface CliIo {
  stdout: { write(text: string): unknown }
  /** A TTY stderr gets a progress bar during `seed`. */
  stderr: { write(text: string): unknown }
  env: Record<string, string | undefined>
  /** Replaces openDatabase (tests hand in their own database). */
  openDatabase?: (options: DatabaseOptions) => Promise<Database>
}

interface JsonOption {
  json?: boolean
}

/** What a command prints: `json` with --json, `text` otherwise. */
interface Outcome {
  json: object
  text: string
  /** A change that running instances must see before their key cache expires (revocation, tenant status). */
  authChange?: string
}

/** The work a command line asks for, run only once the whole command line has been parsed and checked. */
interface Task {
  json: boolean
  /** `db deploy` migrates by itself; every other command first brings an embedded database up to date. */
  deploys: boolean
  run(database: Database): Promise<Outcome>
}

export async function runCli(
  argv: string[],
  io: CliIo = { stdout: process.stdout, stderr: process.stderr, env: process.env },
): Promise<number> {
  let task: Task | undefined
  const program = buildProgram(io, (chosen) => {
    task = chosen
  })
  try {
    await program.parseAsync(argv, { from: 'user' })
  } catch (error) {
    // Commander has already printed its message (or the help) through configureOutput.
    if (error instanceof CommanderError) return error.exitCode
    throw error
  }
  return task ? execute(task, io) : 0
}

async function execute(task: Task, io: CliIo): Promise<number> {
  let database: Database | undefined
  try {
    const config = loadConfigFor(io.env)
    database = await (io.openDatabase ?? openDatabase)(databaseOptionsFrom(config))
    // The embedded database belongs to whichever process holds it: like the server, bring it up to date first.
    if (database.kind === 'pglite' && !task.deploys) {
      const { applied } = await database.withSession((session) => deployMigrations(session))
      if (applied.length > 0 && !task.json) io.stderr.write(`Applied migrations: ${applied.join(', ')}\n`)
    }
    const outcome = await task.run(database)
    io.stdout.write(task.json ? `${JSON.stringify(outcome.json)}\n` : outcome.text)
    if (outcome.authChange && config.REDIS_URL && !(await announceAuthChange(config.REDIS_URL, outcome.authChange))) {
      io.stderr.write(
        `warning: could not announce the change on Redis; instances apply it within AUTH_CACHE_TTL_MS (${config.AUTH_CACHE_TTL_MS} ms).\n`,
      )
    }
    return 0
  } catch (error) {
    io.stderr.write(`error: ${error instanceof Error ? error.message : String(error)}\n`)
    return 1
  } finally {
    await database?.close()
  }
}

function loadConfigFor(env: CliIo['env']) {
  try {
    return loadConfig(env)
  } catch (error) {
    throw new AdminError(`invalid configuration: ${error instanceof Error ? error.message : String(error)}`)
  }
}

function buildProgram(io: CliIo, choose: (task: Task) => void): Command {
  const program = new Command('rubrica')
    .description('Administration of the rubrica contacts service')
    .exitOverride()
    .configureOutput({ writeOut: (text) => io.stdout.write(text), writeErr: (text) => io.stderr.write(text) })
    .showHelpAfterError('(run with --help for usage)')

  /** A command that does something: it takes --json and, once parsed, hands its task to `choose`. */
  const leaf = (parent: Command, name: string, description: string) =>
    parent.command(name).description(description).option('--json', 'print one JSON object on stdout')
  const task = (options: JsonOption, run: Task['run'], deploys = false) =>
    choose({ json: options.json === true, deploys, run })

  const db = program.command('db').description('Database schema')
  leaf(db, 'deploy', 'Apply pending migrations').action((options: JsonOption) =>
    task(options, (database) => deploy(database), true),
  )

  const tenant = program.command('tenant').description('Tenants (organisations)')
  leaf(tenant, 'create', 'Create a tenant')
    .requiredOption('--name <name>', `tenant name, 1-${TENANT_NAME_MAX_LENGTH} characters`, tenantName)
    .action((options: JsonOption & { name: string }) =>
      task(options, async ({ prisma }) => {
        const created = await createTenant(prisma, options.name)
        return { json: created, text: `Created tenant ${created.id} "${created.name}" (${created.status}).\n` }
      }),
    )
  leaf(tenant, 'list', 'List tenants').action((options: JsonOption) =>
    task(options, async ({ prisma }) => {
      const tenants = await listTenants(prisma)
      const rows = tenants.map((t) => [t.id, t.status, t.createdAt.toISOString(), t.name])
      return { json: { tenants }, text: table(['ID', 'STATUS', 'CREATED', 'NAME'], rows, 'No tenants.') }
    }),
  )
  leaf(tenant, 'status', 'Set the status of a tenant')
    .argument('<tenantId>', 'tenant id', uuid('Tenant id'))
    .addArgument(new Argument('<status>', 'new status').choices(TENANT_STATUSES))
    .action((tenantId: string, status: TenantStatus, options: JsonOption) =>
      task(options, async ({ prisma }) => {
        const updated = await setTenantStatus(prisma, tenantId, status)
        return {
          json: updated,
          text: `Tenant ${updated.id} "${updated.name}" is now ${updated.status}.\n`,
          authChange: `tenant ${updated.id} ${updated.status}`,
        }
      }),
    )

  const key = program.command('key').description('API keys')
  leaf(key, 'create', 'Create an API key (the key is shown only this once)')
    .requiredOption('--tenant <tenantId>', 'tenant id', uuid('Tenant id'))
    .addOption(new Option('--role <role>', 'role of the key').choices(ROLES).makeOptionMandatory())
    .requiredOption('--scopes <list>', 'comma-separated scopes, e.g. contacts:read,contacts:write', scopes)
    .option('--label <text>', `label for operators, up to ${KEY_LABEL_MAX_LENGTH} characters`, keyLabel)
    .action((options: JsonOption & { tenant: string; role: Role; scopes: Scope[]; label?: string }) =>
      task(options, async ({ prisma }) => {
        const issued = await createApiKey(prisma, {
          tenantId: options.tenant,
          role: options.role,
          scopes: options.scopes,
          label: options.label,
        })
        return {
          json: issued,
          text:
            `Created ${issued.role} key ${issued.id} for tenant ${issued.tenantId} (${issued.scopes.join(', ')}).\n` +
            `Key, shown only now (store it safely):\n${issued.key}\n`,
        }
      }),
    )
  leaf(key, 'list', 'List the API keys of a tenant (hints only)')
    .requiredOption('--tenant <tenantId>', 'tenant id', uuid('Tenant id'))
    .action((options: JsonOption & { tenant: string }) =>
      task(options, async ({ prisma }) => {
        const keys = await listApiKeys(prisma, options.tenant)
        const rows = keys.map((k) => [
          k.id,
          `…${k.hint}`,
          k.role,
          k.scopes.join(','),
          k.createdAt.toISOString(),
          k.lastUsedAt?.toISOString() ?? '-',
          k.revokedAt?.toISOString() ?? '-',
          k.label,
        ])
        const headers = ['ID', 'HINT', 'ROLE', 'SCOPES', 'CREATED', 'LAST USED', 'REVOKED', 'LABEL']
        return { json: { keys }, text: table(headers, rows, 'No API keys.') }
      }),
    )
  leaf(key, 'revoke', 'Revoke an API key (idempotent)')
    .argument('<keyId>', 'key id', uuid('Key id'))
    .action((keyId: string, options: JsonOption) =>
      task(options, async ({ prisma }) => {
        const revoked = await revokeApiKey(prisma, keyId)
        const when = revoked.revokedAt?.toISOString()
        return {
          json: revoked,
          authChange: revoked.changed ? `key ${revoked.id} revoked` : undefined,
          text: revoked.changed
            ? `Revoked key ${revoked.id} (…${revoked.hint}).\n`
            : `Key ${revoked.id} (…${revoked.hint}) was already revoked on ${when}.\n`,
        }
      }),
    )

  const tag = program.command('tag').description('Tags of a tenant')
  leaf(tag, 'create', 'Create tags (names that exist already are reported, not an error)')
    .requiredOption('--tenant <tenantId>', 'tenant id', uuid('Tenant id'))
    .argument('<name...>', `tag names, 1-${TAG_NAME_MAX_LENGTH} characters each`, tagNames)
    .action((names: string[], options: JsonOption & { tenant: string }) =>
      task(options, async ({ prisma }) => {
        const result = await createTags(prisma, options.tenant, names)
        const list = (tags: { name: string }[]) => tags.map((t) => t.name).join(', ')
        const text =
          (result.created.length > 0 ? `Created: ${list(result.created)}.\n` : '') +
          (result.existing.length > 0 ? `Already present: ${list(result.existing)}.\n` : '')
        return { json: result, text }
      }),
    )
  leaf(tag, 'list', 'List the tags of a tenant')
    .requiredOption('--tenant <tenantId>', 'tenant id', uuid('Tenant id'))
    .action((options: JsonOption & { tenant: string }) =>
      task(options, async ({ prisma }) => {
        const tags = await listTags(prisma, options.tenant)
        const rows = tags.map((t) => [t.id, t.createdAt.toISOString(), t.name])
        return { json: { tags }, text: table(['ID', 'CREATED', 'NAME'], rows, 'No tags.') }
      }),
    )

  const contact = program.command('contact').description('Contacts')
  for (const archive of [true, false]) {
    const verb = archive ? 'archive' : 'unarchive'
    leaf(contact, verb, `${archive ? 'Archive' : 'Restore'} a contact (idempotent)`)
      .requiredOption('--tenant <tenantId>', 'tenant id', uuid('Tenant id'))
      .argument('<contactId>', 'contact id', uuid('Contact id'))
      .action((contactId: string, options: JsonOption & { tenant: string }) =>
        task(options, async ({ prisma }) => {
          const result = await (archive ? archiveContact : unarchiveContact)(prisma, options.tenant, contactId)
          const state = archive ? `archived since ${result.archivedAt?.toISOString()}` : 'not archived'
          const text = `Contact ${result.id} ${result.changed ? 'is now' : 'already was'} ${state}.\n`
          return { json: result, text }
        }),
      )
  }

  leaf(program, 'seed', 'Fill the database with fake tenants and contacts (for demos and load tests)')
    .requiredOption('--tenants <n>', `number of tenants, 1-${SEED_LIMITS.tenants}`, countUpTo(SEED_LIMITS.tenants))
    .requiredOption(
      '--contacts <m>',
      `contacts per tenant, 1-${SEED_LIMITS.contactsPerTenant}`,
      countUpTo(SEED_LIMITS.contactsPerTenant),
    )
    .action((options: JsonOption & { tenants: number; contacts: number }) =>
      task(options, (database) => runSeed(database, options, io)),
    )

  return program
}

async function deploy(database: Database): Promise<Outcome> {
  const result = await database.withSession((session) => deployMigrations(session))
  const text =
    result.applied.length > 0
      ? `Applied ${result.applied.length} migration(s): ${result.applied.join(', ')}.\n`
      : `No pending migrations (${result.alreadyApplied} already applied).\n`
  return { json: result, text }
}

async function runSeed(
  database: Database,
  options: JsonOption & { tenants: number; contacts: number },
  io: CliIo,
): Promise<Outcome> {
  const started = Date.now()
  // The bar is for people watching a terminal; it never touches stdout, which --json keeps for the result.
  const bar =
    !options.json && io.stderr instanceof WriteStream && io.stderr.isTTY
      ? new cliProgress.SingleBar({ stream: io.stderr, etaBuffer: 20 }, cliProgress.Presets.shades_classic)
      : undefined
  bar?.start(options.tenants * options.contacts, 0)
  try {
    const result = await seed(database.prisma, {
      tenants: options.tenants,
      contacts: options.contacts,
      onProgress: (done) => bar?.update(done),
    })
    const seconds = ((Date.now() - started) / 1000).toFixed(1)
    const rows = result.tenants.map((t) => [t.id, t.key, t.name])
    const text =
      `Seeded ${result.tenants.length} tenant(s) with ${options.contacts} contacts each in ${seconds} s.\n` +
      table(['TENANT', 'ADMIN KEY (read/write, shown only now)', 'NAME'], rows, '')
    return { json: result, text }
  } finally {
    bar?.stop()
  }
}

/** Left-aligned columns separated by two spaces; `empty` when there is no row. */
function table(headers: string[], rows: string[][], empty: string): string {
  if (rows.length === 0) return `${empty}\n`
  const widths = headers.map((header, i) => Math.max(header.length, ...rows.map((row) => (row[i] ?? '').length)))
  const line = (cells: string[]) =>
    cells
      .map((cell, i) => (i === cells.length - 1 ? cell : cell.padEnd(widths[i] ?? 0)))
      .join('  ')
      .concat('\n')
  return [headers, ...rows].map(line).join('')
}

/** Commander reports InvalidArgumentError as "option '--x <y>' argument 'z' is invalid. <message>". */
function argumentParser<T>(parse: (value: string) => T): (value: string) => T {
  return (value) => {
    try {
      return parse(value)
    } catch (error) {
      throw new InvalidArgumentError(error instanceof Error ? error.message : String(error))
    }
  }
}

const uuid = (what: string) => argumentParser((value) => assertUuid(value, what))
const tenantName = argumentParser((value) => cleanText(value, 'Tenant name', TENANT_NAME_MAX_LENGTH))
const keyLabel = argumentParser((value) => cleanText(value, 'Key label', KEY_LABEL_MAX_LENGTH, 0))
const scopes = argumentParser(parseScopes)
const tagName = argumentParser(cleanTagName)

/** Variadic arguments are parsed one value at a time, accumulating into the previous result. */
function tagNames(value: string, previous: string[] | undefined): string[] {
  return [...(previous ?? []), tagName(value)]
}

function countUpTo(max: number): (value: string) => number {
  return (value) => {
    if (!/^[1-9][0-9]*$/.test(value) || Number(value) > max) {
      throw new InvalidArgumentError(`Expected an integer from 1 to ${max}.`)
    }
    return Number(value)
  }
}
