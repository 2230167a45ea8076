// Generators of hostile requests for test/fuzz/hostile-input.test.ts: Authorization headers, content types,
// path ids, query strings and bodies, each from a mix of valid values, values docs/api.md rules out, and values
// it leaves open. Bodies and values are produced as raw JSON text, so duplicate keys, huge number literals,
// escapes of lone surrogates, deep nesting and `__proto__` keys reach the server exactly as written.
import fc from 'fast-check'
import type { QueryParam, Verdict } from './oracle.ts'
import { CREATE_FIELDS, EMAIL_STATUSES, STAGES, UPDATE_FIELDS } from './support.ts'

const js = (value: unknown) => JSON.stringify(value)

/** Characters a client can put in a header value: visible ASCII, space, tab and Latin-1. */
const latin1 = fc
  .oneof(fc.integer({ min: 0x20, max: 0x7e }), fc.integer({ min: 0xa0, max: 0xff }), fc.constant(9))
  .map((code) => String.fromCharCode(code))

export function hex(length: number): fc.Arbitrary<string> {
  return fc.string({ unit: fc.constantFrom(...'0123456789abcdef'), minLength: length, maxLength: length })
}

export interface AuthKeys {
  admin: string
  editor: string
  viewer: string
  readOnly: string
  writeOnly: string
  otherTenant: string
  suspended: string
  closed: string
  revoked: string
}

/** Authorization header values (undefined: no header). */
export function authorization(keys: AuthKeys): fc.Arbitrary<string | undefined> {
  const bearer = (key: string) =>
    fc
      .record({
        scheme: fc.constantFrom('Bearer', 'bearer', 'BEARER', 'bEaReR'),
        spaces: fc.integer({ min: 1, max: 3 }),
        trailing: fc.integer({ min: 0, max: 2 }),
        upper: fc.boolean(),
      })
      .map(
        ({ scheme, spaces, trailing, upper }) =>
          `${scheme}${' '.repeat(spaces)}${upper ? `svc_${key.slice(4).toUpperCase()}` : key}${' '.repeat(trailing)}`,
      )
  const key = keys.admin
  const garbage = fc.oneof(
    fc.string({ unit: latin1, maxLength: 80 }),
    fc
      .tuple(fc.constantFrom('Bearer ', 'bearer ', 'Bearer svc_', ''), fc.string({ unit: latin1, maxLength: 60 }))
      .map(([a, b]) => a + b),
    fc.constantFrom(
      'Bearer',
      'Bearer ',
      'Basic dXNlcjpwYXNz',
      `Token ${key}`,
      key,
      `Bearer\t${key}`,
      `Bearer ${key} x`,
      `Bearer ${key}x`,
      `Bearer ${key}\u00a0`,
      `Bearer ${key.slice(0, -1)}`,
      `Bearer svc_${'g'.repeat(48)}`,
      `Bearer SVC_${key.slice(4)}`,
      `Bearer svc-${key.slice(4)}`,
      `Bearer ${key},Bearer ${key}`,
      '\u00a0',
    ),
    hex(47).map((h) => `Bearer svc_${h}`),
    hex(49).map((h) => `Bearer svc_${h}`),
  )
  return fc.oneof(
    { weight: 12, arbitrary: bearer(keys.admin) },
    { weight: 5, arbitrary: bearer(keys.editor) },
    { weight: 2, arbitrary: bearer(keys.viewer) },
    { weight: 2, arbitrary: bearer(keys.readOnly) },
    { weight: 2, arbitrary: bearer(keys.writeOnly) },
    { weight: 3, arbitrary: bearer(keys.otherTenant) },
    { weight: 1, arbitrary: bearer(keys.suspended) },
    { weight: 1, arbitrary: bearer(keys.closed) },
    { weight: 1, arbitrary: bearer(keys.revoked) },
    { weight: 1, arbitrary: hex(48).map((h) => `Bearer svc_${h}`) },
    { weight: 2, arbitrary: fc.constantFrom(undefined, '', ' ', '\t') },
    { weight: 4, arbitrary: garbage },
  )
}

export function contentType(): fc.Arbitrary<string | undefined> {
  return fc.oneof(
    { weight: 14, arbitrary: fc.constant('application/json') },
    { weight: 2, arbitrary: fc.constantFrom('application/json; charset=utf-8', 'application/json;charset=utf-8') },
    { weight: 1, arbitrary: fc.constant(undefined) },
    {
      weight: 1,
      arbitrary: fc.constantFrom(
        'text/plain',
        'application/x-www-form-urlencoded',
        'multipart/form-data; boundary=x',
        'application/xml',
      ),
    },
    {
      weight: 1,
      arbitrary: fc.constantFrom(
        'APPLICATION/JSON',
        'application/json; charset=latin1',
        'application/json; charset=utf-16',
        'application/vnd.api+json',
        'application/jsonx',
        'json',
        '',
        ';',
        'application/json, text/plain',
        'text/json',
      ),
    },
    { weight: 1, arbitrary: fc.string({ unit: latin1, maxLength: 40 }) },
  )
}

// ---------------------------------------------------------------------------------------------------------------
// Text values

const EDGE_TEXT = [
  '',
  ' ',
  'Anna',
  "D'Angelo",
  'Zoë',
  '李小龍',
  '😀',
  '👩‍👩‍👧‍👦',
  'e\u0301',
  'x\u0000y',
  '\u007f',
  '\u0085',
  '\u009f',
  '\u200b',
  '\ufeff',
  '\u2028',
  'a\nb',
  'a\tb',
  '\\',
  '"',
  '<script>alert(1)</script>',
  "'; DROP TABLE contacts;--",
  `$${'{'}7*7}`,
  '{{7*7}}',
  '%s%n%x',
  'null',
  'undefined',
  '__proto__',
  'constructor',
  '\ud83d\ude00',
  '\ufffd',
]

const loneSurrogate = fc.integer({ min: 0xd800, max: 0xdfff }).map((c) => String.fromCharCode(c))

/** Strings around the length limit `max`, in characters of different widths. */
function boundary(max: number): fc.Arbitrary<string> {
  return fc
    .tuple(fc.constantFrom(max - 1, max, max + 1), fc.constantFrom('a', 'é', '😀', '👩‍👩‍👧‍👦', 'e\u0301'))
    .map(([n, unit]) => unit.repeat(Math.max(0, n)))
}

export function text(max: number): fc.Arbitrary<string> {
  return fc.oneof(
    { weight: 5, arbitrary: fc.string({ unit: 'grapheme', minLength: 1, maxLength: Math.min(max, 30) }) },
    { weight: 2, arbitrary: fc.string({ unit: 'binary', maxLength: Math.min(max, 30) }) },
    { weight: 2, arbitrary: fc.constantFrom(...EDGE_TEXT) },
    {
      weight: 1,
      arbitrary: fc
        .tuple(fc.string({ maxLength: 5 }), loneSurrogate, fc.string({ maxLength: 5 }))
        .map(([a, s, b]) => a + s + b),
    },
    { weight: 1, arbitrary: boundary(max) },
  )
}

/** JSON text of a string, either escaped by JSON.stringify or with the characters written raw where legal. */
function stringText(value: string): fc.Arbitrary<string> {
  const unicodeEscape = (c: string) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`
  const raw = `"${[...value].map((c) => (c === '"' || c === '\\' || c.charCodeAt(0) < 0x20 ? unicodeEscape(c) : c)).join('')}"`
  return fc.constantFrom(js(value), raw)
}

/** JSON texts of values of the wrong type, including number literals no double can hold. */
export const wrongType: fc.Arbitrary<string> = fc.oneof(
  fc.integer().map(js),
  fc.double({ noNaN: true, noDefaultInfinity: true }).map(js),
  fc.boolean().map(js),
  fc.constant('null'),
  fc.array(fc.jsonValue({ maxDepth: 2 }), { maxLength: 3 }).map(js),
  fc.dictionary(fc.string({ maxLength: 5 }), fc.jsonValue({ maxDepth: 1 }), { maxKeys: 3 }).map(js),
  fc.constantFrom('1e400', '-1e400', '123456789012345678901234567890', '1e-400', '-0', '0.1e1', '9007199254740993'),
  fc.integer({ min: 1, max: 3000 }).map((d) => '['.repeat(d) + ']'.repeat(d)),
)

function textValue(max: number): fc.Arbitrary<string> {
  return fc.oneof({ weight: 8, arbitrary: text(max).chain(stringText) }, { weight: 1, arbitrary: wrongType })
}

// ---------------------------------------------------------------------------------------------------------------
// Field values

/** An address of exactly `length` characters: a 64-character local part, labels of at most 63, ".io". */
export function longEmail(length: number): string {
  let remaining = length - 64 - 1 - 3
  const labels: string[] = []
  while (remaining > 0) {
    let size = Math.min(63, remaining)
    // Never leave exactly one character: it would have to be a dot followed by an empty label.
    if (remaining - size === 1) size -= 1
    labels.push('b'.repeat(size))
    remaining -= size
    if (remaining > 0) remaining -= 1
  }
  return `${'a'.repeat(64)}@${labels.join('.')}.io`
}

export function email(known: readonly string[]): fc.Arbitrary<string> {
  const plain = fc
    .tuple(
      fc.stringMatching(/^[a-z0-9](?:[a-z0-9._+-]{0,10}[a-z0-9])?$/),
      fc.constantFrom('x.io', 'example.it', 'posta.co.uk', 'a-b.org'),
    )
    .map(([local, domain]) => `${local}@${domain}`)
    .filter((e) => !e.includes('..'))
  return fc.oneof(
    { weight: 6, arbitrary: fc.mixedCase(plain) },
    { weight: 3, arbitrary: fc.mixedCase(fc.constantFrom(...known)) },
    { weight: 1, arbitrary: fc.constantFrom(253, 254, 255).map(longEmail) },
    { weight: 1, arbitrary: fc.emailAddress() },
    {
      weight: 1,
      arbitrary: fc.constantFrom(
        '',
        'a',
        '@',
        'a@',
        '@x.io',
        'a b@x.io',
        'a@x',
        'a@@x.io',
        'a@x..io',
        'a@-x.io',
        'ä@x.io',
        'a@x.io\u0000',
        ' a@x.io',
        'a@x.io ',
        '"a b"@x.io',
        'a@[127.0.0.1]',
        'a@localhost',
      ),
    },
    { weight: 1, arbitrary: text(40) },
  )
}

const phone = fc.oneof(
  { weight: 4, arbitrary: fc.stringMatching(/^\+?[0-9 ().-]{3,32}$/) },
  {
    weight: 1,
    arbitrary: fc.constantFrom(
      '12',
      '1'.repeat(32),
      '1'.repeat(33),
      'call me',
      '+',
      '++39 02',
      '39+',
      '٣٤٥٦',
      '１２３',
      '+39 02 1234 5678',
      '(02) 123-456',
      '123\n',
    ),
  },
  { weight: 1, arbitrary: text(40) },
)

function tagNames(own: readonly string[], foreign: readonly string[]): fc.Arbitrary<string[]> {
  const name = fc.oneof(
    { weight: 5, arbitrary: fc.constantFrom(...own) },
    { weight: 2, arbitrary: fc.constantFrom(...foreign) },
    { weight: 1, arbitrary: fc.constantFrom(...own).map((n) => n.toUpperCase()) },
    { weight: 2, arbitrary: text(64) },
  )
  return fc.oneof(
    { weight: 8, arbitrary: fc.array(name, { maxLength: 6 }) },
    {
      weight: 1,
      arbitrary: fc.integer({ min: 99, max: 102 }).map((n) => Array.from({ length: n }, (_, i) => `t${i}`)),
    },
    { weight: 1, arbitrary: fc.array(fc.constantFrom(...own), { minLength: 101, maxLength: 104 }) },
  )
}

const CREATE_KEYS = CREATE_FIELDS
const UPDATE_KEYS = UPDATE_FIELDS
const STRANGE_KEYS = [
  'emailStatus',
  'stage',
  'source',
  'id',
  'archivedAt',
  'createdAt',
  'updatedAt',
  'tenantId',
  'tenant_id',
  'email',
  'phone',
  'tags',
  'Email',
  'FIRSTNAME',
  'e-mail',
  '__proto__',
  'constructor',
  'prototype',
  'toString',
  'hasOwnProperty',
  'valueOf',
  '',
  ' email',
  'email ',
  'tags[]',
]

function unknownKey(allowed: readonly string[]): fc.Arbitrary<string> {
  return fc
    .oneof(fc.constantFrom(...STRANGE_KEYS), fc.string({ maxLength: 10 }))
    .filter((key) => !allowed.includes(key))
}

type Entry = [string, string]

/** A field present in `percent` % of the bodies (absent first, so that shrinking drops fields). */
function entry(key: string, value: fc.Arbitrary<string>, percent: number): fc.Arbitrary<Entry | null> {
  return fc.oneof(
    { weight: 100 - percent, arbitrary: fc.constant(null) },
    { weight: percent, arbitrary: value.map((v): Entry => [key, v]) },
  )
}

/** `{"k":v,…}` from entries (keys may repeat), with or without whitespace. */
function serialise(entries: (Entry | null)[], spaced: boolean): string {
  const present = entries.filter((e): e is Entry => e !== null)
  const sep = spaced ? ', ' : ','
  return `{${present.map(([k, v]) => `${js(k)}${spaced ? ': ' : ':'}${v}`).join(sep)}}`
}

function objectText(fields: fc.Arbitrary<Entry | null>[], allowed: readonly string[]): fc.Arbitrary<string> {
  const extras = fc.array(
    fc.tuple(unknownKey(allowed), fc.oneof(wrongType, text(20).map(js))).map((e): Entry => e),
    { maxLength: 2 },
  )
  const extraOrNone = fc.oneof({ weight: 6, arbitrary: fc.constant([] as Entry[]) }, { weight: 1, arbitrary: extras })
  return fc.tuple(fc.tuple(...fields), extraOrNone, fc.boolean()).chain(([known, extra, spaced]) => {
    const all: (Entry | null)[] = [...known, ...extra]
    const present = all.filter((e): e is Entry => e !== null)
    return fc
      .shuffledSubarray(present, { minLength: present.length, maxLength: present.length })
      .map((shuffled) => serialise(shuffled, spaced))
  })
}

/** Syntax damage to a JSON text. */
function mutate(textArb: fc.Arbitrary<string>): fc.Arbitrary<string> {
  return textArb.chain((t) =>
    fc.oneof(
      fc.nat({ max: Math.max(0, t.length - 1) }).map((i) => t.slice(0, i)),
      fc
        .tuple(
          fc.nat({ max: t.length }),
          fc.constantFrom('{', '}', '[', ']', '"', ',', ':', '\\', ' ', '\u0000', 'x', '\ud800', 'é', '\u2028'),
        )
        .map(([i, c]) => t.slice(0, i) + c + t.slice(i)),
      fc.nat({ max: Math.max(0, t.length - 1) }).map((i) => t.slice(0, i) + t.slice(i + 1)),
      fc.constant(`\ufeff${t}`),
      fc.constant(`${t.replace(/}$/, ',"email":"dup@x.io"}')}`),
      fc.constant(`${t.replace(/}$/, ',"firstName":"Dup"}')}`),
      fc.constant(` \n\t${t}\r\n `),
      fc.constant(`[${t}]`),
    ),
  )
}

const ROOT_ODDITIES = [
  '[]',
  'null',
  'true',
  '0',
  '"a@x.io"',
  '{}',
  '[{"email":"a@x.io"}]',
  '{"email":"a@x.io"}{"email":"b@x.io"}',
  '{"email":"a@x.io",}',
  "{'email':'a@x.io'}",
  '{"email":"a@x.io" /* c */}',
  '{email:"a@x.io"}',
  '{"email":"a@x.io"',
  'NaN',
  '{"email":NaN}',
  '{"email":Infinity}',
  '\u0000',
  '{"email":"\\ud800@x.io"}',
  '{"email":"a@x.io","firstName":"\\ud83d"}',
  '{"email":"a@x.io","firstName":"\\udc00\\ud800"}',
  '{"email":"a@x.io","firstName":"\\u0000"}',
  '{"\\u0065mail":"escaped-key@x.io"}',
]

const PROTO_BODIES = [
  '{"email":"p@x.io","__proto__":{"polluted":"yes"}}',
  '{"__proto__":{"polluted":"yes"},"email":"p@x.io"}',
  '{"email":"p@x.io","constructor":{"prototype":{"polluted":"yes"}}}',
  '{"email":"p@x.io","\\u005f_proto__":{"polluted":"yes"}}',
  '{"email":"p@x.io","firstName":{"__proto__":{"polluted":"yes"}}}',
  '{"email":"p@x.io","tags":[{"__proto__":{"polluted":"yes"}}]}',
  '{"email":"p@x.io","prototype":{"polluted":"yes"}}',
  '{"email":"p@x.io","constructor":"x"}',
  '{"stage":"customer","__proto__":{"isAdmin":true}}',
  '{"firstName":"x","constructor":{"prototype":{"isAdmin":true}}}',
  '{"__proto__":[],"stage":"lead"}',
]

function deepBodies(): fc.Arbitrary<string> {
  return fc
    .tuple(fc.integer({ min: 1, max: 8000 }), fc.constantFrom('array', 'object', 'field', 'proto'))
    .map(([d, kind]) => {
      if (kind === 'array') return '['.repeat(d) + ']'.repeat(d)
      if (kind === 'object') return `${'{"a":'.repeat(d)}1${'}'.repeat(d)}`
      if (kind === 'field') return `{"email":"deep@x.io","firstName":${'['.repeat(d)}${']'.repeat(d)}}`
      return `${'{"a":'.repeat(d)}{"__proto__":{"polluted":1}}${'}'.repeat(d)}`
    })
}

/** Bodies around the body limit: just under and just over, in bytes. */
function hugeBodies(bodyLimit: number): fc.Arbitrary<string> {
  return fc.oneof(
    fc.integer({ min: -2, max: 2 }).map((delta) => {
      const head = '{"email":"big@x.io","consentType":"'
      return `${head}${'x'.repeat(bodyLimit + delta - head.length - 2)}"}`
    }),
    fc
      .integer({ min: bodyLimit - 10, max: bodyLimit + 10 })
      .map((n) => `{"email":"big@x.io","firstName":"${'€'.repeat(Math.floor(n / 3))}"}`),
  )
}

function bodyVariants(object: fc.Arbitrary<string>, bodyLimit: number): fc.Arbitrary<string> {
  return fc.oneof(
    { weight: 14, arbitrary: object },
    { weight: 2, arbitrary: mutate(object) },
    { weight: 1, arbitrary: fc.jsonValue().map(js) },
    { weight: 1, arbitrary: fc.constantFrom(...ROOT_ODDITIES) },
    { weight: 1, arbitrary: fc.constantFrom(...PROTO_BODIES) },
    { weight: 1, arbitrary: deepBodies() },
    { weight: 1, arbitrary: hugeBodies(bodyLimit) },
    { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 60 }) },
    { weight: 1, arbitrary: fc.constant('') },
  )
}

export interface BodyInputs {
  emails: readonly string[]
  ownTags: readonly string[]
  foreignTags: readonly string[]
  bodyLimit: number
}

export function createBody(inputs: BodyInputs): fc.Arbitrary<string> {
  const object = objectText(
    [
      entry(
        'email',
        fc.oneof({ weight: 9, arbitrary: email(inputs.emails).chain(stringText) }, { weight: 1, arbitrary: wrongType }),
        92,
      ),
      entry('phone', fc.oneof({ weight: 8, arbitrary: phone.map(js) }, { weight: 1, arbitrary: wrongType }), 35),
      entry('firstName', textValue(100), 50),
      entry('lastName', textValue(100), 40),
      entry('consentType', fc.oneof(fc.constantFrom('contract', 'consent').map(js), textValue(64)), 30),
      entry(
        'tags',
        fc.oneof(
          { weight: 8, arbitrary: tagNames(inputs.ownTags, inputs.foreignTags).map(js) },
          { weight: 1, arbitrary: wrongType },
        ),
        40,
      ),
    ],
    CREATE_KEYS,
  )
  return bodyVariants(object, inputs.bodyLimit)
}

function enumValue(values: readonly string[]): fc.Arbitrary<string> {
  return fc.oneof(
    { weight: 6, arbitrary: fc.constantFrom(...values).map(js) },
    {
      weight: 1,
      arbitrary: fc
        .constantFrom(...values)
        .chain((v) => fc.constantFrom(v.toUpperCase(), ` ${v}`, `${v} `, `${v}x`, v.slice(1)))
        .map(js),
    },
    { weight: 1, arbitrary: fc.constantFrom('', 'gone', 'vip', 'null').map(js) },
    { weight: 1, arbitrary: wrongType },
  )
}

export function updateBody(bodyLimit: number): fc.Arbitrary<string> {
  const nullableName = fc.oneof({ weight: 6, arbitrary: textValue(100) }, { weight: 2, arbitrary: fc.constant('null') })
  const object = objectText(
    [
      entry('firstName', nullableName, 35),
      entry('lastName', nullableName, 35),
      entry('emailStatus', enumValue(EMAIL_STATUSES), 35),
      entry('stage', enumValue(STAGES), 35),
      entry('consentType', textValue(64), 25),
    ],
    UPDATE_KEYS,
  )
  return bodyVariants(object, bodyLimit)
}

// ---------------------------------------------------------------------------------------------------------------
// Path ids

export const NIL_UUID = '00000000-0000-0000-0000-000000000000'
export const MAX_UUID = 'ffffffff-ffff-ffff-ffff-ffffffffffff'

/** A path segment (as it appears in the URL, percent-encoded) naming a contact or not. */
export function pathId(own: readonly string[], foreign: readonly string[]): fc.Arbitrary<string> {
  const ownId = fc.constantFrom(...own)
  return fc.oneof(
    { weight: 6, arbitrary: ownId },
    { weight: 1, arbitrary: ownId.map((id) => id.toUpperCase()) },
    { weight: 3, arbitrary: fc.constantFrom(...foreign) },
    { weight: 2, arbitrary: fc.uuid() },
    { weight: 1, arbitrary: fc.constantFrom(NIL_UUID, MAX_UUID) },
    { weight: 1, arbitrary: ownId.map((id) => `urn:uuid:${id}`) },
    {
      weight: 1,
      arbitrary: ownId.chain((id) =>
        fc.constantFrom(
          `{${id}}`,
          id.replaceAll('-', ''),
          `${id}x`,
          id.slice(1),
          `${id}%20`,
          `%20${id}`,
          `${id}%00`,
          `${id}%0A`,
          `${id};x`,
          `${id}%2Fx`,
        ),
      ),
    },
    { weight: 2, arbitrary: fc.string({ unit: 'binary', minLength: 1, maxLength: 40 }).map(encodeURIComponent) },
    { weight: 1, arbitrary: fc.integer({ min: 95, max: 300 }).map((n) => 'a'.repeat(n)) },
    {
      weight: 1,
      arbitrary: fc.constantFrom('%', '%zz', '%E0%A4%A', '%C0%AF', '%FF', 'a%2Fb', '%2F', '%u0041', '%%', '%ED%A0%80'),
    },
  )
}

// ---------------------------------------------------------------------------------------------------------------
// Query strings

export interface GeneratedQuery {
  /** The query string as sent, without "?" (may be empty). */
  raw: string
  params: QueryParam[]
  /** Stray separators or undecodable escapes were added: the outcome is open unless something is invalid. */
  garbage: boolean
}

const param = (name: string, verdict: Verdict) => (value: string) => ({ name, value, verdict })

/** Every character percent-encoded: equivalent to encodeURIComponent for a decoding server. */
function encodeAll(value: string): string {
  return [...new TextEncoder().encode(value)].map((b) => `%${b.toString(16).toUpperCase().padStart(2, '0')}`).join('')
}

const LEAP_AND_EDGES = fc
  .record({
    year: fc.constantFrom('0000', '0001', '1969', '2026', '9999'),
    month: fc.constantFrom('01', '06', '12'),
    day: fc.constantFrom('01', '28', '29', '30', '31'),
    hour: fc.constantFrom('00', '12', '22', '23'),
    minute: fc.constantFrom('00', '58', '59'),
    second: fc.constantFrom('00', '59', '60'),
    fraction: fc.constantFrom('', '.1', '.123', '.123456789'),
    separator: fc.constantFrom('T', 't', ' '),
    zone: fc.constantFrom('Z', 'z', '+00:00', '-00:00', '+01:00', '-01:00', '+23:59', '-23:59', '+14:00'),
  })
  .map((p) => `${p.year}-${p.month}-${p.day}${p.separator}${p.hour}:${p.minute}:${p.second}${p.fraction}${p.zone}`)

export function listQuery(createdAts: readonly string[]): fc.Arbitrary<GeneratedQuery> {
  const shifted = fc
    .tuple(fc.constantFrom(...createdAts), fc.integer({ min: -1, max: 1 }))
    .map(([at, delta]) => new Date(Date.parse(at) + delta).toISOString())
  const canonical = fc
    .date({ min: new Date('1970-01-01T00:00:00.000Z'), max: new Date('2100-01-01T00:00:00.000Z'), noInvalidDate: true })
    .map((d) => d.toISOString())
  const one = fc.oneof(
    { weight: 4, arbitrary: fc.integer({ min: 1, max: 200 }).map((n) => param('limit', 'valid')(String(n))) },
    { weight: 2, arbitrary: fc.integer({ min: 1, max: 6 }).map((n) => param('limit', 'valid')(String(n))) },
    {
      weight: 1,
      arbitrary: fc
        .constantFrom('0', '201', '-1', 'abc', '', '1.5', 'null', 'true', '５', '999999999999999999999', '1,5', '10abc')
        .map(param('limit', 'invalid')),
    },
    {
      weight: 1,
      arbitrary: fc
        .constantFrom('+5', '05', '5.0', '1e2', '0x10', ' 5', '5 ', '0b11', '0o7', '2e2', '1e400')
        .map(param('limit', 'unsure')),
    },
    { weight: 3, arbitrary: fc.oneof(shifted, canonical).map(param('cursor', 'valid')) },
    {
      weight: 1,
      arbitrary: fc
        .constantFrom(
          'yesterday',
          '',
          '2026-13-01T00:00:00.000Z',
          '2026-02-30T00:00:00.000Z',
          '2026-03-01',
          '2026-03-01T25:00:00Z',
          '1709285400000',
          'null',
          '2026-03-01T09:60:00Z',
          '2026-03-01T09:30:00+24:00',
          'T',
          '2026-03-01T09:30:00.Z',
        )
        .map(param('cursor', 'invalid')),
    },
    {
      weight: 2,
      arbitrary: fc.oneof(LEAP_AND_EDGES, fc.constant('2026-03-01T09:30:00')).map(param('cursor', 'unsure')),
    },
    { weight: 2, arbitrary: fc.constantFrom(...EMAIL_STATUSES).map(param('emailStatus', 'valid')) },
    {
      weight: 1,
      arbitrary: fc
        .constantFrom('ACTIVE', 'gone', '', 'active ', 'Active', 'active,bounced')
        .map(param('emailStatus', 'invalid')),
    },
    { weight: 2, arbitrary: fc.constantFrom(...STAGES).map(param('stage', 'valid')) },
    { weight: 1, arbitrary: fc.constantFrom('LEAD', 'vip', '', ' lead', 'Lead').map(param('stage', 'invalid')) },
    { weight: 2, arbitrary: fc.constantFrom('true', 'false').map(param('includeArchived', 'valid')) },
    { weight: 1, arbitrary: fc.constantFrom('yes', '1', '0', '', 'on').map(param('includeArchived', 'invalid')) },
    { weight: 1, arbitrary: fc.constantFrom('TRUE', 'True', 'FALSE').map(param('includeArchived', 'unsure')) },
    {
      weight: 1,
      arbitrary: fc
        .tuple(
          fc.oneof(
            fc.constantFrom(
              'colour',
              'offset',
              'page',
              'Limit',
              'LIMIT',
              '__proto__',
              'constructor',
              'prototype',
              'toString',
              'hasOwnProperty',
              'limit[]',
              'cursor[]',
              '__proto__[polluted]',
              'constructor[prototype][polluted]',
              'a.b',
            ),
            fc.string({ unit: 'binary', minLength: 1, maxLength: 10 }),
          ),
          fc.string({ maxLength: 10 }),
        )
        .filter(([name]) => !['limit', 'cursor', 'emailStatus', 'stage', 'includeArchived'].includes(name))
        .map(([name, value]) => ({ name, value, verdict: 'invalid' as Verdict })),
    },
  )
  return fc
    .record({
      params: fc.array(one, { maxLength: 5 }),
      encoding: fc.array(fc.boolean(), { minLength: 10, maxLength: 10 }),
      garbage: fc.option(fc.constantFrom('&', '&&', '&=', '=', '&=&', '&%', '&%zz=1', '&=x'), { freq: 8 }),
    })
    .map(({ params, encoding, garbage }) => {
      const enc = (s: string, i: number) => (encoding[i % encoding.length] ? encodeAll(s) : encodeURIComponent(s))
      const raw = params.map((p, i) => `${enc(p.name, 2 * i)}=${enc(p.value, 2 * i + 1)}`).join('&') + (garbage ?? '')
      return { raw, params, garbage: garbage !== null }
    })
}

// ---------------------------------------------------------------------------------------------------------------
// Chaos: raw paths, query strings, headers and bodies with no structure at all

const URL_CHARS = [..."ABCabcxyz0123456789-._~!$&'()*+,;=:@%/"]

export function rawPathSuffix(own: readonly string[]): fc.Arbitrary<string> {
  const segment = fc.oneof(
    fc.string({ unit: fc.constantFrom(...URL_CHARS), maxLength: 30 }),
    fc.string({ unit: 'binary', maxLength: 20 }).map(encodeURIComponent),
    fc.constantFrom('.', '..', '%2e%2e', '%2E', '%00', '%zz', '%ff%fe', '%ED%A0%80', '%F0%9F%98%80', ''),
  )
  return fc.oneof(
    fc.constant(''),
    fc.constant('/'),
    segment.map((s) => `/${s}`),
    fc.tuple(fc.constantFrom(...own), segment).map(([id, s]) => `/${id}/${s}`),
    segment.map((s) => s.replace(/^\/*/, '')),
    fc.tuple(segment, segment).map(([a, b]) => `/${a}/${b}`),
  )
}

export function rawQuery(): fc.Arbitrary<string> {
  const chars = [..."abcdefghijklmnopqrstuvwxyzABC0123456789-._~!$'()*,;:@%&=+[]/?"]
  return fc.oneof(
    fc.constant(''),
    fc.string({ unit: fc.constantFrom(...chars), maxLength: 60 }).map((q) => `?${q}`),
    fc.webQueryParameters().map((q) => `?${q}`),
    fc.string({ unit: 'binary', maxLength: 30 }).map((q) => `?${encodeURIComponent(q)}`),
  )
}

export function rawBody(inputs: BodyInputs): fc.Arbitrary<string | undefined> {
  return fc.oneof(
    fc.constant(undefined),
    fc.string({ unit: 'binary', maxLength: 200 }),
    fc.string({
      unit: fc.oneof(fc.string({ unit: 'binary', minLength: 1, maxLength: 1 }), loneSurrogate),
      maxLength: 50,
    }),
    fc.json(),
    createBody(inputs),
    updateBody(inputs.bodyLimit),
  )
}

export function extraHeaders(): fc.Arbitrary<Record<string, string>> {
  return fc
    .record(
      {
        'content-encoding': fc.constantFrom('gzip', 'deflate', 'br', 'identity', 'x-unknown'),
        accept: fc.string({ unit: latin1, maxLength: 30 }),
        'x-request-id': fc.string({ unit: latin1, maxLength: 140 }),
        'accept-charset': fc.constantFrom('utf-16', 'latin1', '*'),
        'x-forwarded-for': fc.constantFrom('1.2.3.4', '::1', 'garbage', ''),
      },
      { requiredKeys: [] },
    )
    .map((headers) => Object.fromEntries(Object.entries(headers).filter(([, v]) => v !== undefined)))
}
