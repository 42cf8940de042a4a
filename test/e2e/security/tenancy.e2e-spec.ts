import type { GatewayTrace } from '@modules/inference/usage/trace-store.service';
import { HttpClient, request } from '../../support/http';
import type { ServerProcess } from '../../support/server-process';
import {
  answerBeforeBody,
  chatBody,
  completions,
  createKey,
  errorType,
  FakeUpstream,
  OPERATOR_TOKEN,
  providerEnv,
  startFakeUpstream,
  startSecured,
  TenantKey,
} from './security-harness';

const SHARED_KEY = 'sk-e2e-shared-provider-key-0101';
const ENV_KEY = 'sk-e2e-env-provider-key-0102';
const STORED_KEY = 'sk-e2e-stored-provider-key-0103';
const BURST = 10;

type Provider = { id: string; base_url: string; credential_state: string; api_key_configured: boolean };

/** docs/security.md tenant model: shared settings need `admin`, scopes and rate limits follow the authenticated caller. */
describe('tenancy: admin scope, keys follow their host, auth before the body, per-key limits, per-tenant traces', () => {
  let shared: FakeUpstream;
  let attacker: FakeUpstream;
  let server: ServerProcess;
  let operator: HttpClient;
  let acme: TenantKey;

  beforeAll(async () => {
    [shared, attacker] = await Promise.all([startFakeUpstream(), startFakeUpstream()]);
    server = await startSecured({
      ...providerEnv('shared', shared, { kind: 'local', key: SHARED_KEY }),
      ...providerEnv('envkeyed', shared, { kind: 'local', key: ENV_KEY }),
      GATEWAY_RATE_LIMIT_ENABLED: 'true',
      GATEWAY_RATE_LIMIT_RPM: '6',
      GATEWAY_RATE_LIMIT_BURST: String(BURST),
    });
    operator = new HttpClient(server.url, OPERATOR_TOKEN);
    acme = await createKey(server.url, ['inference', 'operator'], 'acme');
  });
  afterEach(() => {
    shared.reset();
    attacker.reset();
  });
  afterAll(async () => {
    await server?.stop();
    await Promise.all([shared, attacker].map((u) => u?.close()));
  });

  it("refuses a tenant's operator key every shared setting (403 forbidden) and leaves the settings as they were", async () => {
    const tenant = acme.client;
    const refused = [
      await tenant.call('PATCH', '/hecate/v1/settings/providers/shared', { base_url: `${attacker.url}/v1` }),
      await tenant.call('PUT', '/hecate/v1/settings/providers/shared/api-key', { api_key: 'sk-mine' }),
      await tenant.call('DELETE', '/hecate/v1/settings/providers/shared'),
      await tenant.call('POST', '/hecate/v1/settings/providers', { name: 'mine', base_url: `${attacker.url}/v1`, kind: 'local' }),
      await tenant.call('PUT', '/hecate/v1/settings/pricing/shared/gpt-4o-mini', {
        input_micros_usd_per_million_tokens: 0,
        output_micros_usd_per_million_tokens: 0,
      }),
      await tenant.call('PUT', '/hecate/v1/model-capabilities/overrides', { provider: 'shared', model: 'gpt-4o-mini', tool_calling: 'none' }),
      await tenant.call('POST', '/hecate/v1/model-capabilities/probes', { provider: 'shared', model: 'gpt-4o-mini' }),
      await tenant.call('POST', '/hecate/v1/system/retention/run'),
      await tenant.call('POST', '/hecate/v1/system/queue-probes', {}),
      await tenant.call('POST', '/hecate/v1/api-keys', { name: 'esc', scopes: ['admin'] }),
      await tenant.call('POST', '/hecate/v1/api-keys', { name: 'other', scopes: ['operator'], tenant_id: 'globex' }),
    ];
    expect(refused.map((r) => [r.status, errorType(r)])).toEqual(refused.map(() => [403, 'forbidden']));

    // Nothing changed: the provider still points at the shared upstream with its key, no price was set.
    const provider = await operator.ok<Provider>('GET', '/hecate/v1/settings/providers/shared');
    expect(provider).toMatchObject({ base_url: `${shared.url}/v1`, api_key_configured: true });
    expect(await operator.ok('GET', '/hecate/v1/settings/pricing')).not.toContainEqual(expect.objectContaining({ provider: 'shared' }));
    const done = await operator.call('POST', '/v1/chat/completions', chatBody('still shared', { provider: 'shared' }));
    expect(done.status).toBe(200);
    expect(shared.requests.find((r) => r.method === 'POST')?.apiKey).toBe(SHARED_KEY);
    expect(completions(attacker)).toBe(0);

    // Reads of shared settings stay allowed, and the tenant still manages its own resources.
    expect((await tenant.call('GET', '/hecate/v1/settings/providers')).status).toBe(200);
    expect((await tenant.call('GET', '/hecate/v1/settings/pricing')).status).toBe(200);
    const ownKey = await tenant.call('POST', '/hecate/v1/api-keys', { name: 'own', scopes: ['inference'] });
    expect(ownKey.status).toBe(201);
    expect(ownKey.body.data.tenant_id).toBe('acme');
    expect((await tenant.call('DELETE', `/hecate/v1/api-keys/${ownKey.body.data.id}`)).status).toBe(200);
    const session = await tenant.call('POST', '/hecate/v1/chat/sessions', { title: 'mine' });
    expect(session.status).toBe(201);
    expect((await tenant.call('GET', `/hecate/v1/chat/sessions/${session.body.data.id}`)).status).toBe(200);
  });

  it('lets only the operator token grant admin; an admin key may change shared settings', async () => {
    const admin = await createKey(server.url, ['admin'], 'ops');
    expect((await admin.client.call('POST', '/hecate/v1/api-keys', { name: 'again', scopes: ['admin'] })).status).toBe(403);
    const price = await admin.client.call('PUT', '/hecate/v1/settings/pricing/shared/gpt-4o', {
      input_micros_usd_per_million_tokens: 1,
      output_micros_usd_per_million_tokens: 2,
    });
    expect(price.status).toBe(200);
    expect((await operator.call('DELETE', '/hecate/v1/settings/pricing/shared/gpt-4o')).status).toBe(200);
  });

  it("drops a provider's stored or env key when its base_url changes, unless the same request sets a key", async () => {
    const created = await operator.call('POST', '/hecate/v1/settings/providers', {
      name: 'keyed',
      base_url: `${shared.url}/v1`,
      kind: 'local',
      api_key: STORED_KEY,
      custom_name: 'keyed',
    });
    expect(created.status).toBe(201);
    const pinned = (provider: string) => operator.call('POST', '/v1/chat/completions', chatBody('where', { provider, model: 'gpt-4o-mini' }));
    expect((await pinned('keyed')).status).toBe(200);
    expect(shared.requests.find((r) => r.method === 'POST')?.apiKey).toBe(STORED_KEY);

    for (const id of ['keyed', 'envkeyed']) {
      const moved = await operator.call('PATCH', `/hecate/v1/settings/providers/${id}`, { base_url: `${attacker.url}/v1` });
      expect(moved.status).toBe(200);
      expect(moved.body.data).toMatchObject({ base_url: `${attacker.url}/v1`, api_key_configured: false, credential_state: 'not_required' });
      expect((await pinned(id)).status).toBe(200);
    }
    const reached = attacker.requests.filter((r) => r.method === 'POST');
    expect(reached).toHaveLength(2);
    for (const r of reached) {
      expect(r.headers.authorization).toBeUndefined();
      expect(r.apiKey).toBeUndefined();
    }

    // A new base_url with a key in the same request keeps that (new) key.
    attacker.reset();
    const rekeyed = await operator.call('PATCH', '/hecate/v1/settings/providers/keyed', { base_url: `${attacker.url}/v2`, api_key: 'sk-new-host-key' });
    expect(rekeyed.body.data).toMatchObject({ api_key_configured: true });
  });

  it('authorises on the matched route: a percent-encoded /v1 path needs the inference scope and is rate limited', async () => {
    const operatorOnly = await createKey(server.url, ['operator'], 'acme');
    const sneaky = await operatorOnly.client.call('POST', '/%761/chat/completions', chatBody());
    expect(sneaky.status).toBe(403);
    expect(sneaky.body.error).toMatchObject({ type: 'forbidden', code: 'forbidden' });
    expect(completions(shared)).toBe(0);

    const inference = await createKey(server.url, ['inference'], 'acme');
    const encoded = await inference.client.call('POST', '/%761/chat/completions', chatBody());
    expect(encoded.status).toBe(200);
    expect(encoded.headers.get('x-ratelimit-limit')).toBe('6');
    expect(encoded.headers.get('x-ratelimit-remaining')).toBe(String(BURST - 1));
  });

  it('answers unknown paths 404 and missing credentials 401 before reading the body', async () => {
    const huge = 20 * 1024 * 1024;
    const unauthenticated = await answerBeforeBody(server.url, {
      method: 'POST',
      path: '/v1/chat/completions',
      headers: {},
      declaredLength: huge,
      sent: '{"messages":[{"role":"user","content":"',
    });
    expect(unauthenticated.status).toBe(401);
    expect(JSON.parse(unauthenticated.body).error).toMatchObject({ type: 'unauthorized', request_id: expect.any(String) });

    const wrongKey = await answerBeforeBody(server.url, {
      method: 'POST',
      path: '/hecate/v1/chat/sessions',
      headers: { authorization: `Bearer ${acme.prefix}_${'x'.repeat(43)}` },
      declaredLength: huge,
      sent: '{"title":"',
    });
    expect(wrongKey.status).toBe(401);

    const unknown = await answerBeforeBody(server.url, { method: 'POST', path: '/hecate/v1/nowhere', headers: {}, declaredLength: huge, sent: '{' });
    expect(unknown.status).toBe(404);
    expect(JSON.parse(unknown.body).error).toMatchObject({ type: 'not_found', user_message: expect.any(String) });
    // Public routes stay public.
    expect((await request(server.url, 'GET', '/readyz')).status).toBe(200);
  });

  it("never spends a key's rate limit on requests that only present its prefix", async () => {
    const victim = await createKey(server.url, ['inference'], 'victim');
    const forged = `${victim.prefix}_${'A'.repeat(43)}`;
    const bogus = await Promise.all(Array.from({ length: 30 }, () => request(server.url, 'POST', '/v1/chat/completions', { token: forged, body: chatBody() })));
    expect(bogus.map((r) => r.status)).toEqual(bogus.map(() => 401));
    expect(completions(shared)).toBe(0);

    const own = await victim.client.call('POST', '/v1/chat/completions', chatBody('mine'));
    expect(own.status).toBe(200);
    expect(own.headers.get('x-ratelimit-remaining')).toBe(String(BURST - 1));
  });

  it("keeps each tenant's trace under a request id both chose", async () => {
    const a = await createKey(server.url, ['inference', 'operator'], 'tenant-a');
    const b = await createKey(server.url, ['inference', 'operator'], 'tenant-b');
    const requestId = 'same-request-id-0001';
    for (const [key, text] of [
      [a, 'from a'],
      [b, 'from b'],
    ] as const) {
      const r = await key.client.call('POST', '/v1/chat/completions', chatBody(text), { 'x-request-id': requestId });
      expect(r.status).toBe(200);
      expect(r.headers.get('x-request-id')).toBe(requestId);
    }
    for (const [key, tenant] of [
      [a, 'tenant-a'],
      [b, 'tenant-b'],
    ] as const) {
      const trace = await key.client.call<{ data: GatewayTrace }>('GET', `/hecate/v1/traces?request_id=${requestId}`);
      expect(trace.status).toBe(200);
      expect(trace.body.data).toMatchObject({ request_id: requestId, tenant_id: tenant, status: 'ok' });
    }
    const listed = await a.client.call<{ data: GatewayTrace[] }>('GET', '/hecate/v1/traces');
    expect(listed.body.data.filter((t) => t.request_id === requestId).map((t) => t.tenant_id)).toEqual(['tenant-a']);
    // The operator token sees both.
    const all = await operator.call<{ data: GatewayTrace[] }>('GET', '/hecate/v1/traces?limit=500');
    expect(
      all.body.data
        .filter((t) => t.request_id === requestId)
        .map((t) => t.tenant_id)
        .sort(),
    ).toEqual(['tenant-a', 'tenant-b']);
  });
});
