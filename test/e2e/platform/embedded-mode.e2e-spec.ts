import { embeddedEnv, ServerProcess, startServer } from '../../support/server-process';
import { describePlatformHttp, OPERATOR_TOKEN } from './platform-checks';

describe('embedded mode: `npm start` (api + worker in one process, PGlite, in-process adapters)', () => {
  let server: ServerProcess;
  beforeAll(async () => {
    // From an empty data directory, as a first `npm start`: the server creates and migrates its PGlite database.
    server = await startServer('all', { ...embeddedEnv({ empty: true }), GATEWAY_AUTH_TOKEN: OPERATOR_TOKEN });
  });
  afterAll(async () => {
    if (server) expect(await server.stop('SIGTERM')).toBe(0);
  });

  describePlatformHttp(() => ({ url: server.url, logs: () => server.output() }));

  it('prints JSON on a pipe: a first start (it migrates) says a handful of info lines, the last one the summary', async () => {
    const records = server
      .output()
      .split('\n')
      .filter((l) => l.trim() !== '')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    const upToListening = records.slice(0, records.findIndex((r) => r.msg === 'hecate listening') + 1);
    expect(upToListening.length).toBeGreaterThan(0);
    expect(upToListening.length).toBeLessThanOrEqual(10);
    expect(upToListening.map((r) => r.context)).not.toContain('RouterExplorer');
    expect(upToListening.at(-1)).toMatchObject({
      role: 'all',
      url: server.url,
      mode: 'embedded',
      data: expect.any(String),
      providers: 0,
      next: expect.stringContaining('PROVIDER_OPENAI_API_KEY='),
      console: `${server.url}/`,
      api_docs: `${server.url}/docs`,
    });
  });

  it('uses the embedded backends', async () => {
    const res = await fetch(`${server.url}/hecate/v1/system/stats`, { headers: { authorization: `Bearer ${OPERATOR_TOKEN}` } });
    expect(((await res.json()) as { data: unknown }).data).toMatchObject({ queue_backend: 'in_process', storage_backend: 'pglite', workers: 1 });
  });
});

describe('embedded mode without GATEWAY_AUTH_TOKEN', () => {
  it('treats callers as the local operator on loopback; on a terminal it prints readable lines, at most 15 to the summary', async () => {
    const server = await startServer('all', embeddedEnv(), { terminal: true });
    try {
      expect((await fetch(`${server.url}/hecate/v1/system/stats`)).status).toBe(200);
      const lines = server.output().replace(/\r/g, '').split('\n');
      const summary = lines.findIndex((l) => /^\d\d:\d\d:\d\d info {2}hecate listening/.test(l));
      expect(summary).toBeGreaterThanOrEqual(0);
      const shown = lines.slice(
        0,
        lines.findIndex((l, i) => i > summary && !l.startsWith(' ')),
      );
      expect(shown.length).toBeLessThanOrEqual(15);
      expect(shown.some((l) => l.startsWith('{'))).toBe(false);
      expect(shown.slice(summary + 1).map((l) => l.trim().split(/\s+/)[0])).toEqual(['url', 'mode', 'data', 'providers', 'next', 'console', 'api_docs']);
      expect(shown.join('\n')).toContain('PROVIDER_OPENAI_API_KEY=');
    } finally {
      await server.stop();
    }
  });

  it('refuses a non-loopback HOST unless insecure bind is allowed', async () => {
    const server = await startServer('all', { ...embeddedEnv(), HOST: '0.0.0.0' }, { waitHealthy: false });
    const { code } = await server.exited;
    expect(code).toBe(1);
    expect(server.output()).toContain('HOST: refusing to bind 0.0.0.0 without GATEWAY_AUTH_TOKEN');
  });
});
