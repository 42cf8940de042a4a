#!/usr/bin/env node
/**
 * Diagnosis aid for the agent-chat bench (not a benchmark): one scaled deployment, bursts of streamed model turns at
 * several arrival rates; prints time to the snapshot and to the first token by arrival quartile, so queueing (growing
 * with the arrival index) can be told from a fixed delay.
 *
 *   node bench/agent-chat/burst-probe.mjs [turns] [spreadMs,...]
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Agent, request } from 'undici';
import { scratchDatabase } from '../lib/database.mjs';
import { sleep } from '../lib/load.mjs';
import { start, startHecate, stopChildren } from '../lib/processes.mjs';

const TOKEN = 'bench-agent-chat-operator-token-0123456789';
const N = Number(process.argv[2] ?? 100);
const SPREADS = (process.argv[3] ?? '200,1000').split(',').map(Number);
const AUTH = { authorization: `Bearer ${TOKEN}` };
const dispatcher = new Agent({ connections: 4 * N, keepAliveTimeout: 60_000 });

async function turn(base, session) {
  const t0 = performance.now();
  const res = await request(`${base}/hecate/v1/agent-chat/sessions/${session}/messages`, {
    method: 'POST',
    headers: { ...AUTH, 'content-type': 'application/json', accept: 'text/event-stream' },
    body: JSON.stringify({ content: 'hi', stream: true }),
    dispatcher,
  });
  let snapshot;
  let token;
  let buf = '';
  for await (const chunk of res.body) {
    buf += chunk;
    if (snapshot === undefined && buf.includes('event: snapshot')) snapshot = performance.now() - t0;
    if (token === undefined && buf.includes('event: delta')) token = performance.now() - t0;
  }
  return { snapshot, token };
}

const upstream = await start('upstream', ['test/support/fake-upstream/cli.js', '--port', '0', '--chunks', '64', '--chunk-interval-ms', '20']);
const db = await scratchDatabase('hecate_probe');
const env = {
  GATEWAY_AUTH_TOKEN: TOKEN,
  DATABASE_URL: db.url,
  REDIS_URL: 'redis://127.0.0.1:6379',
  GATEWAY_REDIS_PREFIX: `bp${process.pid}`,
  GATEWAY_MIGRATE_ON_BOOT: 'true',
  GATEWAY_TASK_QUEUE_WORKERS: String(N),
  GATEWAY_RATE_LIMIT_ENABLED: 'false',
  PROVIDER_FAKE_BASE_URL: `${upstream.info.url}/v1`,
  PROVIDER_FAKE_KIND: 'local',
  GATEWAY_WORKSPACES_DIR: mkdtempSync(join(tmpdir(), 'hecate-probe-ws-')),
  LOG_LEVEL: 'warn',
};
try {
  // PROBE_PROFILE_DIR: CPU profiles of the api and the worker (written when they exit).
  const prof = process.env.PROBE_PROFILE_DIR ? { NODE_OPTIONS: `--cpu-prof --cpu-prof-dir=${process.env.PROBE_PROFILE_DIR}` } : {};
  const api = await startHecate('api', 'main.api.js', { ...env, ...prof });
  await startHecate('worker', 'main.worker.js', { ...env, ...prof }, { portVar: 'WORKER_HEALTH_PORT' });
  const sessions = [];
  for (let i = 0; i < N; i++) {
    const r = await request(`${api.url}/hecate/v1/agent-chat/sessions`, {
      method: 'POST',
      headers: { ...AUTH, 'content-type': 'application/json' },
      body: JSON.stringify({ runtime_kind: 'model', provider: 'fake', model: 'gpt-4o-mini' }),
      dispatcher,
    });
    sessions.push((await r.body.json()).data.id);
  }
  for (let i = 0; i < 10; i++) await turn(api.url, sessions[i]);
  for (const spread of SPREADS) {
    const results = await Promise.all(sessions.map((s, i) => sleep((i * spread) / N).then(() => turn(api.url, s))));
    const q = (k) => results.slice((k * N) / 4, ((k + 1) * N) / 4);
    const mean = (xs) => (xs.reduce((a, b) => a + b, 0) / xs.length).toFixed(1);
    console.log(
      `spread ${spread} ms: snapshot by quartile ${[0, 1, 2, 3].map((k) => mean(q(k).map((r) => r.snapshot))).join(' / ')}; first token ${[0, 1, 2, 3].map((k) => mean(q(k).map((r) => r.token))).join(' / ')}`,
    );
    await sleep(2000);
  }
} finally {
  stopChildren();
  await sleep(500);
  await db.drop();
  await dispatcher.close();
}
