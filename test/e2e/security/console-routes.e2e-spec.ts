import { useStack } from '../../support/harness';
import { request } from '../../support/http';
import { providerEnv } from '../../support/provider-env';

const TOKEN = 'console-routes-walls-token-0123456789';
type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

/**
 * The routes the console added (GET /hecate/v1/whoami, /usage/series, /providers/{id}/models) behind the walls every
 * route has: one tenant's key sees only its own usage (and cannot ask for another tenant's), no credential and a
 * revoked key are 401, a foreign Origin is 403, a hostile query is a 400 envelope, an unknown provider a 404.
 */
describe('console routes: tenant scope and attacks', () => {
  const suite = useStack({
    mode: 'embedded',
    token: TOKEN,
    upstream: {},
    env: (up) => providerEnv('fakeai', up, { kind: 'local', defaultModel: 'gpt-4o-mini' }),
  });
  const call = (path: string, token: string | null, headers: Record<string, string> = {}) => request<Json>(suite.stack.url, 'GET', path, { token, headers });

  it('keeps each tenant on its own usage series and refuses the walls', async () => {
    const keys: Record<string, string> = {};
    for (const tenant of ['acme', 'globex']) {
      const r = await request<Json>(suite.stack.url, 'POST', '/hecate/v1/api-keys', {
        token: TOKEN,
        body: { name: tenant, scopes: ['inference', 'operator'], tenant_id: tenant },
      });
      expect(r.status).toBe(201);
      keys[tenant] = r.body.data.secret;
    }
    for (const [tenant, n] of [
      ['acme', 2],
      ['globex', 1],
    ] as const)
      for (let i = 0; i < n; i++) {
        const r = await request(suite.stack.url, 'POST', '/v1/chat/completions', {
          token: keys[tenant],
          body: { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] },
        });
        expect(r.status).toBe(200);
      }
    const calls = (body: Json) => (body.data.points as Json[]).reduce((s, p) => s + (p.calls as number), 0);
    expect(calls((await call('/hecate/v1/usage/series?bucket=hour', keys.acme)).body)).toBe(2);
    expect(calls((await call('/hecate/v1/usage/series?bucket=hour', keys.globex)).body)).toBe(1);
    // Another tenant's id in the query: refused or ignored, never that tenant's usage.
    const foreign = await call('/hecate/v1/usage/series?bucket=hour&tenant_id=globex', keys.acme);
    if (foreign.status === 200) expect(calls(foreign.body)).toBe(2);
    else expect(foreign.status).toBe(403);
    expect((await call('/hecate/v1/whoami', keys.acme)).body.data).toMatchObject({ kind: 'api_key', tenant_id: 'acme' });

    for (const path of ['/hecate/v1/whoami', '/hecate/v1/usage/series', '/hecate/v1/providers/fakeai/models']) {
      expect((await call(path, null)).status).toBe(401);
      expect((await call(path, 'hk_forged_0123456789abcdef')).status).toBe(401);
      const cross = await call(path, TOKEN, { origin: 'https://evil.example' });
      expect([cross.status, cross.body.error?.type]).toEqual([403, 'origin_not_allowed']);
    }
    const hostile = await call(`/hecate/v1/usage/series?bucket=${'x'.repeat(5000)}`, keys.acme);
    expect([hostile.status, hostile.body.error?.type]).toEqual([400, 'invalid_request']);
    const tooMany = await call('/hecate/v1/usage/series?bucket=minute&since=2000-01-01T00:00:00Z', keys.acme);
    expect(tooMany.status).toBe(400);
    const unknown = await call('/hecate/v1/providers/..%2F..%2Fetc/models', TOKEN);
    expect(unknown.status).toBe(404);
    expect((await call('/hecate/v1/providers/fakeai/models', keys.acme)).status).toBe(200);
  });
});
