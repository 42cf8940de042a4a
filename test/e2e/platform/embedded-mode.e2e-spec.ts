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

  it('uses the embedded backends', async () => {
    const res = await fetch(`${server.url}/hecate/v1/system/stats`, { headers: { authorization: `Bearer ${OPERATOR_TOKEN}` } });
    expect(((await res.json()) as { data: unknown }).data).toMatchObject({ queue_backend: 'in_process', storage_backend: 'pglite', workers: 1 });
  });
});

describe('embedded mode without GATEWAY_AUTH_TOKEN', () => {
  it('treats callers as the local operator on loopback', async () => {
    const server = await startServer('all', embeddedEnv());
    try {
      expect((await fetch(`${server.url}/hecate/v1/system/stats`)).status).toBe(200);
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
