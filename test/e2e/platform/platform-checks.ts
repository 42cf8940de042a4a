import { request } from 'node:http';
import { waitFor } from '../../support/infra';

export const OPERATOR_TOKEN = 'op-token-for-e2e-0123456789';

export interface Target {
  url: string;
  /** Worker output (scaled) or the single process (embedded), for leak checks. */
  logs(): string;
}

export const auth = (token: string) => ({ authorization: `Bearer ${token}` });

export async function json(res: Response): Promise<Record<string, unknown>> {
  return (await res.json()) as Record<string, unknown>;
}

export async function createKey(t: Target, scopes: string[], token = OPERATOR_TOKEN, extra: Record<string, unknown> = {}) {
  const res = await fetch(`${t.url}/hecate/v1/api-keys`, {
    method: 'POST',
    headers: { ...auth(token), 'content-type': 'application/json' },
    body: JSON.stringify({ name: `k-${scopes.join('-')}`, scopes, ...extra }),
  });
  return { status: res.status, body: (await res.json()) as { data: { id: string; secret: string; prefix: string; tenant_id: string } } };
}

/** The HTTP platform behaviour both modes must share (issue 2 "Both modes boot the same app"). */
export function describePlatformHttp(getTarget: () => Target): void {
  it('serves liveness without dependencies', async () => {
    const res = await fetch(`${getTarget().url}/healthz`);
    expect(res.status).toBe(200);
    const body = await json(res);
    expect(body).toMatchObject({ status: 'ok', version: expect.any(String) });
    expect(new Date(body.time as string).getTime()).not.toBeNaN();
  });

  it('reports readiness of its dependencies', async () => {
    const res = await fetch(`${getTarget().url}/readyz`);
    expect(res.status).toBe(200);
    const body = await json(res);
    expect(body.status).toBe('ok');
    expect(body.details).toMatchObject({ database: { status: 'up' }, queue: { status: 'up' } });
  });

  it('exposes Prometheus metrics with HTTP durations by route and queue job counts', async () => {
    await fetch(`${getTarget().url}/healthz`);
    const res = await fetch(`${getTarget().url}/metrics`);
    expect(res.status).toBe(200);
    const text = await res.text();
    expect(text).toMatch(/hecate_http_request_duration_seconds_bucket\{[^}]*route="\/healthz"[^}]*status="200"/);
    expect(text).toMatch(/hecate_queue_jobs\{queue="system",state="waiting"\}/);
    expect(text).toMatch(/hecate_process_resident_memory_bytes/);
  });

  it('answers unknown API-shaped paths with the 404 envelope and request/trace ids', async () => {
    const res = await fetch(`${getTarget().url}/hecate/v1/nope`, { headers: { ...auth(OPERATOR_TOKEN), 'x-request-id': 'my-request-42' } });
    expect(res.status).toBe(404);
    expect(res.headers.get('x-request-id')).toBe('my-request-42');
    expect(res.headers.get('x-trace-id')).toMatch(/^[0-9a-f]{32}$/);
    const body = await json(res);
    expect(body).toEqual({
      error: expect.objectContaining({
        type: 'not_found',
        request_id: 'my-request-42',
        trace_id: res.headers.get('x-trace-id'),
        user_message: expect.any(String),
        operator_action: expect.any(String),
      }),
    });
  });

  it('renders /v1 errors in the OpenAI shape', async () => {
    const res = await fetch(`${getTarget().url}/v1/does-not-exist`, { headers: auth(OPERATOR_TOKEN) });
    expect(res.status).toBe(404);
    const body = (await json(res)) as { error: Record<string, unknown> };
    expect(body.error).toMatchObject({ type: 'not_found', code: 'not_found', param: null, request_id: res.headers.get('x-request-id') });
  });

  it('refuses malformed JSON with 400 and oversized bodies with 413', async () => {
    const bad = await fetch(`${getTarget().url}/hecate/v1/api-keys`, {
      method: 'POST',
      headers: { ...auth(OPERATOR_TOKEN), 'content-type': 'application/json' },
      body: '{not json',
    });
    expect(bad.status).toBe(400);
    expect(((await json(bad)).error as { type: string }).type).toBe('invalid_request');
    // Declare a 33 MiB body and read the answer before sending it: the server refuses on the length alone.
    const big = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      const req = request(`${getTarget().url}/hecate/v1/api-keys`, {
        method: 'POST',
        headers: { ...auth(OPERATOR_TOKEN), 'content-type': 'application/json', 'content-length': String(33 * 1024 * 1024) },
      });
      req.on('response', (res) => {
        let body = '';
        res.on('data', (d: Buffer) => (body += d.toString()));
        res.on('end', () => {
          resolve({ status: res.statusCode ?? 0, body });
          req.destroy();
        });
      });
      req.on('error', reject);
      req.flushHeaders();
    });
    expect(big.status).toBe(413);
    expect((JSON.parse(big.body) as { error: { type: string } }).error.type).toBe('payload_too_large');
  });

  it('refuses unknown fields and invalid values with the field named', async () => {
    const res = await fetch(`${getTarget().url}/hecate/v1/api-keys`, {
      method: 'POST',
      headers: { ...auth(OPERATOR_TOKEN), 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'k', scopes: ['root'], extra: 1 }),
    });
    expect(res.status).toBe(400);
    const message = ((await json(res)).error as { message: string }).message;
    expect(message).toMatch(/scopes/);
    expect(message).toMatch(/extra/);
  });

  it('requires a credential: 401 without or with a wrong one', async () => {
    const none = await fetch(`${getTarget().url}/hecate/v1/system/stats`);
    expect(none.status).toBe(401);
    expect(((await json(none)).error as { type: string }).type).toBe('unauthorized');
    const wrong = await fetch(`${getTarget().url}/hecate/v1/system/stats`, { headers: auth('nope') });
    expect(wrong.status).toBe(401);
    const wrongKey = await fetch(`${getTarget().url}/hecate/v1/system/stats`, { headers: auth('hk_AAAAAAAAAAAA_' + 'a'.repeat(43)) });
    expect(wrongKey.status).toBe(401);
    // The operator token, once accepted, is remembered; near misses of it still fail.
    expect((await fetch(`${getTarget().url}/hecate/v1/system/stats`, { headers: auth(OPERATOR_TOKEN) })).status).toBe(200);
    for (const nearMiss of [`${OPERATOR_TOKEN}x`, OPERATOR_TOKEN.slice(0, -1), OPERATOR_TOKEN.toUpperCase()]) {
      expect((await fetch(`${getTarget().url}/hecate/v1/system/stats`, { headers: auth(nearMiss) })).status).toBe(401);
    }
    expect((await fetch(`${getTarget().url}/hecate/v1/system/stats`, { headers: auth(OPERATOR_TOKEN) })).status).toBe(200);
  });

  it('issues API keys shown once, enforces scopes, accepts Bearer and x-api-key, and rejects revoked keys', async () => {
    const t = getTarget();
    const created = await createKey(t, ['inference']);
    expect(created.status).toBe(201);
    const { secret, id, prefix } = created.body.data;
    expect(secret).toMatch(/^hk_[A-Za-z0-9]{12}_/);
    expect(secret.startsWith(prefix)).toBe(true);

    const listed = await json(await fetch(`${t.url}/hecate/v1/api-keys`, { headers: auth(OPERATOR_TOKEN) }));
    const row = (listed.data as Record<string, unknown>[]).find((k) => k.id === id);
    expect(row).toMatchObject({ id, prefix, scopes: ['inference'], revoked_at: null });
    expect(JSON.stringify(listed)).not.toContain(secret);

    // A live inference key is recognised (403 wrong scope, not 401) on an operator route, in either header.
    const forbidden = await fetch(`${t.url}/hecate/v1/system/stats`, { headers: auth(secret) });
    expect(forbidden.status).toBe(403);
    expect(((await json(forbidden)).error as { type: string }).type).toBe('forbidden');
    expect((await fetch(`${t.url}/hecate/v1/system/stats`, { headers: { 'x-api-key': secret } })).status).toBe(403);

    const operatorKey = await createKey(t, ['operator']);
    const stats = await fetch(`${t.url}/hecate/v1/system/stats`, { headers: { 'x-api-key': operatorKey.body.data.secret } });
    expect(stats.status).toBe(200);

    const revoked = await fetch(`${t.url}/hecate/v1/api-keys/${id}`, { method: 'DELETE', headers: auth(OPERATOR_TOKEN) });
    expect(revoked.status).toBe(200);
    expect(((await json(revoked)).data as { revoked_at: string | null }).revoked_at).not.toBeNull();
    const after = await fetch(`${t.url}/hecate/v1/system/stats`, { headers: auth(secret) });
    expect(after.status).toBe(401);
  });

  it('scopes API keys to their tenant', async () => {
    const t = getTarget();
    const tenantKey = await createKey(t, ['operator'], OPERATOR_TOKEN, { tenant_id: 'tenant-b' });
    expect(tenantKey.body.data.tenant_id).toBe('tenant-b');
    const own = await json(await fetch(`${t.url}/hecate/v1/api-keys`, { headers: auth(tenantKey.body.data.secret) }));
    const tenants = new Set((own.data as { tenant_id: string }[]).map((k) => k.tenant_id));
    expect([...tenants]).toEqual(['tenant-b']);
    const foreign = await createKey(t, ['inference']);
    const del = await fetch(`${t.url}/hecate/v1/api-keys/${foreign.body.data.id}`, { method: 'DELETE', headers: auth(tenantKey.body.data.secret) });
    expect(del.status).toBe(404);
  });

  it('runs a queue probe through the queue to a worker and back', async () => {
    const t = getTarget();
    const res = await fetch(`${t.url}/hecate/v1/system/queue-probes`, {
      method: 'POST',
      headers: { ...auth(OPERATOR_TOKEN), 'content-type': 'application/json' },
      body: '{}',
    });
    expect(res.status).toBe(202);
    const { id } = (await json(res)).data as { id: string };
    const done = await waitFor(
      async () => {
        const body = (await json(await fetch(`${t.url}/hecate/v1/system/queue-probes/${id}`, { headers: auth(OPERATOR_TOKEN) }))).data as {
          status: string;
          attempts: number;
          worker: string;
        };
        return body.status === 'completed' ? body : undefined;
      },
      { what: 'probe completion' },
    );
    expect(done.attempts).toBe(1);
    expect(done.worker).toMatch(/:\d+$/);
  });

  it('reports system stats', async () => {
    const res = await fetch(`${getTarget().url}/hecate/v1/system/stats`, { headers: auth(OPERATOR_TOKEN) });
    expect(res.status).toBe(200);
    const body = await json(res);
    expect(body.object).toBe('system_stats');
    expect(body.data).toMatchObject({
      queue_depth: expect.any(Number),
      workers: expect.any(Number),
      version: expect.any(String),
      uptime_s: expect.any(Number),
    });
  });

  it('never logs credentials', () => {
    expect(getTarget().logs()).not.toContain(OPERATOR_TOKEN);
    expect(getTarget().logs()).not.toMatch(/hk_[A-Za-z0-9]{12}_[A-Za-z0-9_-]{20,}/);
  });
}
