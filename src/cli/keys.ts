// `rubrica key create|list|revoke`: API keys. A key is shown once, at creation; afterwards only its hint.
import { type Command, Option } from 'commander'
import {
  type ApiKeyInfo,
  createApiKey,
  type IssuedApiKey,
  KEY_LABEL_MAX_LENGTH,
  listApiKeys,
  type NewApiKey,
  type RevokedApiKey,
  revokeApiKey,
} from '../admin/api-keys.js'
import { ROLES, SCOPES } from '../auth/api-key.js'
import { runOnDatabase } from './run-command.js'
import { actionCommand, type CliIo, type JsonOption, keyLabel, type Outcome, scopeList, table, uuid } from './shared.js'

type KeyCreateOptions = JsonOption & Omit<NewApiKey, 'tenantId'> & { tenant: string }

export function addKeyCommands(program: Command, io: CliIo): void {
  const key = program.command('key').description('API keys')
  actionCommand(key, 'create', 'Create an API key (the key is shown only this once)')
    .requiredOption('--tenant <tenantId>', 'tenant id', uuid('Tenant id'))
    .addOption(new Option('--role <role>', 'role of the key').choices(ROLES).makeOptionMandatory())
    .requiredOption(
      '--scopes <list>',
      `comma-separated scopes of ${SCOPES.join(', ')} (webhooks:manage and contacts:erase work for the admin ` +
        'role only; registering a webhook or reading its deliveries also needs contacts:read)',
      scopeList,
    )
    .option('--label <text>', `label for operators, up to ${KEY_LABEL_MAX_LENGTH} characters`, keyLabel)
    .action(({ tenant, role, scopes, label, json }: KeyCreateOptions) =>
      runOnDatabase(io, { json }, async ({ prisma }) =>
        issuedKey(await createApiKey(prisma, { tenantId: tenant, role, scopes, label })),
      ),
    )
  actionCommand(key, 'list', 'List the API keys of a tenant (hints only)')
    .requiredOption('--tenant <tenantId>', 'tenant id', uuid('Tenant id'))
    .action((options: JsonOption & { tenant: string }) =>
      runOnDatabase(io, options, async ({ prisma }) => keyList(await listApiKeys(prisma, options.tenant))),
    )
  actionCommand(key, 'revoke', 'Revoke an API key (idempotent)')
    .argument('<keyId>', 'key id', uuid('Key id'))
    .action((keyId: string, options: JsonOption) =>
      runOnDatabase(io, options, async ({ prisma }) => revokedKey(await revokeApiKey(prisma, keyId))),
    )
}

function issuedKey(issued: IssuedApiKey): Outcome {
  return {
    json: issued,
    text:
      `Created ${issued.role} key ${issued.id} for tenant ${issued.tenantId} (${issued.scopes.join(', ')}).\n` +
      `Key, shown only now (store it safely):\n${issued.key}\n`,
  }
}

/** Hints only: neither the list nor its JSON ever holds a key or its hash. */
function keyList(keys: ApiKeyInfo[]): Outcome {
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
}

/** Only an actual revocation is announced: repeating the command changes nothing that instances cache. */
function revokedKey(revoked: RevokedApiKey): Outcome {
  return {
    json: revoked,
    authChange: revoked.changed ? `key ${revoked.id} revoked` : undefined,
    text: revoked.changed
      ? `Revoked key ${revoked.id} (…${revoked.hint}).\n`
      : `Key ${revoked.id} (…${revoked.hint}) was already revoked on ${revoked.revokedAt?.toISOString()}.\n`,
  }
}
