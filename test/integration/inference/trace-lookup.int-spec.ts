import type { AppConfig } from '@core/config/app-config';
import { RedisEventBus } from '@core/bus';
import { RedisConnections } from '@core/redis/redis-connections';
import { type GatewayTrace, TraceStoreService } from '@modules/inference/usage/trace-store.service';
import { testRedisUrl, uniqueId } from '../../support/infra';

const config = { mode: 'scaled', gateway: { traces: { maxCount: 100, maxAgeMs: 60_000 } } } as unknown as AppConfig;

const trace = (tenantId: string, requestId: string) => ({ request_id: requestId, tenant_id: tenantId }) as unknown as GatewayTrace;

/** Two api processes (each its own bus connection on one Redis): a trace recorded by one is found through the other. */
describe('gateway trace lookup across api processes (bus request/reply)', () => {
  const redis: RedisConnections[] = [];
  const stores: TraceStoreService[] = [];

  beforeAll(async () => {
    const prefix = `${uniqueId('bus')}:`;
    for (let i = 0; i < 2; i++) {
      const conn = new RedisConnections(testRedisUrl());
      await conn.waitReady();
      redis.push(conn);
      const store = new TraceStoreService(config, new RedisEventBus(conn, prefix));
      await store.onModuleInit();
      stores.push(store);
    }
  });

  afterAll(async () => {
    for (const s of stores) await s.onModuleDestroy();
    for (const r of redis) await r.close();
  });

  it("finds the other process's trace for its tenant and the operator, never for another tenant", async () => {
    const [served, asked] = stores;
    const requestId = uniqueId('req');
    served.record({ requestId, tenantId: 't1', build: () => trace('t1', requestId) });
    expect(await asked.find(requestId, 't1')).toEqual([trace('t1', requestId)]);
    expect(await asked.find(requestId, null)).toEqual([trace('t1', requestId)]);
    expect(await asked.find(requestId, 't2')).toEqual([]);
    expect(await asked.find(uniqueId('none'), 't1')).toEqual([]);
  });
});
