import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { migratedPostgresTemplate } from './database';
import { startFakeUpstream, type FakeUpstream, type FakeUpstreamOptions } from './fake-upstream/fake-upstream.js';
import { createScratchDatabase, testRedisUrl, uniqueId, type ScratchDatabase } from './infra';
import { embeddedEnv, startServer, type ServerProcess, type ServerRole } from './server-process';

/**
 * The one way e2e suites start Hecate. A stack is a deployment of the built server (`npm run build` first):
 *  - `embedded`: one `all` process on a fresh GATEWAY_DATA_DIR (PGlite, in-process queue);
 *  - `scaled`: api and worker processes on a scratch Postgres database, the shared Redis under a key prefix of
 *    their own, and a workspaces directory.
 * Databases start as copies of the run's migrated template (test/support/database.ts): the servers of a scaled stack
 * check their copy as they start (they refuse one with a pending migration), an embedded server runs its own
 * migration step, and each finds nothing to apply. `empty: true` starts from an empty database instead, for the tests
 * of migrating one.
 */
export type StackMode = 'embedded' | 'scaled';

export interface StackOptions {
  mode: StackMode;
  /** GATEWAY_AUTH_TOKEN of every process (none when omitted). */
  token?: string;
  /** More environment for every process (after the stack's own, so it may override it). */
  env?: Record<string, string>;
  /** Processes serving HTTP started with the stack: `api` (scaled) or `all` (embedded); default 1. */
  apis?: number;
  /** Scaled: what the serving processes run, `api` (default) or `all` (api and worker in one process). */
  role?: 'api' | 'all';
  /** Worker processes started with the stack (scaled only); default 0. */
  workers?: number;
  /** Scaled: let the servers migrate on boot (GATEWAY_MIGRATE_ON_BOOT) instead of running the migrate entrypoint. */
  migrateOnBoot?: boolean;
  /** Start from an empty database (scaled: nothing migrated before the servers start unless they migrate on boot). */
  empty?: boolean;
  /** How long each process may take to become healthy. */
  timeoutMs?: number;
}

export interface Stack {
  mode: StackMode;
  /** The environment every process of the stack starts with. */
  env: Record<string, string>;
  /** Base URL of the first api (or `all`) process. */
  url: string;
  apis: ServerProcess[];
  workers: ServerProcess[];
  /** The scratch Postgres database (scaled). */
  db: ScratchDatabase | undefined;
  /** Every process started through the stack, in order. */
  all: ServerProcess[];
  /** Starts one more process (tracked, stopped with the stack), with the stack's environment unless given one. */
  start(role: Exclude<ServerRole, 'migrate'>, env?: Record<string, string | undefined>): Promise<ServerProcess>;
  /** Kills every process of the stack (SIGKILL unless told) and drops its database. */
  stop(signal?: NodeJS.Signals): Promise<void>;
}

/** Environment of a scaled deployment: a scratch database (a copy of the migrated template unless `empty`) and a Redis prefix. */
export async function scaledStackEnv(
  opts: { token?: string; env?: Record<string, string>; empty?: boolean; migrateOnBoot?: boolean } = {},
): Promise<{ env: Record<string, string>; db: ScratchDatabase }> {
  const db = await createScratchDatabase(opts.empty ? {} : { template: await migratedPostgresTemplate() });
  const env: Record<string, string> = {
    DATABASE_URL: db.url,
    REDIS_URL: testRedisUrl(),
    GATEWAY_REDIS_PREFIX: uniqueId('tk'),
    GATEWAY_WORKSPACES_DIR: mkdtempSync(join(tmpdir(), 'hecate-ws-')),
    ...(opts.token ? { GATEWAY_AUTH_TOKEN: opts.token } : {}),
    ...(opts.migrateOnBoot ? { GATEWAY_MIGRATE_ON_BOOT: 'true' } : {}),
    ...opts.env,
  };
  // A template copy is migrated already, and every api or worker refuses to start on a database with a pending
  // migration (core/database/database.module.ts): each server start checks the copy, so no migrate run is spent on it.
  return { env, db };
}

/** Environment of an embedded deployment (a fresh GATEWAY_DATA_DIR seeded from the template unless `empty`). */
export function embeddedStackEnv(opts: { token?: string; env?: Record<string, string>; empty?: boolean } = {}): Record<string, string> {
  return {
    ...embeddedEnv({ empty: opts.empty }),
    GATEWAY_WORKSPACES_DIR: mkdtempSync(join(tmpdir(), 'hecate-ws-')),
    ...(opts.token ? { GATEWAY_AUTH_TOKEN: opts.token } : {}),
    ...opts.env,
  };
}

/** Processes started together and stopped together (a stack's, or a suite's own). */
export class ProcessGroup {
  readonly all: ServerProcess[] = [];

  constructor(private readonly timeoutMs = 60_000) {}

  async start(role: Exclude<ServerRole, 'migrate'>, env: Record<string, string | undefined>): Promise<ServerProcess> {
    const p = await startServer(role, env, { timeoutMs: this.timeoutMs });
    this.all.push(p);
    return p;
  }

  async stopAll(signal: NodeJS.Signals = 'SIGKILL'): Promise<void> {
    await Promise.all(this.all.map((p) => p.stop(signal)));
  }
}

/** Starts a stack: its database, then its api (or `all`) processes and workers, all healthy. */
export async function startStack(opts: StackOptions): Promise<Stack> {
  const scaled = opts.mode === 'scaled';
  const { env, db } = scaled ? await scaledStackEnv(opts) : { env: embeddedStackEnv(opts), db: undefined };
  const group = new ProcessGroup(opts.timeoutMs);
  const stack: Stack = {
    mode: opts.mode,
    env,
    db,
    url: '',
    apis: [],
    workers: [],
    all: group.all,
    start: (role, processEnv = env) => group.start(role, processEnv),
    async stop(signal = 'SIGKILL') {
      await group.stopAll(signal);
      await db?.drop();
    },
  };
  try {
    const apiRole = scaled ? (opts.role ?? 'api') : 'all';
    const many = (n: number, role: 'api' | 'all' | 'worker') => Promise.all(Array.from({ length: n }, () => stack.start(role)));
    if (scaled) [stack.apis, stack.workers] = await Promise.all([many(opts.apis ?? 1, apiRole), many(opts.workers ?? 0, 'worker')]);
    // Embedded processes share one PGlite directory, which one process opens at a time: one after the other.
    else for (let i = 0; i < (opts.apis ?? 1); i++) stack.apis.push(await stack.start(apiRole));
  } catch (err) {
    await stack.stop();
    throw err;
  }
  stack.url = stack.apis[0]?.url ?? '';
  return stack;
}

export interface SuiteStack {
  /** Set in the suite's beforeAll. */
  stack: Stack;
  /** The fake upstream the stack's env was made with (when `upstream` was given). */
  upstream: FakeUpstream;
}

/**
 * One stack for a whole suite: started in beforeAll (after the fake upstream, when given, whose URL `env` may use),
 * stopped in afterAll with the upstream. Read `suite.stack` / `suite.upstream` inside hooks and tests.
 */
export function useStack(
  opts: Omit<StackOptions, 'env'> & { upstream?: FakeUpstreamOptions; env?: Record<string, string> | ((upstream: FakeUpstream) => Record<string, string>) },
): SuiteStack {
  const suite = {} as SuiteStack;
  beforeAll(async () => {
    if (opts.upstream) suite.upstream = await startFakeUpstream(opts.upstream);
    const env = typeof opts.env === 'function' ? opts.env(suite.upstream) : opts.env;
    suite.stack = await startStack({ ...opts, env });
  }, 120_000);
  afterAll(async () => {
    await suite.stack?.stop();
    await suite.upstream?.close();
  });
  return suite;
}
