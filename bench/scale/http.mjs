// The scale bench's client side of HTTP: which api a request goes to (a client-side load balancer that, like a
// Kubernetes Service, still sends to a pod for a moment after it was told to stop), how every request ended (the
// ledger), and an SSE frame reader.
import { createParser } from 'eventsource-parser';
import { Agent, request } from 'undici';
import { sleep } from '../lib/load.mjs';

export const TOKEN = 'bench-scale-operator-token-0123456789abcdef';
export const AUTH = { authorization: `Bearer ${TOKEN}` };

/** Keep-alive connections like any SDK's; generous timeouts (a hang shows up as `timeout`, a defect). */
export const dispatcher = new Agent({ connections: 256, keepAliveTimeout: 30_000, headersTimeout: 60_000, bodyTimeout: 60_000 });

/** The apis requests go to, round robin. An api leaves the rotation some time after its SIGTERM, or when it exits. */
export class Router {
  entries = [];
  next = 0;

  add(api) {
    if (!this.entries.includes(api)) this.entries.push(api);
  }

  remove(api) {
    this.entries = this.entries.filter((e) => e !== api);
  }

  /** The next api in rotation, preferring any other than `avoid` (the one that just failed or dropped us). */
  pick(avoid) {
    const others = this.entries.filter((e) => e !== avoid);
    const from = others.length > 0 ? others : this.entries;
    if (from.length === 0) return undefined;
    return from[this.next++ % from.length];
  }
}

/** The outcomes a request can have; those in DEFECTS break the issue's promise. */
export const OUTCOMES = [
  'completed',
  'retryable_error',
  'client_error',
  'reset_before_response',
  'refused_final',
  'reset_mid_response',
  'server_error',
  'unclear_error',
  'timeout',
];
export const DEFECTS = new Set(['reset_mid_response', 'server_error', 'unclear_error', 'timeout', 'refused_final']);
const RETRYABLE_STATUS = new Set([408, 425, 429, 502, 503, 504]);
const SAMPLES_PER_OUTCOME = 12;

/** Counts per request kind and outcome, connection refusals retried elsewhere, and samples of everything not completed. */
export class Ledger {
  kinds = {};
  samples = [];
  sampleCounts = {};

  /** `t0`: the bench's start, so sample times match the restart steps'. */
  constructor(t0 = Date.now()) {
    this.t0 = t0;
  }

  kind(kind) {
    this.kinds[kind] ??= { requests: 0, refused_retried: 0, outcomes: Object.fromEntries(OUTCOMES.map((o) => [o, 0])), retryable: {}, client: {} };
    return this.kinds[kind];
  }

  refused(kind) {
    this.kind(kind).refused_retried += 1;
  }

  record(kind, outcome, detail = {}) {
    const k = this.kind(kind);
    k.requests += 1;
    k.outcomes[outcome] += 1;
    if (outcome === 'retryable_error' || outcome === 'client_error') {
      const key = `${detail.status} ${detail.type ?? ''}${detail.retryAfter !== undefined ? ` (Retry-After: ${detail.retryAfter})` : ''}`.trim();
      const into = outcome === 'retryable_error' ? k.retryable : k.client;
      into[key] = (into[key] ?? 0) + 1;
    }
    if (outcome !== 'completed') this.sample(kind, outcome, detail);
    return { outcome, ...detail };
  }

  incidents = {};

  /** Something inside a request that does not decide its outcome (a stream resumed, a stream dropped without a hint). */
  incident(kind, name, detail = {}, { defect = false, sampled = true } = {}) {
    const key = `${kind}/${name}`;
    this.incidents[key] ??= { kind, name, count: 0, defect };
    this.incidents[key].count += 1;
    if (sampled) this.sample(kind, name, detail);
  }

  sample(kind, outcome, detail) {
    const key = `${kind}/${outcome}`;
    this.sampleCounts[key] = (this.sampleCounts[key] ?? 0) + 1;
    if (this.sampleCounts[key] > SAMPLES_PER_OUTCOME) return;
    const { api, json: _json, ...rest } = detail;
    this.samples.push({
      kind,
      outcome,
      at_s: +((Date.now() - this.t0) / 1000).toFixed(1),
      api: api?.label,
      api_state: api ? api.state : undefined,
      ...rest,
    });
  }
}

const errorOf = (json) => (json && typeof json === 'object' && json.error && typeof json.error === 'object' ? json.error : undefined);

/** How a non-2xx answer counts: a 5xx other than the retryable ones is a defect, so is an answer without `error.type`. */
export function classifyStatus(status, json, headers) {
  const type = errorOf(json)?.type;
  const retryAfter = headers['retry-after'];
  const detail = { status, type, retryAfter, body: type ? undefined : JSON.stringify(json)?.slice(0, 300), connection: headers.connection };
  if (!type) return ['unclear_error', detail];
  if (RETRYABLE_STATUS.has(status)) return ['retryable_error', detail];
  if (status >= 500) return ['server_error', { ...detail, message: errorOf(json).message }];
  return ['client_error', { ...detail, message: errorOf(json).message }];
}

/** The longest any one request may take, streams included (a turn's stream lasts well under a second here). */
export const REQUEST_LIMIT_MS = 120_000;
const isTimeout = (err) =>
  err?.code === 'UND_ERR_HEADERS_TIMEOUT' || err?.code === 'UND_ERR_BODY_TIMEOUT' || err?.name === 'TimeoutError' || err?.name === 'AbortError';
const errText = (err) => `${err?.code ?? ''} ${err?.message ?? err}`.trim();

/**
 * One request through the rotation. A connection refused (nothing accepted) is retried at once on another api, up to
 * five times, and counted apart. `read(res, api)` consumes a 2xx body and answers
 * `{ outcome?: 'completed' | 'reset_mid_response' | …, value }`; by default the body is read as JSON. A request still
 * unanswered or unfinished after REQUEST_LIMIT_MS (or at `deadline`) is aborted and counted as a timeout.
 */
export async function exchange(ctx, kind, { method = 'GET', path, body, headers = {}, read, avoid, record = true, deadline }) {
  let last = avoid;
  const done = (outcome, detail) => (record ? ctx.ledger.record(kind, outcome, detail) : { outcome, ...detail });
  for (let attempt = 0; ; attempt++) {
    const api = ctx.router.pick(last);
    if (!api) {
      if (attempt > 50) return done('refused_final', { error: 'no api in rotation' });
      await sleep(100);
      continue;
    }
    api.inflight = (api.inflight ?? 0) + 1;
    api.inflightKinds ??= {};
    api.inflightKinds[kind] = (api.inflightKinds[kind] ?? 0) + 1;
    const active = { kind, path, api: api.label, since: Date.now() };
    ctx.active.add(active);
    const signal = AbortSignal.timeout(Math.max(1, (deadline ?? Date.now() + REQUEST_LIMIT_MS) - Date.now()));
    let answer;
    try {
      answer = await attemptOn(api, { method, path, body, headers, read, signal });
    } finally {
      api.inflight -= 1;
      api.inflightKinds[kind] -= 1;
      ctx.active.delete(active);
    }
    if (answer === 'refused' && attempt < 5) {
      if (record) ctx.ledger.refused(kind);
      last = api;
      await sleep(20);
      continue;
    }
    if (answer === 'refused') return done('refused_final', { api, path, error: 'ECONNREFUSED' });
    return done(answer.outcome, { api, ...answer.detail });
  }
}

/** One attempt on one api: 'refused' (nothing was accepted), or the outcome and its detail. */
async function attemptOn(api, { method, path, body, headers, read, signal }) {
  let res;
  try {
    res = await request(api.url + path, {
      method,
      headers: { ...AUTH, ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
      body: body === undefined ? undefined : JSON.stringify(body),
      dispatcher,
      signal,
    });
  } catch (err) {
    if (err?.code === 'ECONNREFUSED') return 'refused';
    return { outcome: isTimeout(err) ? 'timeout' : 'reset_before_response', detail: { path, error: errText(err) } };
  }
  if (res.statusCode >= 300) {
    let json;
    let text = '';
    try {
      text = await res.body.text();
      json = JSON.parse(text);
    } catch {
      json = text.slice(0, 300);
    }
    const [outcome, detail] = classifyStatus(res.statusCode, json, res.headers);
    return { outcome, detail: { path, ...detail } };
  }
  try {
    if (!read) return { outcome: 'completed', detail: { json: await res.body.json() } };
    const r = await read(res, api);
    const outcome = r.outcome ?? 'completed';
    return { outcome, detail: { path: outcome === 'completed' ? undefined : path, ...r.detail, value: r.value } };
  } catch (err) {
    return { outcome: isTimeout(err) ? 'timeout' : 'reset_mid_response', detail: { path, status: res.statusCode, error: errText(err) } };
  }
}

/** SSE frames of a response body (`{event, id, data, retry}`; comments and heartbeats skipped), read with eventsource-parser. */
export async function* sseFrames(body) {
  const decoder = new TextDecoder();
  const frames = [];
  let retry;
  const parser = createParser({
    onRetry: (ms) => (retry = ms),
    onEvent: (e) => {
      frames.push({ event: e.event ?? 'message', id: e.id, data: e.data, retry });
      retry = undefined;
    },
  });
  for await (const chunk of body) {
    parser.feed(decoder.decode(chunk, { stream: true }));
    yield* frames.splice(0);
  }
}
