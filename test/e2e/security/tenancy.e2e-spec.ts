import { startFakeUpstream, type FakeUpstream } from '../../support/fake-upstream/fake-upstream.js';
import { providerEnv } from '../../support/provider-env';
import { Client, embeddedTasksEnv, Json, Processes } from '../tasks/tasks-harness';

/**
 * An attacker's view of the tenant model (DESIGN §8): a tenant key with `operator` scope manages its tenant's own
 * resources, never the settings every tenant shares (providers and their keys, pricing, capabilities, retention,
 * system operations) — those need `admin`, which only the operator token has and only it can grant.
 */
describe('tenancy', () => {
  const procs = new Processes();
  let real: FakeUpstream;
  let attacker: FakeUpstream;
  let op: Client;
  let tenant: Client;

  beforeAll(async () => {
    [real, attacker] = await Promise.all([startFakeUpstream({ models: ['gpt-4o-mini'] }), startFakeUpstream({ models: ['gpt-4o-mini'] })]);
    const server = await procs.start(
      'all',
      embeddedTasksEnv({ ...providerEnv('shared', real, { key: 'sk-shared-provider-key' }), GATEWAY_ALLOW_PRIVATE_PROVIDER_URLS: 'true' }),
    );
    op = new Client(server.url);
    const key = await op.ok('POST', '/hecate/v1/api-keys', { name: 'acme-ops', scopes: ['inference', 'operator'], tenant_id: 'acme' });
    tenant = new Client(server.url, key.secret as string);
  }, 120_000);
  afterAll(async () => {
    await procs.stopAll();
    await Promise.all([real?.close(), attacker?.close()]);
  });

  it.each([
    ['PATCH', '/hecate/v1/settings/providers/shared', { base_url: 'http://127.0.0.1:1/v1' }],
    ['PUT', '/hecate/v1/settings/providers/shared/api-key', { api_key: 'sk-mine' }],
    ['DELETE', '/hecate/v1/settings/providers/shared', undefined],
    ['POST', '/hecate/v1/settings/providers', { preset_id: 'openai', api_key: 'sk-x' }],
    ['PUT', '/hecate/v1/settings/pricing/shared/gpt-4o-mini', { input_micros_usd_per_million_tokens: 1, output_micros_usd_per_million_tokens: 1 }],
    ['PUT', '/hecate/v1/model-capabilities/overrides', { provider: 'shared', model: 'gpt-4o-mini', tool_calling: 'none' }],
    ['POST', '/hecate/v1/system/retention/run', {}],
    ['GET', '/hecate/v1/system/retention/runs', undefined],
  ])('a tenant operator key gets 403 for %s %s (settings every tenant shares)', async (method, path, body) => {
    const res = await tenant.call(method, path, body);
    expect({ status: res.status, type: res.body?.error?.type }).toEqual({ status: 403, type: expect.any(String) });
    expect(res.body.error.message).toContain('admin');
  });

  it('the shared provider is untouched, and the tenant still manages its own resources', async () => {
    const provider = await op.ok('GET', '/hecate/v1/settings/providers/shared');
    expect(provider.base_url).toBe(`${real.url}/v1`);
    expect((await tenant.call('POST', '/hecate/v1/tasks', { execution_kind: 'shell', shell_command: 'true' })).status).toBe(200);
    expect((await tenant.call('GET', '/hecate/v1/settings/providers')).status).toBe(200);
  });

  it('only the operator token grants admin or creates keys for another tenant', async () => {
    const admin = await tenant.call('POST', '/hecate/v1/api-keys', { name: 'escalate', scopes: ['operator', 'admin'] });
    expect(admin.status).toBe(403);
    const other = await tenant.call('POST', '/hecate/v1/api-keys', { name: 'other', scopes: ['operator'], tenant_id: 'globex' });
    expect(other.status).toBe(403);
    const granted = await op.ok('POST', '/hecate/v1/api-keys', { name: 'delegate', scopes: ['operator', 'admin'], tenant_id: 'acme' });
    const delegate = new Client(op.url, granted.secret as string);
    expect(
      (
        await delegate.call('PUT', '/hecate/v1/settings/pricing/shared/gpt-4o-mini', {
          input_micros_usd_per_million_tokens: 5,
          output_micros_usd_per_million_tokens: 7,
        })
      ).status,
    ).not.toBe(403);
  });

  it("changing a provider's base_url drops its key unless the same request sets one", async () => {
    const chat = () => op.call('POST', '/v1/chat/completions', { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] });
    expect((await chat()).status).toBe(200);
    expect(real.requests.at(-1)!.headers.authorization).toBe('Bearer sk-shared-provider-key');
    await op.ok('PATCH', '/hecate/v1/settings/providers/shared', { base_url: `${attacker.url}/v1` });
    // Without its key the cloud provider is not routable (credential_missing): nothing, least of all the key, goes there.
    const moved = await chat();
    expect(moved.status).toBe(422);
    expect(attacker.requests.filter((r) => r.path === '/v1/chat/completions')).toHaveLength(0);
    for (const r of attacker.requests) expect(JSON.stringify(r.headers)).not.toContain('sk-shared-provider-key');
    await op.ok('PATCH', '/hecate/v1/settings/providers/shared', { base_url: `${real.url}/v1`, api_key: 'sk-new-key' });
    expect((await chat()).status).toBe(200);
    expect(real.requests.at(-1)!.headers.authorization).toBe('Bearer sk-new-key');
    const shown = (await op.ok('GET', '/hecate/v1/settings/providers/shared')) as Json;
    expect(JSON.stringify(shown)).not.toContain('sk-new-key');
  });
});
