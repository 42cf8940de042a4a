#!/usr/bin/env node
/**
 * Probe (not a bench): Agent Chat turn streams (`POST …/messages {stream: true}`) cut by their api's SIGTERM. Some end
 * with only `event: reconnect` — before the snapshot, so without any `id:` — and the client has no cursor; this shows
 * what `GET …/stream` without one then answers on the other api once the turn has ended.
 *
 *   node bench/scale/first-frame-probe.mjs [--rounds 6] [--sessions 30]
 *
 * Each round: a fresh api; one closed-loop turn stream per session on it; SIGTERM 3–6 s in. Prints per round the
 * turns, the streams cut (no `done`) and those cut before their snapshot, then resumes up to three of those.
 */
import { request } from 'undici';
import { sleep } from '../lib/load.mjs';
import { start, stopChildren } from '../lib/processes.mjs';
import { Deployment } from './deployment.mjs';
import { AUTH, dispatcher, Router, sseFrames } from './http.mjs';

const argv = process.argv.slice(2);
const opt = (name, fallback) => (argv.includes(`--${name}`) ? Number(argv[argv.indexOf(`--${name}`) + 1]) : fallback);
const ROUNDS = opt('rounds', 6);
const SESSIONS = opt('sessions', 30);
const JSON_HEADERS = { ...AUTH, 'content-type': 'application/json' };

const post = async (url, body) =>
  (await (await request(url, { method: 'POST', headers: JSON_HEADERS, body: JSON.stringify(body), dispatcher })).body.json()).data;

async function round(api, other) {
  const sessions = [];
  for (let i = 0; i < SESSIONS; i++)
    sessions.push((await post(`${other.url}/hecate/v1/agent-chat/sessions`, { runtime_kind: 'model', provider: 'fake', model: 'gpt-4o-mini' })).id);
  const r = { turns: 0, cut: 0, cut_before_snapshot: [] };
  let stop = false;
  const user = async (sid) => {
    while (!stop) {
      const res = await request(`${api.url}/hecate/v1/agent-chat/sessions/${sid}/messages`, {
        method: 'POST',
        headers: JSON_HEADERS,
        body: JSON.stringify({ content: `hello ${r.turns}`, stream: true }),
        dispatcher,
      }).catch(() => undefined);
      if (!res || res.statusCode !== 200) return void (await res?.body.text());
      r.turns += 1;
      const events = [];
      try {
        for await (const f of sseFrames(res.body)) events.push(f.id ? `${f.event}#${f.id.split(':')[2]}` : f.event);
      } catch (err) {
        events.push(`socket error ${err?.code}`);
      }
      if (!events.includes('done')) r.cut += 1;
      if (!events[0]?.startsWith('snapshot')) r.cut_before_snapshot.push({ session: sid, frames: events });
    }
  };
  await Promise.all([...sessions.map(user), sleep(3000 + Math.random() * 3000).then(() => ((stop = true), api.kill('SIGTERM')))]);
  return r;
}

const upstream = await start('upstream', [
  'test/support/fake-upstream/cli.js',
  '--port',
  '0',
  '--latency-ms',
  '20',
  '--chunks',
  '16',
  '--chunk-interval-ms',
  '20',
]);
const d = new Deployment({ label: 'probe', upstreamUrl: upstream.info.url, leaseSeconds: 10, router: new Router(), t0: Date.now() });
await d.open();
try {
  const { proc: other } = await d.start('api');
  await d.start('worker');
  const cut = [];
  for (let i = 0; i < ROUNDS; i++) {
    const { proc: api } = await d.start('api');
    const r = await round(api, other);
    console.log(
      JSON.stringify({ round: i, turns: r.turns, cut: r.cut, cut_before_snapshot: r.cut_before_snapshot.length, samples: r.cut_before_snapshot.slice(0, 3) }),
    );
    cut.push(...r.cut_before_snapshot);
  }
  for (const c of cut.slice(0, 3)) {
    const res = await request(`${other.url}/hecate/v1/agent-chat/sessions/${c.session}/stream`, {
      headers: { ...AUTH, accept: 'text/event-stream' },
      dispatcher,
      signal: AbortSignal.timeout(20_000),
    });
    const frames = [];
    try {
      for await (const f of sseFrames(res.body))
        frames.push(f.event === 'snapshot' ? `snapshot (active_turn ${JSON.parse(f.data).data.active_turn?.id ?? 'null'})` : f.event);
    } catch (err) {
      frames.push(`nothing more for 20 s (${err?.name})`);
    }
    console.log(`resume of ${c.session} without a cursor: ${frames.join(' → ')}`);
  }
} finally {
  stopChildren();
  await sleep(500);
  await d.close();
  await dispatcher.close();
}
