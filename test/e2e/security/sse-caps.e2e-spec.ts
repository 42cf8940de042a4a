import { HttpClient } from '../../support/http';
import { waitFor } from '../../support/infra';
import type { ServerProcess } from '../../support/server-process';
import { SseReader } from '../../support/sse';
import { Processes, scaledEnv, TOKEN } from '../tasks/tasks-harness';
import { createKey, OPERATOR_TOKEN, rawRequest, startSecured, type TenantKey } from './security-harness';

const FEED = '/hecate/v1/events/stream';

/** Opens a reader and waits for the answer's head: 200 (then it stays open) or a refusal. */
async function openStream(base: string, token: string, path = FEED): Promise<SseReader> {
  const reader = new SseReader(`${base}${path}`, { token });
  await reader.opened;
  return reader;
}

/** A refused open: the 429's status, type, scope and Retry-After (read whole, as a client would). */
async function refusal(base: string, token: string, path = FEED) {
  const r = await rawRequest(base, { path, headers: { authorization: `Bearer ${token}`, accept: 'text/event-stream' } });
  const error = r.body.error as { type?: string; limit_scope?: string } | undefined;
  return { status: r.status, type: error?.type, scope: error?.limit_scope, retryAfter: r.headers['retry-after'] };
}

async function healthzMs(base: string): Promise<number> {
  const started = Date.now();
  const r = await rawRequest(base, { path: '/healthz' });
  if (r.status !== 200) throw new Error(`/healthz answered ${r.status}`);
  return Date.now() - started;
}

/**
 * Issue 26, "SSE streams exhaust the api": one key opening hundreds of `/events/stream` readers took the api's heap.
 * Open reader streams are capped per credential and per process; beyond a cap the open answers 429
 * `stream_limit_exceeded` with Retry-After, and the api stays healthy.
 */
describe('open-stream caps', () => {
  describe('per key and per process (embedded, caps 3 and 8)', () => {
    let server: ServerProcess;
    let acme: TenantKey;
    let globex: TenantKey;
    let initech: TenantKey;
    const open: SseReader[] = [];

    beforeAll(async () => {
      server = await startSecured({ GATEWAY_SSE_MAX_STREAMS_PER_KEY: '3', GATEWAY_SSE_MAX_STREAMS: '8' });
      [acme, globex, initech] = await Promise.all([
        createKey(server.url, ['operator'], 'acme'),
        createKey(server.url, ['operator'], 'globex'),
        createKey(server.url, ['operator'], 'initech'),
      ]);
    }, 120_000);
    afterAll(async () => {
      for (const s of open) s.close();
      await server?.stop();
    });

    it('refuses a key its fourth reader of any kind with 429 and Retry-After; another key still opens; a closed stream frees its slot', async () => {
      const task = (await acme.client.ok('POST', '/hecate/v1/tasks', { title: 't', execution_kind: 'shell', shell_command: 'true' })) as { id: string };
      const run = (await acme.client.ok('POST', `/hecate/v1/tasks/${task.id}/start`)) as { id: string };
      const runStream = `/hecate/v1/tasks/${task.id}/runs/${run.id}/stream`;
      const mine = [
        await openStream(server.url, acme.secret),
        await openStream(server.url, acme.secret),
        await openStream(server.url, acme.secret, '/hecate/v1/agent-chat/active-sessions'),
      ];
      open.push(...mine);
      expect(mine.map((s) => s.status)).toEqual([200, 200, 200]);

      const refused = [
        await refusal(server.url, acme.secret),
        await refusal(server.url, acme.secret, runStream),
        await refusal(server.url, acme.secret, '/hecate/v1/agent-chat/active-sessions'),
      ];
      expect(refused).toEqual(refused.map(() => ({ status: 429, type: 'stream_limit_exceeded', scope: 'key', retryAfter: '5' })));

      const theirs = [await openStream(server.url, globex.secret), await openStream(server.url, globex.secret), await openStream(server.url, globex.secret)];
      open.push(...theirs);
      expect(theirs.map((s) => s.status)).toEqual([200, 200, 200]);
      expect(await healthzMs(server.url)).toBeLessThan(1_000);

      // The first stream goes away: acme may open one again (the release follows the socket's close).
      mine[0].close();
      const again = await waitFor(
        async () => {
          const s = await openStream(server.url, acme.secret);
          if (s.status === 200) return s;
          s.close();
          return undefined;
        },
        { timeoutMs: 10_000, what: 'a slot freed by a closed stream' },
      );
      open.push(again);
      expect(await refusal(server.url, acme.secret)).toMatchObject({ status: 429, scope: 'key' });
    });

    it('refuses every key once the process holds its cap, and still answers /healthz fast and non-stream routes', async () => {
      // 3 (acme) + 3 (globex) open from the test above; initech and the operator fill the process to 8.
      const more = [await openStream(server.url, initech.secret), await openStream(server.url, OPERATOR_TOKEN)];
      open.push(...more);
      expect(more.map((s) => s.status)).toEqual([200, 200]);
      expect(await refusal(server.url, initech.secret)).toEqual({ status: 429, type: 'stream_limit_exceeded', scope: 'process', retryAfter: '5' });
      expect(await refusal(server.url, OPERATOR_TOKEN)).toMatchObject({ status: 429, scope: 'process' });
      expect(await healthzMs(server.url)).toBeLessThan(1_000);
      expect((await new HttpClient(server.url, initech.secret).call('GET', '/hecate/v1/tasks')).status).toBe(200);
    });
  });

  describe('a scaled api with a 256 MB heap, many readers from one key and from many', () => {
    const procs = new Processes();
    let api: ServerProcess;
    let operator: HttpClient;
    const open: SseReader[] = [];
    const KEYS = 12;
    const PER_KEY = 40;

    beforeAll(async () => {
      const { env } = await scaledEnv({ GATEWAY_SSE_MAX_STREAMS_PER_KEY: '32', GATEWAY_SSE_MAX_STREAMS: '256' });
      [api] = await Promise.all([procs.start('api', { ...env, NODE_OPTIONS: '--max-old-space-size=256' }), procs.start('worker', env)]);
      operator = new HttpClient(api.url, TOKEN);
    }, 180_000);
    afterAll(async () => {
      for (const s of open) s.close();
      await procs.stopAll();
    });

    it(`holds ${KEYS * PER_KEY} reader opens (32 per key, 256 per process), keeps serving, and the api stays up`, async () => {
      const keys: string[] = [];
      for (let i = 0; i < KEYS; i++) {
        const r = await operator.call('POST', '/hecate/v1/api-keys', { name: `reader-${i}`, scopes: ['operator'], tenant_id: `t${i}` });
        keys.push((r.body as { data: { secret: string } }).data.secret);
      }
      const attempts = await Promise.all(keys.flatMap((k) => Array.from({ length: PER_KEY }, () => openStream(api.url, k))));
      open.push(...attempts);
      const byStatus = attempts.reduce<Record<number, number>>((acc, s) => ({ ...acc, [s.status]: (acc[s.status] ?? 0) + 1 }), {});
      expect(byStatus).toEqual({ 200: 256, 429: KEYS * PER_KEY - 256 });
      for (const k of keys) expect(attempts.filter((s, i) => keys[Math.floor(i / PER_KEY)] === k && s.status === 200).length).toBeLessThanOrEqual(32);
      expect(await healthzMs(api.url)).toBeLessThan(1_000);

      // Traffic while they are open: every reader of its tenant gets the events.
      const t0 = new HttpClient(api.url, keys[0]);
      for (let i = 0; i < 5; i++) await t0.ok('POST', '/hecate/v1/tasks', { title: `load-${i}`, execution_kind: 'shell', shell_command: 'true' });
      expect(await healthzMs(api.url)).toBeLessThan(1_000);
      expect(api.proc.exitCode).toBeNull();
      expect(api.output()).not.toMatch(/heap out of memory/i);

      // Closing them frees the process: a new reader opens.
      for (const s of open.splice(0)) s.close();
      const after = await waitFor(
        async () => {
          const s = await openStream(api.url, keys[KEYS - 1]);
          if (s.status === 200) return s;
          s.close();
          return undefined;
        },
        { timeoutMs: 15_000, what: 'a reader after the others closed' },
      );
      open.push(after);
      expect(api.proc.exitCode).toBeNull();
    }, 120_000);

    it('keeps each reader bounded whatever the stream holds: 32 readers replaying 4 events of 6 MB leave the 256 MB api up', async () => {
      for (const s of open.splice(0)) s.close();
      const r = await operator.call('POST', '/hecate/v1/api-keys', { name: 'big', scopes: ['operator'], tenant_id: 'big' });
      const key = (r.body as { data: { secret: string } }).data.secret;
      const tenant = new HttpClient(api.url, key);
      const task = (await tenant.ok('POST', '/hecate/v1/tasks', { title: 'big', execution_kind: 'shell', shell_command: 'sleep 20' })) as { id: string };
      const run = (await tenant.ok('POST', `/hecate/v1/tasks/${task.id}/start`)) as { id: string };
      const big = 'x'.repeat(6 * 1024 * 1024);
      for (let i = 0; i < 4; i++)
        await tenant.ok('POST', `/hecate/v1/tasks/${task.id}/runs/${run.id}/events`, { type: 'external.event', note: `big-${i}`, data: { big } });
      await tenant.ok('POST', `/hecate/v1/tasks/${task.id}/runs/${run.id}/events`, { type: 'external.event', note: 'small', data: { small: 'kept' } });

      const readers = await Promise.all(
        Array.from({ length: 32 }, (_, i) => openStream(api.url, key, i % 2 === 0 ? FEED : `/hecate/v1/tasks/${task.id}/runs/${run.id}/stream`)),
      );
      open.push(...readers);
      expect(readers.map((s) => s.status)).toEqual(readers.map(() => 200));
      // Every reader gets every event: the big ones announced by size, the small one whole.
      await waitFor(
        () => readers.every((s) => s.frames.filter((f) => f.data.includes('data_omitted')).length >= 4 && s.frames.some((f) => f.data.includes('"kept"'))),
        {
          timeoutMs: 60_000,
          what: 'every reader to see the big events announced and the small one whole',
        },
      );
      const omitted = JSON.parse(readers[0].frames.find((f) => f.data.includes('data_omitted'))!.data) as {
        data: { data: { data_omitted: { bytes: number } } };
      };
      expect(omitted.data.data.data_omitted.bytes).toBeGreaterThan(6 * 1024 * 1024);
      expect(await healthzMs(api.url)).toBeLessThan(1_000);
      expect(api.proc.exitCode).toBeNull();
      expect(api.output()).not.toMatch(/heap out of memory/i);
    }, 120_000);
  });
});
