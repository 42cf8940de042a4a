import { readdirSync, writeFileSync } from 'node:fs';

import { join } from 'node:path';
import { DataSource } from 'typeorm';
import type { AppConfig } from '@core/config/app-config';

import { UsageEventEntity } from '@modules/inference/usage/usage-event.entity';
import { UsageLedgerService, UsageRecord } from '@modules/inference/usage/usage-ledger.service';
import { UsageRepository } from '@modules/inference/usage/usage.repository';
import { COPY_SLICE_ROWS } from '@modules/inference/usage/usage-spool';
import { openTestDatabase, type TestDatabase } from '../../support/database';

const row = (i: number, over: Partial<UsageRecord> = {}): UsageRecord => ({
  tenantId: i % 2 === 0 ? 'tenant-a' : 'tenant-b',
  requestId: `req_${i}`,
  traceId: 'trace',
  provider: i % 3 === 0 ? 'openai' : 'ollama',
  providerKind: 'cloud',
  model: 'gpt-4o-mini',
  routeReason: 'requested_model',
  endpoint: '/v1/chat/completions',
  attempt: 1,
  status: 'ok',
  stream: false,
  inputTokens: 10,
  outputTokens: 5,
  cachedInputTokens: 2,
  costMicrosUsd: 7,
  latencyMs: 12.4,
  firstByteMs: 3.3,
  ...over,
});

describe.each([
  ['Postgres', 'scaled'],
  ['PGlite', 'embedded'],
] as const)('usage ledger on %s', (_label, mode) => {
  let tdb: TestDatabase;
  let ds: DataSource;
  let ledger: UsageLedgerService;
  let dataDir: string;
  const configFor = (dir: string) =>
    ({ mode, database: { dataDir: dir }, gateway: { usage: { flushIntervalMs: 3_600_000, bufferMax: 300 } } }) as unknown as AppConfig;

  beforeEach(async () => {
    tdb = await openTestDatabase(mode === 'scaled' ? 'postgres' : 'pglite', { poolSize: 4, entities: [UsageEventEntity], prefix: 'hecate-ledger-' });
    ds = tdb.dataSource;
    dataDir = tdb.dataDir;
    ledger = new UsageLedgerService(configFor(dataDir), new UsageRepository(ds));
    await ledger.onModuleInit();
  });
  afterEach(async () => {
    ledger.onModuleDestroy();
    await tdb.close();
  });

  const count = async () => Number(((await ds.query('SELECT count(*)::int AS n FROM usage_events')) as Array<{ n: number }>)[0].n);

  it('buffers records off the request path and writes them all on flush, in batches', async () => {
    for (let i = 0; i < 250; i++) ledger.record(row(i));
    expect(await count()).toBe(0);
    await ledger.flush();
    expect(await count()).toBe(250);
    const events = await ledger.events({ tenantId: 'tenant-a', requestId: 'req_4' }, 10);
    expect(events).toEqual([
      expect.objectContaining({
        request_id: 'req_4',
        tenant_id: 'tenant-a',
        provider: 'ollama',
        status: 'ok',
        input_tokens: 10,
        cached_input_tokens: 2,
        cost_micros_usd: 7,
        latency_ms: 12,
        first_byte_ms: 3,
      }),
    ]);
    // Time-ordered ids (UUIDv7 layout).
    expect(events[0].id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  });

  it('summarises per tenant, provider and model', async () => {
    for (let i = 0; i < 12; i++)
      ledger.record(row(i, i === 0 ? { status: 'error', errorType: 'http_500', inputTokens: 0, outputTokens: 0, costMicrosUsd: 0 } : {}));
    const all = await ledger.summary({ tenantId: null });
    expect(all).toMatchObject({ calls: 12, requests: 11, errors: 1, cost_micros_usd: 77, cost_usd: '0.000077' });
    const a = await ledger.summary({ tenantId: 'tenant-a' });
    expect(a.calls).toBe(6);
    expect(a.by_model.map((m) => m.provider).sort()).toEqual(['ollama', 'openai']);
  });

  it("totals each window of an API key's calls in one statement (a metered external agent's turns)", async () => {
    const t0 = new Date(Date.now() - 1000);
    for (let i = 0; i < 3; i++) ledger.record(row(100 + i, { tenantId: 'tenant-w', apiKeyId: 'key-1', costMicrosUsd: 10 }));
    ledger.record(row(200, { tenantId: 'tenant-w', apiKeyId: 'key-2', costMicrosUsd: 99 }));
    const t1 = new Date(Date.now() + 1000);
    const totals = await ledger.windowTotals('tenant-w', [
      { apiKeyId: 'key-1', since: t0, until: t1 },
      { apiKeyId: 'key-1', since: t1, until: new Date(t1.getTime() + 1000) },
      { apiKeyId: 'key-2', since: t0, until: t1 },
    ]);
    expect(totals).toEqual([
      { requests: 3, inputTokens: 30, outputTokens: 15, costMicrosUsd: 30 },
      { requests: 0, inputTokens: 0, outputTokens: 0, costMicrosUsd: 0 },
      { requests: 1, inputTokens: 10, outputTokens: 5, costMicrosUsd: 99 },
    ]);
    expect(await ledger.windowTotals('tenant-a', [{ apiKeyId: 'key-1', since: t0, until: t1 }])).toEqual([
      { requests: 0, inputTokens: 0, outputTokens: 0, costMicrosUsd: 0 },
    ]);
  });

  it('buckets the series in UTC with [since, until) and the bucket edges exact, per tenant or across tenants', async () => {
    // Each call at an instant of its own (the ledger stamps "now"; the test moves them): either side of 10:00 and
    // of midnight, on the window's edges, and one of another tenant.
    const calls: Array<[at: string, over: Partial<UsageRecord>]> = [
      ['2026-03-01T08:59:59.999Z', { provider: 'openai' }], // before since
      ['2026-03-01T09:00:00.000Z', { provider: 'openai' }], // since: in
      ['2026-03-01T09:59:59.999Z', { provider: 'openai' }],
      ['2026-03-01T10:00:00.000Z', { provider: 'openai', status: 'error', errorType: 'http_500', costMicrosUsd: 0 }],
      ['2026-03-01T10:59:59.999Z', { provider: 'ollama' }],
      ['2026-03-01T10:30:00.000Z', { provider: 'openai', tenantId: 'tenant-b' }],
      ['2026-03-01T11:00:00.000Z', { provider: 'openai' }], // until: out
      ['2026-03-01T23:59:59.999Z', { provider: 'openai' }],
      ['2026-03-02T00:00:00.000Z', { provider: 'openai' }],
    ];
    calls.forEach(([, over], i) => ledger.record(row(500 + i, { tenantId: 'tenant-a', ...over })));
    await ledger.flush();
    for (const [i, [at]] of calls.entries()) await ds.query('UPDATE usage_events SET created_at = $1 WHERE request_id = $2', [at, `req_${500 + i}`]);

    // What `n` calls of row() make in one bucket (an error costs nothing here).
    const point = (at: string, key: string, n: number, errors = 0) => ({
      at,
      key,
      calls: n,
      errors,
      input_tokens: 10 * n,
      output_tokens: 5 * n,
      cost_micros_usd: 7 * (n - errors),
    });
    const hours = { since: new Date('2026-03-01T09:00:00Z'), until: new Date('2026-03-01T11:00:00Z') };

    const tenantA = await ledger.series({ tenantId: 'tenant-a', ...hours }, 'hour', 'provider');
    expect(tenantA).toEqual({
      since: '2026-03-01T09:00:00.000Z',
      until: '2026-03-01T11:00:00.000Z',
      bucket: 'hour',
      group_by: 'provider',
      points: [point('2026-03-01T09:00:00Z', 'openai', 2), point('2026-03-01T10:00:00Z', 'ollama', 1), point('2026-03-01T10:00:00Z', 'openai', 1, 1)],
    });
    expect((await ledger.series({ tenantId: 'tenant-b', ...hours }, 'hour', 'provider')).points).toEqual([point('2026-03-01T10:00:00Z', 'openai', 1)]);
    // The operator (no tenant) by tenant: both tenants' calls, each under its own key.
    expect((await ledger.series({ tenantId: null, ...hours }, 'hour', 'tenant')).points).toEqual([
      point('2026-03-01T09:00:00Z', 'tenant-a', 2),
      point('2026-03-01T10:00:00Z', 'tenant-a', 2, 1),
      point('2026-03-01T10:00:00Z', 'tenant-b', 1),
    ]);
    // Days start at 00:00 UTC: the calls a millisecond either side of midnight fall in two days.
    const days = await ledger.series(
      { tenantId: 'tenant-a', since: new Date('2026-03-01T00:00:00Z'), until: new Date('2026-03-03T00:00:00Z') },
      'day',
      'provider',
    );
    expect(days.points).toEqual([
      point('2026-03-01T00:00:00Z', 'ollama', 1),
      point('2026-03-01T00:00:00Z', 'openai', 6, 1),
      point('2026-03-02T00:00:00Z', 'openai', 1),
    ]);
  });

  it('flushes what is buffered at shutdown', async () => {
    for (let i = 0; i < 40; i++) ledger.record(row(i));
    await ledger.beforeApplicationShutdown();
    expect(await count()).toBe(40);
  });

  it('survives the table being unavailable: bounded buffer (scaled) or the on-disk spool (embedded), then catches up', async () => {
    await ds.query('ALTER TABLE usage_events RENAME TO usage_events_away');
    for (let i = 0; i < 200; i++) ledger.record(row(i));
    await ledger.flush();
    for (let i = 200; i < 400; i++) ledger.record(row(i));
    await ds.query('ALTER TABLE usage_events_away RENAME TO usage_events');
    await ledger.flush();
    expect(await ledger.events({ tenantId: null, requestId: 'req_399' }, 1)).toHaveLength(1);
    if (mode === 'scaled') {
      // At most GATEWAY_USAGE_BUFFER_MAX rows were kept: the newest survived, the oldest were dropped.
      expect(await count()).toBe(300);
      expect(await ledger.events({ tenantId: null, requestId: 'req_0' }, 1)).toHaveLength(0);
    } else {
      expect(await count()).toBe(400);
    }
  });

  if (mode === 'embedded') {
    it('imports a large spool in several COPYs with every row intact, quoted newlines included', async () => {
      const n = COPY_SLICE_ROWS * 2 + 37;
      const config = configFor(dataDir);
      config.gateway.usage.bufferMax = n; // one flush, one spool file of three slices
      const repo = new UsageRepository(ds);
      const big = new UsageLedgerService(config, repo);
      await big.onModuleInit();
      // Count the COPYs (each still runs against PGlite).
      let copies = 0;
      const copyCsv = repo.copyCsv.bind(repo);
      repo.copyCsv = (...args) => ((copies += 1), copyCsv(...args));
      // The odd row is the first slice's last record: a cut at its inner newline would break the COPY.
      const odd = COPY_SLICE_ROWS - 1;
      for (let i = 0; i < n; i++) big.record(row(i, i === odd ? { model: 'odd "model"\nname,with comma' } : {}));
      await big.flush();
      big.onModuleDestroy();
      expect(copies).toBe(3);
      expect(await count()).toBe(n);
      const [oddRow] = await big.events({ tenantId: null, requestId: `req_${odd}` }, 1);
      expect(oddRow).toMatchObject({ model: 'odd "model"\nname,with comma', input_tokens: 10 });
      expect(readdirSync(join(dataDir, 'usage-spool'))).toEqual([]);
    });

    it('imports spool files left by a crash at boot (partial last line dropped, a maybe-imported file not duplicated)', async () => {
      for (let i = 0; i < 30; i++) ledger.record(row(i));
      await ledger.flush();
      expect(await count()).toBe(30);
      const existing = (await ds.query('SELECT id FROM usage_events ORDER BY id LIMIT 5')) as Array<{ id: string }>;
      const spool = join(dataDir, 'usage-spool');
      const line = (id: string, req: string) =>
        `${id},tenant-a,${req},,,openai,cloud,gpt-4o-mini,requested_model,/v1/chat/completions,1,ok,,f,1,1,0,0,1,,${new Date().toISOString()}`;
      // A file whose import committed just before the crash (ids already present) plus one new row.
      writeFileSync(
        join(spool, 'batch-1-aaaaaa.csv.importing'),
        `${existing.map((e) => line(e.id, 'dup')).join('\n')}\n${line('01a20000-0000-7000-8000-000000000001', 'req_new1')}\n`,
      );
      // The current spool with a line cut short by the crash.
      writeFileSync(join(spool, 'current.csv'), `${line('01a20000-0000-7000-8000-000000000002', 'req_new2')}\n01a20000-0000-7000-8000-00000000`);
      const restarted = new UsageLedgerService(configFor(dataDir), new UsageRepository(ds));
      await restarted.onModuleInit();
      restarted.onModuleDestroy();
      expect(await count()).toBe(32);
      expect(readdirSync(spool)).toEqual([]);
    });
  }
});
