import { scaledStackEnv } from '../../support/harness';
import { statSync } from 'node:fs';
import { join } from 'node:path';
import OpenAI from 'openai';
import { ScratchDatabase, sql, uniqueId, waitFor } from '../../support/infra';
import { embeddedEnv, freePort, ServerProcess, startServer } from '../../support/server-process';
import { api, fakeUpstream, FakeUpstream, OPERATOR_TOKEN, post, providerEnv, seenBodies, startGateway } from './gateway-harness';

type Check = { name: string; status: string; reason: string; message: string; operator_action?: string };
type Status = {
  name: string;
  kind: string;
  routing_ready: boolean;
  routing_blocked_reason?: string;
  credential_state: string;
  models: string[];
  readiness_checks: Check[];
};

const LIMITED_KEY = 'sk-e2e-limited-provider-key-0004';
const STORED_KEY = 'sk-e2e-stored-provider-key-0005';
const PRIVATE_KEY = 'sk-e2e-private-provider-key-0006';

describe('providers: presets, readiness, settings, capabilities, pricing (embedded)', () => {
  let good: FakeUpstream;
  let empty: FakeUpstream;
  let limited: FakeUpstream;
  let server: ServerProcess;
  let dataDir: string;

  beforeAll(async () => {
    good = await fakeUpstream({ models: ['gpt-4o-mini', 'qwen2.5-coder'] });
    empty = await fakeUpstream({ models: [] });
    limited = await fakeUpstream({ models: ['m-limited'], requireKey: LIMITED_KEY });
    const env = embeddedEnv();
    dataDir = env.GATEWAY_DATA_DIR;
    server = await startGateway({
      ...env,
      PROVIDER_OPENAI_DEFAULT_MODEL: 'gpt-4o-mini',
      ...providerEnv('good', good, { kind: 'local' }),
      ...providerEnv('empty', empty, { kind: 'local' }),
      ...providerEnv('limited', limited, { kind: 'local', key: LIMITED_KEY }),
      ...providerEnv('priv', good, { kind: 'cloud', key: PRIVATE_KEY }),
      PROVIDER_DEAD_BASE_URL: `http://127.0.0.1:${await freePort()}/v1`,
      PROVIDER_DEAD_KIND: 'local',
      PROVIDER_META_BASE_URL: 'http://169.254.169.254/v1',
      PROVIDER_META_KIND: 'local',
    });
  });
  afterEach(() => {
    good.reset();
    limited.reset();
  });
  afterAll(async () => {
    await server?.stop();
    await Promise.all([good, empty, limited].map((u) => u?.close()));
  });

  const statusOf = async (name: string, refresh = false) =>
    (await api<{ data: Status[] }>(server.url, `/hecate/v1/providers/status${refresh ? '?refresh=1' : ''}`)).body.data.find((s) => s.name === name)!;
  const check = (s: Status, name: string) => s.readiness_checks.find((c) => c.name === name)!;

  it('lists the 21 cloud and 4 local presets', async () => {
    const res = await api<{ object: string; data: Array<Record<string, string>> }>(server.url, '/hecate/v1/providers/presets');
    expect(res.body.object).toBe('provider_presets');
    expect(res.body.data.filter((p) => p.kind === 'cloud')).toHaveLength(21);
    expect(res.body.data.filter((p) => p.kind === 'local').map((p) => p.id)).toEqual(['llamacpp', 'lmstudio', 'localai', 'ollama']);
    expect(res.body.data.find((p) => p.id === 'openai')).toMatchObject({
      name: 'OpenAI',
      kind: 'cloud',
      protocol: 'openai',
      base_url: 'https://api.openai.com/v1',
      api_key_env: 'PROVIDER_OPENAI_API_KEY',
      default_model: 'gpt-5.4-mini',
      docs_url: expect.stringMatching(/^https:/),
      env_snippet: 'PROVIDER_OPENAI_API_KEY=your_api_key_here',
    });
    expect(res.body.data.find((p) => p.id === 'anthropic')).toMatchObject({ protocol: 'anthropic', base_url: 'https://api.anthropic.com/v1' });
  });

  it('reports a routable provider with the four checks', async () => {
    const s = await statusOf('good');
    expect(s).toMatchObject({ kind: 'local', routing_ready: true, credential_state: 'not_required', models: ['gpt-4o-mini', 'qwen2.5-coder'] });
    expect(s.readiness_checks.map((c) => [c.name, c.status, c.reason])).toEqual([
      ['credentials', 'ok', 'not_required'],
      ['models', 'ok', 'models_discovered'],
      ['health', 'ok', 'healthy'],
      ['routing', 'ok', 'routable'],
    ]);
  });

  it('explains missing credentials', async () => {
    const s = await statusOf('openai');
    expect(s.routing_ready).toBe(false);
    expect(s.routing_blocked_reason).toBe('credential_missing');
    expect(check(s, 'credentials')).toMatchObject({
      status: 'blocked',
      reason: 'credential_missing',
      operator_action: expect.stringContaining('PROVIDER_OPENAI_API_KEY'),
    });
    expect(check(s, 'routing')).toMatchObject({ status: 'blocked', reason: 'credential_missing' });
  });

  it('explains a provider without models', async () => {
    const s = await statusOf('empty', true);
    expect(s.routing_blocked_reason).toBe('no_models');
    expect(check(s, 'models')).toMatchObject({ status: 'blocked', reason: 'no_models', operator_action: expect.stringContaining('load at least one model') });
  });

  it('explains an unreachable provider', async () => {
    const s = await statusOf('dead', true);
    expect(s.routing_blocked_reason).toBe('provider_unhealthy');
    expect(check(s, 'health')).toMatchObject({ status: 'blocked', reason: 'provider_unhealthy', operator_action: expect.any(String) });
  });

  it('explains a rate-limited provider after it answered 429', async () => {
    limited.script({ status: 429, headers: { 'retry-after': '30' } });
    const res = await post(server.url, '/v1/chat/completions', { model: 'm-limited', messages: [{ role: 'user', content: 'x' }] });
    expect(res.status).toBe(429);
    expect(res.body).toMatchObject({ error: { type: 'provider_rate_limited' } });
    const s = await statusOf('limited');
    expect(s.routing_blocked_reason).toBe('provider_rate_limited');
    expect(check(s, 'health')).toMatchObject({ status: 'blocked', reason: 'provider_rate_limited', operator_action: expect.stringContaining('cooldown') });
  });

  it('refuses a cloud-metadata URL and a private URL for a cloud provider', async () => {
    const meta = await statusOf('meta');
    expect(meta.routing_blocked_reason).toBe('provider_unhealthy');
    expect(check(meta, 'health')).toMatchObject({ status: 'blocked', reason: 'url_blocked' });
    expect(check(meta, 'models')).toMatchObject({ status: 'blocked', reason: 'url_blocked' });
    const priv = await statusOf('priv');
    expect(check(priv, 'health')).toMatchObject({ status: 'blocked', reason: 'private_address' });
    const pinned = await post(server.url, '/v1/chat/completions', { provider: 'meta', model: 'anything', messages: [{ role: 'user', content: 'x' }] });
    expect(pinned.status).toBe(503);
    expect(pinned.body).toMatchObject({ error: { type: 'route_impossible' } });
  });

  it('flags a provider URL that points back at this gateway as self_referential', async () => {
    const created = await post(server.url, '/hecate/v1/settings/providers', { custom_name: 'loop', base_url: `${server.url}/v1`, kind: 'local' });
    expect(created.status).toBe(201);
    const s = await statusOf('loop');
    expect(s.routing_ready).toBe(false);
    expect(check(s, 'health')).toMatchObject({ status: 'blocked', reason: 'self_referential', operator_action: expect.any(String) });
    expect((await api(server.url, '/hecate/v1/settings/providers/loop', { method: 'DELETE' })).status).toBe(200);
  });

  it('manages providers: create (several instances of a preset), edit, set/clear the key, delete; keys are never returned', async () => {
    const created = await post<{ data: Record<string, unknown> }>(server.url, '/hecate/v1/settings/providers', {
      preset_id: 'ollama',
      custom_name: 'ollama-gpu',
      base_url: `${good.url}/v1`,
      api_key: STORED_KEY,
    });
    expect(created.status).toBe(201);
    expect(created.body.data).toMatchObject({
      id: 'ollama_gpu',
      preset_id: 'ollama',
      kind: 'local',
      protocol: 'openai',
      source: 'settings',
      credential_state: 'configured',
      api_key_configured: true,
    });
    expect(JSON.stringify(created.body)).not.toContain(STORED_KEY);
    const second = await post(server.url, '/hecate/v1/settings/providers', { preset_id: 'ollama', custom_name: 'ollama-cpu', base_url: `${good.url}/v1` });
    expect(second.status).toBe(201);
    expect((await post(server.url, '/hecate/v1/settings/providers', { preset_id: 'ollama', custom_name: 'ollama-gpu' })).status).toBe(409);
    expect((await post(server.url, '/hecate/v1/settings/providers', { preset_id: 'nope' })).status).toBe(400);

    // The stored key reaches the upstream.
    const chat = await post(server.url, '/v1/chat/completions', {
      provider: 'ollama_gpu',
      model: 'qwen2.5-coder',
      messages: [{ role: 'user', content: 'hi' }],
    });
    expect(chat.status).toBe(200);
    expect(good.requests.find((r) => r.method === 'POST')?.apiKey).toBe(STORED_KEY);

    const patched = await api<{ data: Record<string, unknown> }>(server.url, '/hecate/v1/settings/providers/ollama_gpu', {
      method: 'PATCH',
      body: JSON.stringify({ default_model: 'qwen2.5-coder' }),
    });
    expect(patched.body.data.default_model).toBe('qwen2.5-coder');
    const cleared = await api<{ data: Record<string, unknown> }>(server.url, '/hecate/v1/settings/providers/ollama_gpu/api-key', {
      method: 'PUT',
      body: JSON.stringify({ api_key: null }),
    });
    expect(cleared.body.data).toMatchObject({ credential_state: 'not_required', api_key_configured: false });
    const list = await api<{ data: Array<Record<string, unknown>> }>(server.url, '/hecate/v1/settings/providers');
    expect(list.body.data.map((p) => p.id)).toEqual(expect.arrayContaining(['good', 'ollama_gpu', 'ollama_cpu', 'openai']));
    expect((await api(server.url, '/hecate/v1/settings/providers/ollama_gpu', { method: 'DELETE' })).status).toBe(200);
    expect((await api(server.url, '/hecate/v1/settings/providers/ollama_cpu', { method: 'DELETE' })).status).toBe(200);
    expect((await api(server.url, '/hecate/v1/settings/providers/ollama_gpu', { method: 'DELETE' })).status).toBe(404);
    const envDelete = await api<{ error: Record<string, string> }>(server.url, '/hecate/v1/settings/providers/good', { method: 'DELETE' });
    expect(envDelete.status).toBe(409);
    expect(envDelete.body.error.operator_action).toContain('PROVIDER_GOOD_');
  });

  it('generates the embedded secret key with mode 0600', () => {
    expect(statSync(join(dataDir, 'secret.key')).mode & 0o777).toBe(0o600);
  });

  it('applies capability overrides over probes over the catalog', async () => {
    const caps = async () => {
      const models = await api<{ data: Array<{ id: string; owned_by: string; metadata: { capabilities: Record<string, unknown> } }> }>(
        server.url,
        '/v1/models',
      );
      return models.body.data.find((m) => m.id === 'qwen2.5-coder' && m.owned_by === 'good')!.metadata.capabilities;
    };
    // assistant_prefill unknown: the protocol's default applies (docs/takeover.md).
    expect(await caps()).toMatchObject({ tool_calling: 'unknown', assistant_prefill: null, source: 'provider' });
    const probe = await post<{ object: string; data: Record<string, unknown> }>(server.url, '/hecate/v1/model-capabilities/probes', {
      provider: 'good',
      model: 'qwen2.5-coder',
      tool_calling: 'basic',
      note: 'probe ok',
    });
    expect(probe.status).toBe(200);
    expect(probe.body).toMatchObject({ object: 'model_capability', data: { source: 'manual_probe', tool_calling: 'basic' } });
    expect(await caps()).toMatchObject({ tool_calling: 'basic', source: 'manual_probe' });
    const override = await api<{ object: string; data: Record<string, unknown> }>(server.url, '/hecate/v1/model-capabilities/overrides', {
      method: 'PUT',
      body: JSON.stringify({
        provider: 'good',
        model: 'qwen2.5-coder',
        tool_calling: 'none',
        streaming: true,
        max_context_tokens: 32768,
        assistant_prefill: true,
        note: 'no tools',
      }),
    });
    expect(override.status).toBe(200);
    expect(override.body).toMatchObject({
      object: 'model_capability',
      data: {
        provider: 'good',
        model: 'qwen2.5-coder',
        tool_calling: 'none',
        max_context_tokens: 32768,
        assistant_prefill: true,
        source: 'operator_override',
        note: 'no tools',
        updated_at: expect.any(String),
      },
    });
    expect(await caps()).toMatchObject({ tool_calling: 'none', max_context_tokens: 32768, assistant_prefill: true, source: 'operator_override' });
    // A tools request skips a model whose tool calling is `none`.
    const withTools = await post(server.url, '/v1/chat/completions', {
      model: 'qwen2.5-coder',
      tools: [{ type: 'function', function: { name: 'f', parameters: {} } }],
      messages: [{ role: 'user', content: 'x' }],
    });
    expect(withTools.status).toBe(503);
    expect(withTools.body).toMatchObject({ error: { type: 'route_impossible', candidates: [{ provider: 'good', skip_reason: 'tool_calling_unsupported' }] } });
    const invalid = await api(server.url, '/hecate/v1/model-capabilities/overrides', {
      method: 'PUT',
      body: JSON.stringify({ provider: 'good', model: 'x', tool_calling: 'unknown' }),
    });
    expect(invalid.status).toBe(400);
    const notBoolean = await api(server.url, '/hecate/v1/model-capabilities/overrides', {
      method: 'PUT',
      body: JSON.stringify({ provider: 'good', model: 'x', tool_calling: 'basic', assistant_prefill: 'yes' }),
    });
    expect(notBoolean.status).toBe(400);
    const removed = await api(server.url, '/hecate/v1/model-capabilities/overrides?provider=good&model=qwen2.5-coder', { method: 'DELETE' });
    expect(removed.status).toBe(200);
    expect(await caps()).toMatchObject({ tool_calling: 'basic', assistant_prefill: null, source: 'manual_probe' });
  });

  it('prices calls from operator overrides (local providers are free otherwise)', async () => {
    const free = await post(server.url, '/v1/chat/completions', { provider: 'good', model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'price me' }] });
    expect(free.headers.get('x-runtime-cost-usd')).toBe('0.000000');
    const put = await api(server.url, '/hecate/v1/settings/pricing/good/gpt-4o-mini', {
      method: 'PUT',
      body: JSON.stringify({ input_micros_usd_per_million_tokens: 2_000_000, output_micros_usd_per_million_tokens: 8_000_000 }),
    });
    expect(put.status).toBe(200);
    expect(put.body).toMatchObject({
      data: { provider: 'good', model: 'gpt-4o-mini', cached_input_micros_usd_per_million_tokens: 2_000_000, source: 'manual' },
    });
    const paid = await post<{ usage: { prompt_tokens: number; completion_tokens: number } }>(server.url, '/v1/chat/completions', {
      provider: 'good',
      model: 'gpt-4o-mini',
      messages: [{ role: 'user', content: 'price me' }],
    });
    const micros = Math.ceil((paid.body.usage.prompt_tokens * 2_000_000 + paid.body.usage.completion_tokens * 8_000_000) / 1e6);
    expect(paid.headers.get('x-runtime-cost-usd')).toBe((micros / 1e6).toFixed(6));
    const events = await api<{ data: Array<{ cost_micros_usd: number }> }>(
      server.url,
      `/hecate/v1/usage/events?request_id=${paid.headers.get('x-request-id')}`,
    );
    expect(events.body.data[0].cost_micros_usd).toBe(micros);
    expect((await api(server.url, '/hecate/v1/settings/pricing/good/gpt-4o-mini', { method: 'DELETE' })).status).toBe(200);
  });

  it('answers local discovery in the seed shape without creating providers', async () => {
    const res = await api<{ object: string; data: Array<Record<string, unknown>> }>(server.url, '/hecate/v1/settings/providers/local-discovery');
    expect(res.body.object).toBe('local_provider_discovery');
    expect(res.body.data.map((d) => d.preset_id)).toEqual(['llamacpp', 'lmstudio', 'localai', 'ollama']);
    for (const d of res.body.data) {
      expect(['running', 'installed', 'not_detected']).toContain(d.status);
      expect(d).toMatchObject({
        name: expect.any(String),
        base_url: expect.any(String),
        probe_url: expect.any(String),
        command: expect.any(String),
        command_available: expect.any(Boolean),
        http_available: expect.any(Boolean),
        model_count: expect.any(Number),
        models: expect.any(Array),
      });
    }
    expect(res.body.data.find((d) => d.preset_id === 'ollama')!.probe_url).toBe('http://127.0.0.1:11434/api/tags');
  });

  it('never reveals provider keys in responses or logs', async () => {
    await api(server.url, '/hecate/v1/traces?limit=100');
    await api(server.url, '/hecate/v1/usage/events?limit=100');
    for (const body of seenBodies) for (const key of [LIMITED_KEY, STORED_KEY, PRIVATE_KEY]) expect(body).not.toContain(key);
    for (const key of [LIMITED_KEY, STORED_KEY, PRIVATE_KEY]) expect(server.output()).not.toContain(key);
  });
});

describe('providers in scaled mode: encrypted at rest, changes reach every api process', () => {
  let db: ScratchDatabase;
  let up: FakeUpstream;
  const servers: ServerProcess[] = [];
  const KEY = 'sk-e2e-scaled-stored-key-0007';

  beforeAll(async () => {
    up = await fakeUpstream({ models: ['m-scaled'], requireKey: KEY });
    let env: Record<string, string>;
    ({ env, db } = await scaledStackEnv({ token: OPERATOR_TOKEN, migrateOnBoot: true }));
    const keyed = { ...env, GATEWAY_SECRET_KEY: 'c2NhbGVkLXNlY3JldC1rZXktZm9yLWUyZS10ZXN0czAx' };
    // A third process without GATEWAY_SECRET_KEY, on its own prefix, with an env-held key.
    const envKeyed = { ...env, GATEWAY_REDIS_PREFIX: uniqueId('p'), ...providerEnv('envkey', up, { kind: 'local', key: KEY }) };
    servers.push(...(await Promise.all([startServer('api', keyed), startServer('api', keyed), startServer('api', envKeyed)])));
  });
  afterAll(async () => {
    await Promise.all(servers.map((s) => s.stop()));
    await up?.close();
    await db?.drop();
  });

  it('stores the key encrypted, and another process routes with it after the change event', async () => {
    const created = await post(servers[0].url, '/hecate/v1/settings/providers', {
      custom_name: 'shared',
      base_url: `${up.url}/v1`,
      kind: 'local',
      api_key: KEY,
    });
    expect(created.status).toBe(201);
    const rows = await sql<{ api_key_ciphertext: string }>(db.url, `SELECT api_key_ciphertext FROM gateway_providers WHERE id = 'shared'`);
    expect(rows[0].api_key_ciphertext).toMatch(/^v1:/);
    expect(rows[0].api_key_ciphertext).not.toContain(KEY);
    await waitFor(
      async () => (await api<{ data: Array<{ id: string }> }>(servers[1].url, '/hecate/v1/settings/providers')).body.data.some((p) => p.id === 'shared'),
      { what: 'provider on the second process' },
    );
    const client = new OpenAI({ baseURL: `${servers[1].url}/v1`, apiKey: OPERATOR_TOKEN, maxRetries: 0 });
    const res = await client.chat.completions.create({ model: 'm-scaled', messages: [{ role: 'user', content: 'hi' }] });
    expect(res.choices[0].message.content).toBe('echo: hi');
  });

  it('refuses to store a key without GATEWAY_SECRET_KEY but still routes with an env-held key', async () => {
    const refused = await api<{ error: Record<string, string> }>(servers[2].url, '/hecate/v1/settings/providers/envkey/api-key', {
      method: 'PUT',
      body: JSON.stringify({ api_key: 'sk-new-key-123456' }),
    });
    expect(refused.status).toBe(409);
    expect(refused.body.error.message).toContain('GATEWAY_SECRET_KEY');
    const ok = await post(servers[2].url, '/v1/chat/completions', { model: 'm-scaled', messages: [{ role: 'user', content: 'env' }] });
    expect(ok.status).toBe(200);
    for (const s of servers) expect(s.output()).not.toContain(KEY);
  });
});
