import { ConfigValidationError, loadConfig } from './config.loader';
import { parseDurationMs } from './duration';

const problemsOf = (env: Record<string, string>): string[] => {
  try {
    loadConfig(env);
  } catch (err) {
    if (err instanceof ConfigValidationError) return err.problems;
    throw err;
  }
  return [];
};

describe('loadConfig', () => {
  it('defaults to embedded mode on loopback', () => {
    const config = loadConfig({});
    expect(config.mode).toBe('embedded');
    expect(config.server).toMatchObject({ host: '127.0.0.1', port: 8765, shutdownGraceMs: 25_000, bodyLimitBytes: 32 * 1024 * 1024 });
    expect(config.database.dataDir).toBe('.data');
  });

  it('is scaled when both DATABASE_URL and REDIS_URL are set', () => {
    expect(loadConfig({ DATABASE_URL: 'postgres://h/db', REDIS_URL: 'redis://h:6379' }).mode).toBe('scaled');
  });

  it('names the missing half when only one of DATABASE_URL / REDIS_URL is set', () => {
    expect(problemsOf({ DATABASE_URL: 'postgres://h/db' })).toEqual([expect.stringMatching(/^REDIS_URL: scaled mode needs both/)]);
    expect(problemsOf({ REDIS_URL: 'redis://h' })).toEqual([expect.stringMatching(/^DATABASE_URL: scaled mode needs both/)]);
  });

  it('names every bad variable at once', () => {
    const problems = problemsOf({ PORT: 'eighty', DATABASE_URL: 'mysql://x', REDIS_URL: 'redis://x', LOG_LEVEL: 'loud', WORKER_QUEUES: 'runs,nope' });
    const named = problems.map((p) => p.split(':')[0]);
    expect(named).toEqual(expect.arrayContaining(['PORT', 'DATABASE_URL', 'LOG_LEVEL', 'WORKER_QUEUES']));
  });

  it('reads the browser wall and stream cap settings, and refuses an allowed origin that is not an origin', () => {
    const config = loadConfig({ GATEWAY_ALLOWED_HOSTS: 'DevBox.lan, other.test:8765', GATEWAY_ALLOWED_ORIGINS: 'http://Console.test:3000/' });
    expect(config.auth).toMatchObject({ allowedHosts: ['devbox.lan', 'other.test:8765'], allowedOrigins: ['http://console.test:3000'] });
    expect(config.tasks.sse).toMatchObject({ maxStreamsPerKey: 32, maxStreams: 256 });
    expect(problemsOf({ GATEWAY_ALLOWED_ORIGINS: 'https://ok.example,console.test,http://x.test/path' })).toEqual([
      expect.stringMatching(/^GATEWAY_ALLOWED_ORIGINS: "console\.test" is not an origin/),
      expect.stringMatching(/^GATEWAY_ALLOWED_ORIGINS: "http:\/\/x\.test\/path" is not an origin/),
    ]);
    expect(loadConfig({ GATEWAY_CORS_ORIGINS: 'https://App.example/, http://127.0.0.1:5173' }).auth.corsOrigins).toEqual([
      'https://app.example',
      'http://127.0.0.1:5173',
    ]);
    expect(problemsOf({ GATEWAY_CORS_ORIGINS: '*' })).toEqual([expect.stringMatching(/^GATEWAY_CORS_ORIGINS: "\*" is not an origin/)]);
  });

  it('refuses a non-loopback HOST without an auth token unless insecure bind is allowed', () => {
    expect(problemsOf({ HOST: '0.0.0.0' })).toEqual([expect.stringMatching(/^HOST: refusing to bind 0\.0\.0\.0/)]);
    expect(problemsOf({ HOST: '0.0.0.0', GATEWAY_AUTH_TOKEN: 'secret-token' })).toEqual([]);
    expect(problemsOf({ HOST: '0.0.0.0', GATEWAY_ALLOW_INSECURE_BIND: 'true' })).toEqual([]);
  });

  it('derives the queue lock and the reconcile period from the run lease unless they are set (one recovery clock)', () => {
    const defaults = loadConfig({});
    expect([defaults.queue.lockDurationMs, defaults.tasks.reconcileIntervalMs]).toEqual([30_000, 30_000]);
    const lease4 = loadConfig({ GATEWAY_TASK_QUEUE_LEASE_SECONDS: '4' });
    expect([lease4.queue.lockDurationMs, lease4.tasks.reconcileIntervalMs]).toEqual([4000, 4000]);
    const own = loadConfig({ GATEWAY_TASK_QUEUE_LEASE_SECONDS: '4', GATEWAY_QUEUE_LOCK_MS: '9000', GATEWAY_TASK_RECONCILE_INTERVAL: '2s' });
    expect([own.queue.lockDurationMs, own.tasks.reconcileIntervalMs]).toEqual([9000, 2000]);
  });

  it('treats empty strings as unset', () => {
    expect(loadConfig({ PORT: '', GATEWAY_AUTH_TOKEN: '' }).server.port).toBe(8765);
  });
});

describe('parseDurationMs', () => {
  it.each([
    ['30s', 30_000],
    ['1m30s', 90_000],
    ['250ms', 250],
    ['1h', 3_600_000],
    ['1500', 1500],
  ])('%s → %d ms', (input, ms) => expect(parseDurationMs(input)).toBe(ms));

  it('bare numbers can mean seconds', () => expect(parseDurationMs('30', 's')).toBe(30_000));
  it.each(['', 'abc', '10x', '5s junk'])('rejects %p', (input) => expect(parseDurationMs(input)).toBeNull());
});
