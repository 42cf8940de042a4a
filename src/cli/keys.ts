import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { plainToInstance } from 'class-transformer';
import { validateSync } from 'class-validator';
import { API_KEY_SCOPES, type CreatedApiKeyResource } from '@contracts/api';
import { ErrorType, type ErrorEnvelope } from '@contracts/errors';
import type { AppConfigValues } from '@core/config/config.loader';
import { processConfig } from '@core/config/env';
import { InProcessEventBus } from '@core/bus';
import { DEFAULT_TENANT_ID, type Principal } from '@core/context/request-context';
import { openDatabase } from '@core/database/database.module';
import { registerEntities } from '@core/database/entity-registry';
import { PendingMigrationsError } from '@core/database/database.errors';
import { CreateApiKeyDto } from '@core/http/auth/api-key.dto';
import { ApiKeyEntity } from '@core/http/auth/api-key.entity';
import { ApiKeyRepository } from '@core/http/auth/api-key.repository';
import { ApiKeyService } from '@core/http/auth/api-key.service';
import { assertEmbeddedFree, CliError, hecateAt, redactUrl } from './cli-common';

/** Whoever holds the database's credentials is the operator: the same principal the operator token is. */
const OPERATOR: Principal = { kind: 'operator', tenantId: DEFAULT_TENANT_ID, scopes: API_KEY_SCOPES };

/** The body of `POST /hecate/v1/api-keys`, validated as that route validates it. */
function createDto(values: { tenant?: string; name?: string; scopes?: string }): CreateApiKeyDto {
  if (!values.tenant) throw CliError.usage('keys create needs --tenant <id>');
  const dto = plainToInstance(CreateApiKeyDto, {
    tenant_id: values.tenant,
    name: values.name ?? 'hecate-cli',
    scopes: (values.scopes ?? 'inference').split(',').map((s) => s.trim()),
  });
  const problems = validateSync(dto, { whitelist: true, forbidNonWhitelisted: true }).flatMap((e) =>
    Object.values(e.constraints ?? {}).map((m) =>
      m
        .replace(/^tenant_id/, '--tenant')
        .replace(/^name/, '--name')
        .replace(/^(each value in )?scopes/, '--scopes'),
    ),
  );
  if (problems.length > 0) throw CliError.usage(problems.join('; '));
  return dto;
}

/** Through the running server's own route, as the operator token (or, without one, the local operator). */
async function createOverHttp(url: string, config: AppConfigValues, dto: CreateApiKeyDto): Promise<CreatedApiKeyResource> {
  const res = await fetch(`${url}/hecate/v1/api-keys`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(config.auth.token ? { authorization: `Bearer ${config.auth.token}` } : {}) },
    body: JSON.stringify(dto),
    signal: AbortSignal.timeout(10_000),
  });
  const body = (await res.json()) as { data: CreatedApiKeyResource } & Partial<ErrorEnvelope>;
  if (body.error) throw new CliError(body.error.type, `the server at ${url} answered ${res.status}: ${body.error.message}`, body.error.operator_action);
  return body.data;
}

/** Straight into the configured database, through the service behind the route. */
async function createInDatabase(config: AppConfigValues, dto: CreateApiKeyDto): Promise<CreatedApiKeyResource> {
  if (config.mode === 'embedded') {
    assertEmbeddedFree(config.database.dataDir, 'run the command with the PORT (and GATEWAY_AUTH_TOKEN) of the server using it, or stop that server');
  }
  registerEntities([ApiKeyEntity]);
  const where = config.database.url ? redactUrl(config.database.url) : resolve(config.database.dataDir);
  const dataSource = await openDatabase(config, 'cli').catch((err: unknown) => {
    if (err instanceof PendingMigrationsError) {
      throw new CliError(ErrorType.ServiceUnavailable, `${where}: ${err.pending.length} migration(s) pending`, 'run `npx hecate migrate` first');
    }
    throw new CliError(
      ErrorType.ServiceUnavailable,
      `cannot open the database ${where}: ${err instanceof Error ? err.message : String(err)}`,
      '`npx hecate doctor` says what is wrong',
    );
  });
  try {
    return await new ApiKeyService(new ApiKeyRepository(dataSource), new InProcessEventBus()).create(OPERATOR, dto);
  } finally {
    await dataSource.destroy();
  }
}

/**
 * `hecate keys create --tenant <id> [--name …] [--scopes …] [--json]`: what `POST /hecate/v1/api-keys` does for the
 * operator. The secret goes to stdout alone (`KEY=$(hecate keys create --tenant acme)`), the rest to stderr; `--json`
 * prints the route's `{object, data}` body instead. An embedded server that is running is asked over HTTP.
 */
export async function keys(argv: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    options: { tenant: { type: 'string' }, name: { type: 'string' }, scopes: { type: 'string' }, json: { type: 'boolean', default: false } },
    allowPositionals: true,
    strict: true,
  });
  if (positionals.length !== 1 || positionals[0] !== 'create') throw CliError.usage('the keys command is `hecate keys create --tenant <id>`');
  const dto = createDto(values);
  const config = processConfig();
  // PGlite opens a data directory in one process at a time: a running embedded server makes the key itself.
  const server = config.mode === 'embedded' ? (await hecateAt(config.server))?.url : undefined;
  const key = server ? await createOverHttp(server, config, dto) : await createInDatabase(config, dto);
  if (values.json) {
    process.stdout.write(`${JSON.stringify({ object: 'api_key', data: key })}\n`);
    return 0;
  }
  const via = server ? ` through the server at ${server}` : '';
  process.stderr.write(
    `created API key ${key.id} (${key.prefix}) for tenant ${key.tenant_id}, scopes ${key.scopes.join(',')}${via}; the secret below is shown once:\n`,
  );
  process.stdout.write(`${key.secret}\n`);
  return 0;
}
