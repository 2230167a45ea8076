// What the command groups share: the I/O the CLI writes to, a command's outcome and how it is printed, the table
// layout of the text output, and the parsers that check arguments while Commander reads the command line (so a
// bad argument is refused before the database is opened).
import { type Command, InvalidArgumentError } from 'commander'
import { KEY_LABEL_MAX_LENGTH, parseScopes } from '../admin/api-keys.js'
import { assertUuid, cleanText } from '../admin/guards.js'
import { cleanTagName } from '../admin/tags.js'
import { TENANT_NAME_MAX_LENGTH } from '../admin/tenants.js'
import type { Database, DatabaseOptions } from '../db/database.js'

export interface CliIo {
  stdout: { write(text: string): unknown }
  /** A TTY stderr gets a progress bar during `seed`. */
  stderr: { write(text: string): unknown }
  env: Record<string, string | undefined>
  /** Replaces openDatabase (tests hand in their own database). */
  openDatabase?: (options: DatabaseOptions) => Promise<Database>
}

export interface JsonOption {
  json?: boolean
}

/** What a command prints: `json` with --json, `text` otherwise. */
export interface Outcome {
  json: object
  text: string
  /** A change that running instances must see before their key cache expires (revocation, tenant status). */
  authChange?: string
}

/** A command that does something, as opposed to a group of commands: it takes --json. */
export function actionCommand(parent: Command, name: string, description: string): Command {
  return parent.command(name).description(description).option('--json', 'print one JSON object on stdout')
}

export function printOutcome(io: CliIo, options: JsonOption, outcome: Outcome): void {
  io.stdout.write(options.json ? `${JSON.stringify(outcome.json)}\n` : outcome.text)
}

export function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error)
}

/** Left-aligned columns separated by two spaces; `empty` when there is no row. */
export function table(headers: string[], rows: string[][], empty: string): string {
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
export function argumentParser<T>(parse: (value: string) => T): (value: string) => T {
  return (value) => {
    try {
      return parse(value)
    } catch (error) {
      throw new InvalidArgumentError(messageOf(error))
    }
  }
}

export const uuid = (what: string) => argumentParser((value) => assertUuid(value, what))
export const tenantName = argumentParser((value) => cleanText(value, 'Tenant name', TENANT_NAME_MAX_LENGTH))
export const keyLabel = argumentParser((value) => cleanText(value, 'Key label', KEY_LABEL_MAX_LENGTH, 0))
export const scopeList = argumentParser(parseScopes)
const tagName = argumentParser(cleanTagName)

/** Variadic arguments are parsed one value at a time, accumulating into the previous result. */
export function tagNames(value: string, previous: string[] | undefined): string[] {
  return [...(previous ?? []), tagName(value)]
}

export function countUpTo(max: number): (value: string) => number {
  return (value) => {
    if (!/^[1-9][0-9]*$/.test(value) || Number(value) > max) {
      throw new InvalidArgumentError(`Expected an integer from 1 to ${max}.`)
    }
    return Number(value)
  }
}
