// The scale bench's steady mixed load: closed-loop users (gateway calls, /v1 calls recorded in a chat session, Agent
// Chat model turns, shell and agent runs) and subscribers of the public events feed (feed-subscriber.mjs). Every
// request goes through `exchange` (http.mjs), so its outcome is counted; what the checks need afterwards (runs, turns,
// sessions, every feed cursor a subscriber saw) is kept in `ctx`.
import { sleep } from '../lib/load.mjs';
import { feedSubscriber } from './feed-subscriber.mjs';
import { exchange, REQUEST_LIMIT_MS, sseFrames } from './http.mjs';

export const MODEL = 'gpt-4o-mini';
const TERMINAL = new Set(['completed', 'failed', 'cancelled']);
const TURNS_PER_SESSION = 20;
const CALLS_PER_CHAT_SESSION = 25;
const RUN_WAIT_MS = 90_000;

/** State shared by the load and the checks. */
export function loadContext(router, ledger) {
  return {
    router,
    ledger,
    stopping: false,
    runs: [],
    turns: [],
    chatSessions: [],
    agentSessions: [],
    ambiguous: [],
    subscribers: [],
    feedAbort: new AbortController(),
    /** Requests under way (exchange adds and removes them): what a stuck stop is waiting for. */
    active: new Set(),
  };
}

// ---------------------------------------------------------------- gateway
async function gatewayUser(ctx, streaming, thinkMs) {
  for (let n = 0; !ctx.stopping; n++) {
    const body = { model: MODEL, stream: streaming, messages: [{ role: 'user', content: `gateway call ${n}: say something long enough to stream` }] };
    await exchange(ctx, streaming ? 'gateway_stream' : 'gateway', {
      method: 'POST',
      path: '/v1/chat/completions',
      body,
      read: streaming ? readV1Stream : undefined,
    });
    await sleep(thinkMs);
  }
}

/** A /v1 stream is complete with `data: [DONE]`; an error frame is a clear failure; anything else ending it is a reset. */
async function readV1Stream(res) {
  let chunks = 0;
  for await (const f of sseFrames(res.body)) {
    if (f.data === '[DONE]') return { value: chunks };
    if (f.data?.includes('"error"')) {
      const type = JSON.parse(f.data).error?.type;
      return { outcome: type ? 'retryable_error' : 'unclear_error', detail: { status: 200, type, body: f.data.slice(0, 300) } };
    }
    chunks += 1;
  }
  return { outcome: 'reset_mid_response', detail: { error: `stream ended after ${chunks} chunks without [DONE]` } };
}

// ---------------------------------------------------------------- /v1 with a chat session_id
async function chatV1User(ctx, thinkMs) {
  while (!ctx.stopping) {
    const created = await exchange(ctx, 'chat_session_create', { method: 'POST', path: '/hecate/v1/chat/sessions', body: {} });
    if (created.outcome !== 'completed') {
      await sleep(thinkMs);
      continue;
    }
    const session = { id: created.json.data.id, completed: 0, failed: 0 };
    ctx.chatSessions.push(session);
    for (let n = 0; n < CALLS_PER_CHAT_SESSION && !ctx.stopping; n++) {
      // Every other call streams: a recorded generation is then in flight for a while when its api gets SIGTERM.
      const streaming = n % 2 === 1;
      const r = await exchange(ctx, 'chat_v1_session', {
        method: 'POST',
        path: '/v1/chat/completions',
        body: { model: MODEL, stream: streaming, session_id: session.id, messages: [{ role: 'user', content: `recorded call ${n}, tell me more` }] },
        read: streaming ? readV1Stream : undefined,
      });
      if (r.outcome === 'completed') session.completed += 1;
      else session.failed += 1;
      await sleep(thinkMs);
    }
  }
}

// ---------------------------------------------------------------- Agent Chat model turns, streamed
async function agentChatUser(ctx, thinkMs) {
  while (!ctx.stopping) {
    const created = await exchange(ctx, 'agent_chat_session_create', {
      method: 'POST',
      path: '/hecate/v1/agent-chat/sessions',
      body: { runtime_kind: 'model', provider: 'fake', model: MODEL },
    });
    if (created.outcome !== 'completed') {
      await sleep(thinkMs);
      continue;
    }
    const session = { id: created.json.data.id, turns: 0 };
    ctx.agentSessions.push(session);
    for (let n = 0; n < TURNS_PER_SESSION && !ctx.stopping; n++) {
      session.turns += 1;
      await chatTurn(ctx, session, n);
      await sleep(thinkMs);
    }
  }
}

/** One turn: `POST …/messages {stream: true}`, followed to its `done` across reconnects to other apis. */
async function chatTurn(ctx, session, n) {
  const turn = {
    session: session.id,
    content: `hello from the scale bench, turn ${n} of ${session.id}: tell me a story`,
    id: undefined,
    stream: undefined,
    last: 0,
    text: '',
    deltas: 0,
    duplicates: 0,
    gaps: 0,
    streamChanges: 0,
    done: 0,
    messages: 0,
    final: undefined,
    resumes: 0,
    outcome: undefined,
    // The POST and every resume share one limit: a turn whose stream has not ended by then is a timeout.
    deadline: Date.now() + REQUEST_LIMIT_MS,
  };
  const r = await exchange(ctx, 'agent_chat_turn', {
    method: 'POST',
    path: `/hecate/v1/agent-chat/sessions/${session.id}/messages`,
    body: { content: turn.content, stream: true },
    deadline: turn.deadline,
    read: (res, api) => followTurn(ctx, res, api, turn),
  });
  turn.outcome = r.outcome;
  if (turn.id) ctx.turns.push(turn);
  else if (r.outcome === 'reset_before_response' || r.outcome === 'timeout') await settleAmbiguousTurn(ctx, turn);
}

async function followTurn(ctx, res, api, turn) {
  let how = await consumeTurn(res.body, turn);
  let current = api;
  while (how !== 'done' && how !== 'settled in snapshot') {
    if (!turn.id) {
      // Ended before its first frame (the snapshot): the client holds no cursor, and a stream without one serves the
      // session's running turn or waits for the next. The snapshot it opens with still shows this turn (found by its
      // user message), running or settled.
      ctx.ledger.incident('agent_chat_turn', 'ended_before_first_frame', { api: current, session: turn.session, error: how });
    }
    if (how === 'hint') ctx.ledger.incident('agent_chat_turn', 'reconnect_hint', {}, { sampled: false });
    else ctx.ledger.incident('agent_chat_turn', 'stream_dropped_without_hint', { api: current, turn: turn.id, error: how }, { defect: true });
    if (Date.now() >= turn.deadline)
      return { outcome: 'timeout', detail: { turn: turn.id, resumes: turn.resumes, error: `no done after ${REQUEST_LIMIT_MS} ms: ${how}` } };
    if (turn.resumes >= 20) return { outcome: 'reset_mid_response', detail: { turn: turn.id, error: `no done after ${turn.resumes} resumes` } };
    await sleep(how === 'hint' ? (turn.retryMs ?? 1000) : 200);
    turn.resumes += 1;
    const cursor = turn.id ? `${turn.id}:${turn.stream}:${turn.last}` : undefined;
    const r = await exchange(ctx, 'agent_chat_resume', {
      path: `/hecate/v1/agent-chat/sessions/${turn.session}/stream`,
      headers: { accept: 'text/event-stream', ...(cursor ? { 'last-event-id': cursor } : {}) },
      avoid: current,
      deadline: turn.deadline,
      read: async (res2, api2) => {
        current = api2;
        return { value: await consumeTurn(res2.body, turn) };
      },
    });
    how = r.outcome === 'completed' ? r.value : 'resume failed';
  }
  if (how === 'settled in snapshot') ctx.ledger.incident('agent_chat_turn', 'settled_in_snapshot_without_done', { api: current, turn: turn.id });
  return { value: turn };
}

/**
 * Reads a turn's frames; answers 'done', 'hint' (a reconnect frame or an error frame), 'settled in snapshot' (a client
 * without a cursor found its turn settled in the snapshot), or why the stream ended.
 */
async function consumeTurn(body, turn) {
  try {
    for await (const f of sseFrames(body)) {
      if (f.event === 'snapshot') {
        if (turn.id) continue;
        const view = JSON.parse(f.data).data;
        const mine = view.messages.find((m) => m.role === 'user' && m.content === turn.content)?.turn_id;
        if (mine && view.active_turn?.id === mine) Object.assign(turn, { id: mine, stream: view.active_turn.stream_id });
        else if (mine) {
          const reply = view.messages.find((m) => m.role === 'assistant' && m.turn_id === mine);
          Object.assign(turn, { id: mine, final: reply && { status: reply.status, content: reply.content, resume_fallback: false } });
          return 'settled in snapshot';
        }
        continue;
      }
      if (f.id?.includes(':')) {
        const [turnId, stream, index] = f.id.split(':');
        if (turnId !== turn.id) {
          turn.foreign = (turn.foreign ?? 0) + 1;
          continue;
        }
        if (stream !== turn.stream) {
          // The turn moved to a new live stream (taken over after its buffer was lost): frames start again.
          Object.assign(turn, { stream, last: 0, text: '', streamChanges: turn.streamChanges + 1 });
        }
        const i = Number(index);
        if (i <= turn.last) turn.duplicates += 1;
        else {
          if (i !== turn.last + 1) turn.gaps += 1;
          turn.last = i;
          if (f.event === 'delta') {
            turn.deltas += 1;
            turn.text += JSON.parse(f.data).content ?? '';
          }
        }
        continue;
      }
      if (f.event === 'message') {
        const m = JSON.parse(f.data);
        turn.messages += 1;
        turn.final = { status: m.status, content: m.content, resume_fallback: m.resume_fallback === true };
      } else if (f.event === 'done') {
        turn.done += 1;
        return 'done';
      } else if (f.event === 'reconnect' || f.event === 'error') {
        turn.retryMs = f.retry;
        if (f.event === 'error') turn.errorFrames = [...(turn.errorFrames ?? []), f.data.slice(0, 200)];
        return 'hint';
      }
    }
    return 'ended without done or reconnect frame';
  } catch (err) {
    return `socket error: ${err?.code ?? ''} ${err?.message ?? err}`.trim();
  }
}

/** After a POST whose answer never came: was the turn created? Wait for the session to go idle either way. */
async function settleAmbiguousTurn(ctx, turn) {
  for (let i = 0; i < 90; i++) {
    const r = await exchange(ctx, 'agent_chat_session_read', { path: `/hecate/v1/agent-chat/sessions/${turn.session}`, record: false });
    const view = r.json?.data;
    if (view && !view.active_turn) {
      const user = view.messages.find((m) => m.role === 'user' && m.content === turn.content);
      ctx.ambiguous.push({ kind: 'agent_chat_turn', session: turn.session, accepted: Boolean(user), turn: user?.turn_id });
      return;
    }
    await sleep(1000);
  }
  ctx.ambiguous.push({ kind: 'agent_chat_turn', session: turn.session, accepted: 'session still busy after 90 s' });
}

// ---------------------------------------------------------------- shell and agent runs
async function taskUser(ctx, kind, index, thinkMs) {
  for (let n = 0; !ctx.stopping; n++) {
    const title = `scale-${kind}-${index}-${n}`;
    // Mostly an echo; every fifth run sleeps 3 s, so a worker's SIGTERM finds runs in flight to drain.
    const command = n % 5 === 4 ? `echo ${title}; sleep 3; echo done` : `echo ${title}`;
    const body =
      kind === 'shell'
        ? { title, execution_kind: 'shell', shell_command: command }
        : { title, execution_kind: 'agent_loop', prompt: `say hello for ${title}`, requested_model: MODEL };
    const created = await exchange(ctx, 'task_create', { method: 'POST', path: '/hecate/v1/tasks', body });
    if (created.outcome === 'reset_before_response' || created.outcome === 'timeout') ctx.ambiguous.push({ kind: 'task_create', title });
    if (created.outcome === 'completed') {
      const taskId = created.json.data.id;
      const started = await exchange(ctx, 'run_start', { method: 'POST', path: `/hecate/v1/tasks/${taskId}/start`, body: {} });
      if (started.outcome === 'completed') {
        const run = { kind, taskId, runId: started.json.data.id, status: started.json.data.status };
        ctx.runs.push(run);
        await waitRun(ctx, run);
      } else if (started.outcome === 'reset_before_response' || started.outcome === 'timeout') {
        ctx.ambiguous.push({ kind: 'run_start', taskId, title });
      }
    }
    await sleep(thinkMs);
  }
}

/**
 * Drain probes: shell runs of `sleep 5` started just before a worker's SIGTERM, so that it has runs in flight to finish
 * or hand over (the load's own runs are too short to be sure of one). Counted with the load's requests and runs;
 * answers the ids of the runs started.
 */
export async function startDrainProbes(ctx, count) {
  const runIds = [];
  await Promise.all(
    Array.from({ length: count }, async (_, i) => {
      const title = `scale-drain-probe-${ctx.runs.length}-${i}`;
      const created = await exchange(ctx, 'task_create', {
        method: 'POST',
        path: '/hecate/v1/tasks',
        body: { title, execution_kind: 'shell', shell_command: 'echo probe; sleep 5; echo done' },
      });
      if (created.outcome !== 'completed') return;
      const started = await exchange(ctx, 'run_start', { method: 'POST', path: `/hecate/v1/tasks/${created.json.data.id}/start`, body: {} });
      if (started.outcome !== 'completed') return;
      ctx.runs.push({ kind: 'drain_probe', taskId: created.json.data.id, runId: started.json.data.id, status: started.json.data.status });
      runIds.push(started.json.data.id);
    }),
  );
  return runIds;
}

/** Polls the run (as a UI would) until it is terminal or RUN_WAIT_MS passed; the checks wait for the rest. */
async function waitRun(ctx, run) {
  const until = Date.now() + RUN_WAIT_MS;
  while (!TERMINAL.has(run.status) && Date.now() < until && !ctx.stopping) {
    await sleep(300);
    const r = await exchange(ctx, 'run_poll', { path: `/hecate/v1/tasks/${run.taskId}/runs/${run.runId}` });
    if (r.outcome === 'completed') run.status = r.json.data.status;
  }
}

// ---------------------------------------------------------------- the mix
/** The load profile: how many closed-loop users of each kind, and their think time between requests (ms). */
export const PROFILE = {
  gateway: { users: 2, thinkMs: 100 },
  gateway_stream: { users: 2, thinkMs: 200 },
  chat_v1_session: { users: 1, thinkMs: 250 },
  agent_chat: { users: 2, thinkMs: 300 },
  shell: { users: 2, thinkMs: 200 },
  agent: { users: 1, thinkMs: 500 },
  feed_subscribers: 4,
};

/** Starts the subscribers and users; `stop()` stops the users after their current request and resolves when all did. */
export function startLoad(ctx, profile = PROFILE) {
  const subscribers = Array.from({ length: profile.feed_subscribers }, (_, i) => feedSubscriber(ctx, i));
  const times = (n, fn) => Array.from({ length: n }, (_, i) => fn(i));
  const users = [
    ...times(profile.gateway.users, () => gatewayUser(ctx, false, profile.gateway.thinkMs)),
    ...times(profile.gateway_stream.users, () => gatewayUser(ctx, true, profile.gateway_stream.thinkMs)),
    ...times(profile.chat_v1_session.users, () => chatV1User(ctx, profile.chat_v1_session.thinkMs)),
    ...times(profile.agent_chat.users, () => agentChatUser(ctx, profile.agent_chat.thinkMs)),
    ...times(profile.shell.users, (i) => taskUser(ctx, 'shell', i, profile.shell.thinkMs)),
    ...times(profile.agent.users, (i) => taskUser(ctx, 'agent', i, profile.agent.thinkMs)),
  ];
  return {
    subscribers: Promise.all(subscribers),
    async stop() {
      ctx.stopping = true;
      await Promise.all(users);
    },
  };
}
