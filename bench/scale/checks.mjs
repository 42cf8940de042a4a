// What the scale bench checks once the load has stopped: every run and turn terminal (and how long that took), each
// run's events gap-free with one terminal event, the public feed read back and compared with every subscriber's
// cursors and with the runs' events, turns as their clients saw them, /v1 calls recorded in their chat sessions, and
// what happened to requests whose answer never came. Reads go through the api (as a client would), row counts
// straight from Postgres.
import { sleep } from '../lib/load.mjs';
import { exchange } from './http.mjs';

const ACTIVE = `status IN ('queued', 'running', 'awaiting_approval')`;
const TERMINAL_EVENTS = new Set(['run.finished', 'run.failed', 'run.cancelled']);
const TERMINAL_OF = { completed: 'run.finished', failed: 'run.failed', cancelled: 'run.cancelled' };
const SAMPLES = 10;

async function read(ctx, path) {
  for (let attempt = 0; attempt < 5; attempt++) {
    const r = await exchange(ctx, 'readback', { path, record: false });
    if (r.outcome === 'completed') return r.json;
    await sleep(500);
  }
  throw new Error(`read-back ${path} failed`);
}

async function pool(items, concurrency, fn) {
  let i = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (i < items.length) {
        const k = i++;
        await fn(items[k], k);
      }
    }),
  );
}

/** Waits until no run and no turn is active; answers how long it took and what was still active at the limit. */
export async function waitTerminal(db, limitMs) {
  const t0 = Date.now();
  for (;;) {
    const runs = (await db.query(`SELECT id, status, attempts FROM task_runs WHERE ${ACTIVE} ORDER BY id`)).rows;
    const turns = (await db.query(`SELECT id, session_id, status, attempts FROM agent_chat_turns WHERE ${ACTIVE} ORDER BY id`)).rows;
    if ((runs.length === 0 && turns.length === 0) || Date.now() - t0 > limitMs) {
      return {
        waited_ms: Date.now() - t0,
        still_active_runs: runs.slice(0, SAMPLES),
        still_active_runs_count: runs.length,
        still_active_turns: turns.slice(0, SAMPLES),
        still_active_turns_count: turns.length,
      };
    }
    await sleep(500);
  }
}

/** Every run's events, read page by page from `GET …/runs/{run_id}/events`. */
async function runEvents(ctx, run) {
  const out = [];
  let after = 0;
  for (;;) {
    const page = (await read(ctx, `/hecate/v1/tasks/${run.task_id}/runs/${run.id}/events?after_sequence=${after}&limit=500`)).data;
    out.push(...page);
    if (page.length < 500) return out;
    after = page[page.length - 1].sequence;
  }
}

/** The whole public feed, read page by page from `GET /hecate/v1/events`. */
async function readFeed(ctx) {
  const out = [];
  let after = 0;
  for (;;) {
    const page = await read(ctx, `/hecate/v1/events?after_sequence=${after}&limit=500`);
    out.push(...page.data);
    if (page.data.length < 500) return out;
    after = Number(page.data[page.data.length - 1].cursor);
  }
}

const seqProblems = (sequences) => {
  let gaps = 0;
  let duplicates = 0;
  const seen = new Set();
  let expected = 1;
  for (const s of [...sequences].sort((a, b) => a - b)) {
    if (seen.has(s)) {
      duplicates += 1;
      continue;
    }
    seen.add(s);
    if (s !== expected) gaps += s - expected;
    expected = s + 1;
  }
  return { gaps, duplicates };
};

/** Runs: terminal, one terminal event matching the status, gap-free sequences; the feed holds the same events. */
export async function checkRuns(ctx, db, feed) {
  const rows = (await db.query(`SELECT id, task_id, status, attempts, error_kind, last_error FROM task_runs ORDER BY created_at`)).rows;
  const known = new Set(ctx.runs.map((r) => r.runId));
  const feedByRun = new Map();
  for (const e of feed) {
    if (!e.run_id) continue;
    if (!feedByRun.has(e.run_id)) feedByRun.set(e.run_id, []);
    feedByRun.get(e.run_id).push(e.run_sequence);
  }
  const r = {
    runs: rows.length,
    started_by_clients: ctx.runs.length,
    by_kind: {},
    by_status: {},
    not_terminal: 0,
    terminal_events: { none: 0, exactly_one: 0, more_than_one: 0, not_matching_status: 0 },
    runs_with_sequence_gaps: 0,
    sequence_gaps: 0,
    runs_with_duplicate_sequences: 0,
    duplicate_sequences: 0,
    runs_started_more_than_once: 0,
    runs_not_matching_feed: 0,
    runs_unknown_to_clients: rows.filter((x) => !known.has(x.id)).length,
    events: 0,
    samples: [],
  };
  const kindOf = new Map(ctx.runs.map((x) => [x.runId, x.kind]));
  await pool(rows, 6, async (row) => {
    const events = await runEvents(ctx, row);
    r.events += events.length;
    const kind = kindOf.get(row.id) ?? 'unknown';
    r.by_kind[kind] = (r.by_kind[kind] ?? 0) + 1;
    r.by_status[row.status] = (r.by_status[row.status] ?? 0) + 1;
    const problems = [];
    if (!TERMINAL_OF[row.status]) {
      r.not_terminal += 1;
      problems.push(`status ${row.status}`);
    }
    const terminal = events.filter((e) => TERMINAL_EVENTS.has(e.type));
    if (terminal.length === 0) r.terminal_events.none += 1;
    else if (terminal.length === 1) r.terminal_events.exactly_one += 1;
    else {
      r.terminal_events.more_than_one += 1;
      problems.push(`${terminal.length} terminal events: ${terminal.map((e) => `${e.sequence}:${e.type}`).join(', ')}`);
    }
    if (terminal.length > 0 && TERMINAL_OF[row.status] && !terminal.some((e) => e.type === TERMINAL_OF[row.status])) {
      r.terminal_events.not_matching_status += 1;
      problems.push(`status ${row.status} but ${terminal.map((e) => e.type).join(', ')}`);
    }
    const { gaps, duplicates } = seqProblems(events.map((e) => e.sequence));
    if (gaps) {
      r.runs_with_sequence_gaps += 1;
      r.sequence_gaps += gaps;
      problems.push(`${gaps} missing sequences`);
    }
    if (duplicates) {
      r.runs_with_duplicate_sequences += 1;
      r.duplicate_sequences += duplicates;
      problems.push(`${duplicates} duplicate sequences`);
    }
    const startedCount = events.filter((e) => e.type === 'run.started').length;
    if (startedCount > 1) r.runs_started_more_than_once += 1;
    const inFeed = (feedByRun.get(row.id) ?? []).sort((a, b) => a - b).join(',');
    if (
      inFeed !==
      events
        .map((e) => e.sequence)
        .sort((a, b) => a - b)
        .join(',')
    ) {
      r.runs_not_matching_feed += 1;
      problems.push(`feed holds ${feedByRun.get(row.id)?.length ?? 0} of its ${events.length} events`);
    }
    if (problems.length > 0 && r.samples.length < SAMPLES) {
      r.samples.push({
        run: row.id,
        task: row.task_id,
        kind,
        status: row.status,
        attempts: row.attempts,
        error: row.last_error.slice(0, 200),
        problems,
        types: events.map((e) => `${e.sequence}:${e.type}`).join(' '),
      });
    }
  });
  return r;
}

/** The feed itself (strictly increasing cursors, each (run, run_sequence) once) and every subscriber against it. */
export async function checkFeed(ctx, feed) {
  const cursors = feed.map((e) => Number(e.cursor));
  const head = cursors.length ? cursors[cursors.length - 1] : 0;
  // Subscribers catch up with the head before they are compared.
  const until = Date.now() + 30_000;
  while (ctx.subscribers.some((s) => s.last < head) && Date.now() < until) await sleep(200);
  ctx.feedAbort.abort();
  let backwards = 0;
  for (let i = 1; i < cursors.length; i++) if (cursors[i] <= cursors[i - 1]) backwards += 1;
  const pairs = new Set(feed.map((e) => `${e.run_id}:${e.run_sequence}`));
  const all = new Set(cursors);
  const subscribers = ctx.subscribers.map((s) => {
    const received = new Set(s.cursors);
    let outOfOrder = 0;
    for (let i = 1; i < s.cursors.length; i++) if (s.cursors[i] <= s.cursors[i - 1]) outOfOrder += 1;
    const missing = cursors.filter((c) => !received.has(c));
    return {
      subscriber: s.index,
      connections: s.connects,
      apis: s.apis.join(' → '),
      reconnects_after_reconnect_frame: s.hinted,
      reconnects_after_error_frame: s.errorFrames,
      dropped_without_frame: s.unhinted,
      connects_refused: s.refused,
      connects_failed: s.failedConnects,
      reconnect_to_next_event_ms_max: s.reconnectGapsMs.length ? Math.max(...s.reconnectGapsMs) : null,
      received: s.cursors.length,
      missing: missing.length,
      missing_sample: missing.slice(0, SAMPLES),
      duplicates: s.cursors.length - received.size,
      out_of_order: outOfOrder,
      not_in_feed: [...received].filter((c) => !all.has(c)).length,
      caught_up: s.last >= head,
    };
  });
  return { events: feed.length, head_cursor: head, cursor_not_increasing: backwards, duplicate_run_sequences: feed.length - pairs.size, subscribers };
}

/** Turns: terminal in Postgres, and as each client saw it — one `done`, one settled message, deltas gap-free. */
export async function checkTurns(ctx, db) {
  const rows = (
    await db.query(
      `SELECT t.id, t.status, t.attempts, t.error_kind, t.error, m.status AS message_status FROM agent_chat_turns t LEFT JOIN agent_chat_messages m ON m.id = t.assistant_message_id`,
    )
  ).rows;
  const byId = new Map(rows.map((x) => [x.id, x]));
  const seen = new Set(ctx.turns.map((t) => t.id));
  const r = {
    turns: rows.length,
    followed_by_clients: ctx.turns.length,
    by_status: {},
    not_terminal: rows.filter((x) => !['completed', 'failed', 'cancelled'].includes(x.status)).length,
    message_status_not_matching: rows.filter((x) => x.message_status !== x.status).length,
    taken_over: rows.filter((x) => x.attempts > 1).length,
    unknown_to_clients: rows.filter((x) => !seen.has(x.id)).length,
    client: {
      done_once: 0,
      settled_in_snapshot: 0,
      no_done: 0,
      settled_message_once: 0,
      resumed: 0,
      resumes: 0,
      delta_gaps: 0,
      delta_duplicates: 0,
      text_not_matching_message: 0,
      stream_changes: 0,
      resume_fallbacks: 0,
    },
    samples: [],
  };
  for (const x of rows) r.by_status[x.status] = (r.by_status[x.status] ?? 0) + 1;
  for (const t of ctx.turns) {
    const c = r.client;
    const row = byId.get(t.id);
    const problems = [];
    if (t.done === 1) c.done_once += 1;
    else if (t.done === 0 && t.final) {
      c.settled_in_snapshot += 1;
      problems.push('no done: settled message read from the snapshot of a stream resumed without a cursor');
    } else {
      c.no_done += 1;
      problems.push(`done ×${t.done}`);
    }
    if (t.messages >= 1) c.settled_message_once += t.messages === 1 ? 1 : 0;
    if (t.resumes > 0) c.resumed += 1;
    c.resumes += t.resumes;
    c.delta_gaps += t.gaps;
    c.delta_duplicates += t.duplicates;
    c.stream_changes += t.streamChanges;
    if (t.final?.resume_fallback) c.resume_fallbacks += 1;
    if (t.gaps) problems.push(`${t.gaps} delta gaps`);
    if (t.duplicates) problems.push(`${t.duplicates} duplicate deltas`);
    if (t.final && t.final.status === 'completed' && t.streamChanges === 0 && !t.final.resume_fallback && t.final.content !== t.text) {
      c.text_not_matching_message += 1;
      problems.push(`deltas ${JSON.stringify(t.text.slice(0, 80))} vs message ${JSON.stringify(t.final.content.slice(0, 80))}`);
    }
    if (row && t.final && row.status !== t.final.status) problems.push(`client saw ${t.final.status}, row is ${row.status}`);
    if (problems.length > 0 && r.samples.length < SAMPLES) {
      r.samples.push({
        turn: t.id,
        session: t.session,
        resumes: t.resumes,
        status: row?.status,
        attempts: row?.attempts,
        error: row?.error?.slice(0, 200),
        problems,
      });
    }
  }
  return r;
}

/** /v1 calls with a chat `session_id`: the session records as many provider calls as the client saw complete. */
export async function checkChatSessions(ctx) {
  const r = { sessions: ctx.chatSessions.length, calls_completed: 0, calls_recorded: 0, sessions_not_matching: 0, samples: [] };
  await pool(ctx.chatSessions, 4, async (s) => {
    const view = (await read(ctx, `/hecate/v1/chat/sessions/${s.id}`)).data;
    r.calls_completed += s.completed;
    r.calls_recorded += view.provider_call_count;
    if (view.provider_call_count !== s.completed) {
      r.sessions_not_matching += 1;
      if (r.samples.length < SAMPLES) r.samples.push({ session: s.id, completed: s.completed, failed: s.failed, recorded: view.provider_call_count });
    }
  });
  return r;
}

/**
 * What became of the runs and turns a worker held when it got SIGTERM: finished by it while it drained, taken over by
 * another worker (claimed again), or neither.
 */
export async function checkHeld(db, steps, feed) {
  const out = [];
  for (const step of steps) {
    for (const [what, table] of [
      ['run', 'task_runs'],
      ['turn', 'agent_chat_turns'],
    ]) {
      const ids = step.held?.[`${what}s`] ?? [];
      if (ids.length === 0) continue;
      const rows = (await db.query(`SELECT id, status, attempts, finished_at FROM ${table} WHERE id = ANY($1)`, [ids])).rows;
      for (const row of rows) {
        const finishedMs = row.finished_at ? row.finished_at.getTime() - step.sigterm_epoch_ms : null;
        const claims = what === 'run' ? feed.filter((e) => e.run_id === row.id && e.type === 'run.started').length : row.attempts;
        const fate = claims > 1 ? 'taken over' : finishedMs !== null && finishedMs <= step.shutdown_ms ? 'finished while draining' : 'neither';
        out.push({
          worker: step.replaced,
          what,
          id: row.id,
          status: row.status,
          claims,
          finished_after_sigterm_ms: finishedMs,
          worker_exited_after_ms: step.shutdown_ms,
          fate,
        });
      }
    }
  }
  return out;
}

/** Requests whose answer never came (the connection reset before a status line): was their work accepted? */
export async function checkAmbiguous(ctx, db) {
  const out = [];
  for (const a of ctx.ambiguous) {
    if (a.kind === 'task_create') {
      const n = (await db.query(`SELECT count(*)::int AS n FROM tasks WHERE title = $1`, [a.title])).rows[0].n;
      out.push({ ...a, accepted: n > 0 });
    } else if (a.kind === 'run_start') {
      const n = (await db.query(`SELECT count(*)::int AS n FROM task_runs WHERE task_id = $1`, [a.taskId])).rows[0].n;
      out.push({ ...a, accepted: n > 0 });
    } else out.push(a);
  }
  return out;
}

export { readFeed };
