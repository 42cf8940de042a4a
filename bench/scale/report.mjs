// The scale bench's Markdown report: counts first, then the samples behind anything that is not a clean completion.
import { DEFECTS, OUTCOMES } from './http.mjs';

const KIND_ORDER = [
  'gateway',
  'gateway_stream',
  'chat_session_create',
  'chat_v1_session',
  'agent_chat_session_create',
  'agent_chat_turn',
  'agent_chat_resume',
  'task_create',
  'run_start',
  'run_poll',
];

const defectsOf = (k) => OUTCOMES.filter((o) => DEFECTS.has(o)).reduce((n, o) => n + k.outcomes[o], 0);

function requestTable(requests) {
  const kinds = [...KIND_ORDER.filter((k) => requests[k]), ...Object.keys(requests).filter((k) => !KIND_ORDER.includes(k))];
  const rows = kinds.map((kind) => {
    const k = requests[kind];
    const o = k.outcomes;
    const defects = OUTCOMES.filter((x) => DEFECTS.has(x) && o[x] > 0).map((x) => `${x} ${o[x]}`);
    return `| ${kind} | ${k.requests} | ${o.completed} | ${o.retryable_error} | ${o.client_error} | ${k.refused_retried} | ${o.reset_before_response} | ${defects.length ? `**${defects.join(', ')}**` : 0} |`;
  });
  const total = kinds.reduce(
    (t, kind) => {
      const k = requests[kind];
      return {
        requests: t.requests + k.requests,
        completed: t.completed + k.outcomes.completed,
        retryable: t.retryable + k.outcomes.retryable_error,
        client: t.client + k.outcomes.client_error,
        refused: t.refused + k.refused_retried,
        reset: t.reset + k.outcomes.reset_before_response,
        defects: t.defects + defectsOf(k),
      };
    },
    { requests: 0, completed: 0, retryable: 0, client: 0, refused: 0, reset: 0, defects: 0 },
  );
  const breakdown = kinds.flatMap((kind) => {
    const k = requests[kind];
    const parts = [
      ...Object.entries(k.retryable).map(([key, n]) => `retryable ${key} ×${n}`),
      ...Object.entries(k.client).map(([key, n]) => `client error ${key} ×${n}`),
    ];
    return parts.length ? [`- ${kind}: ${parts.join('; ')}`] : [];
  });
  return [
    '| request | sent | completed | failed, clear and retryable | client error (4xx) | connection refused → retried on the other api | reset before any response (ambiguous) | defects |',
    '|---|---|---|---|---|---|---|---|',
    ...rows,
    `| **all** | ${total.requests} | ${total.completed} | ${total.retryable} | ${total.client} | ${total.refused} | ${total.reset} | ${total.defects ? `**${total.defects}**` : 0} |`,
    '',
    ...(breakdown.length ? ['Errors by status and type:', '', ...breakdown, ''] : []),
  ];
}

function checksSection(p) {
  const r = p.runs;
  const t = p.turns;
  const f = p.feed;
  const c = p.chat_sessions;
  const lines = [
    `Load stopped in ${p.load_stop_ms} ms (users finish their request); every run and turn terminal ${p.terminal.waited_ms} ms later` +
      (p.terminal.still_active_runs_count || p.terminal.still_active_turns_count
        ? ` — **not all: ${p.terminal.still_active_runs_count} runs and ${p.terminal.still_active_turns_count} turns still active at the limit**`
        : '') +
      '.',
    '',
    '| check | count |',
    '|---|---|',
    `| runs (${Object.keys(r.by_kind).join(' / ')}; unknown: created without the client getting the answer) | ${r.runs} (${Object.values(r.by_kind).join(' / ')}) — ${Object.entries(
      r.by_status,
    )
      .map(([s, n]) => `${s} ${n}`)
      .join(', ')} |`,
    `| runs not terminal | ${r.not_terminal} |`,
    `| runs with exactly one terminal event / none / more than one / not matching the status | ${r.terminal_events.exactly_one} / ${r.terminal_events.none} / ${r.terminal_events.more_than_one} / ${r.terminal_events.not_matching_status} |`,
    `| run events read back; runs with sequence gaps (missing sequences) / duplicate sequences | ${r.events}; ${r.runs_with_sequence_gaps} (${r.sequence_gaps}) / ${r.runs_with_duplicate_sequences} (${r.duplicate_sequences}) |`,
    `| runs started more than once (taken over or resumed) | ${r.runs_started_more_than_once} |`,
    `| runs whose events in the public feed differ from their own events | ${r.runs_not_matching_feed} |`,
    `| turns (Agent Chat, model) | ${t.turns} — ${Object.entries(t.by_status)
      .map(([s, n]) => `${s} ${n}`)
      .join(', ')}; taken over ${t.taken_over} |`,
    `| turns not terminal / settled message status ≠ turn status | ${t.not_terminal} / ${t.message_status_not_matching} |`,
    `| turns followed by a client: exactly one \`done\` / none, but the settled message in a snapshot (resumed without a cursor) / neither | ${t.client.done_once} / ${t.client.settled_in_snapshot} / ${t.client.no_done} (of ${t.followed_by_clients}) |`,
    `| turn streams resumed on another api (turns / resumes); delta gaps / duplicates; text ≠ settled message | ${t.client.resumed} / ${t.client.resumes}; ${t.client.delta_gaps} / ${t.client.delta_duplicates}; ${t.client.text_not_matching_message} |`,
    `| public feed: events, cursor not increasing, (run, sequence) twice | ${f.events}, ${f.cursor_not_increasing}, ${f.duplicate_run_sequences} |`,
    `| /v1 calls in chat sessions: completed / recorded (sessions not matching) | ${c.calls_completed} / ${c.calls_recorded} (${c.sessions_not_matching} of ${c.sessions}) |`,
    '',
    '| feed subscriber | connections (apis) | reconnect frame → reconnected | error frame | dropped without a frame | received | missing | duplicates | out of order | reconnect → next event max ms |',
    '|---|---|---|---|---|---|---|---|---|---|',
    ...f.subscribers.map(
      (s) =>
        `| ${s.subscriber} | ${s.connections} (${s.apis}) | ${s.reconnects_after_reconnect_frame} | ${s.reconnects_after_error_frame} | ${s.dropped_without_frame} | ${s.received} | ${s.missing ? `**${s.missing}**` : 0} | ${s.duplicates ? `**${s.duplicates}**` : 0} | ${s.out_of_order} | ${s.reconnect_to_next_event_ms_max ?? '—'} |`,
    ),
    '',
  ];
  if (p.held_at_sigterm.length) {
    lines.push(
      'Runs and turns a worker held at its SIGTERM:',
      '',
      '| worker | run / turn | status | claims | finished after SIGTERM | worker exited after | fate |',
      '|---|---|---|---|---|---|---|',
      ...p.held_at_sigterm.map(
        (h) =>
          `| ${h.worker} | ${h.what} ${h.id} | ${h.status} | ${h.claims} | ${h.finished_after_sigterm_ms ?? '—'} ms | ${h.worker_exited_after_ms} ms | ${h.fate} |`,
      ),
      '',
    );
  }
  const incidents = p.incidents.map((i) => `- ${i.kind}: ${i.name} ×${i.count}${i.defect ? ' (**defect**)' : ''}`);
  if (incidents.length) lines.push('Inside requests:', '', ...incidents, '');
  if (p.ambiguous.length) {
    lines.push('Requests reset before any response, and whether the server had accepted them:', '');
    for (const a of p.ambiguous) lines.push(`- ${JSON.stringify(a)}`);
    lines.push('');
  }
  return lines;
}

function samplesSection(p) {
  const out = [];
  if (p.request_samples.length) {
    out.push('<details><summary>Samples of requests that did not simply complete</summary>', '', '```');
    for (const s of p.request_samples) out.push(JSON.stringify(s));
    out.push('```', '</details>', '');
  }
  for (const [what, list] of [
    ['runs', p.runs.samples],
    ['turns', p.turns.samples],
    ['chat sessions', p.chat_sessions.samples],
  ]) {
    if (!list.length) continue;
    out.push(`<details><summary>Samples of ${what} with a problem</summary>`, '', '```');
    for (const s of list) out.push(JSON.stringify(s));
    out.push('```', '</details>', '');
  }
  if (p.logs.length) {
    out.push('Warnings and errors the processes logged (count, processes, message):', '');
    for (const l of p.logs.slice(0, 15)) out.push(`- ${l.count} × ${l.msg} (${l.processes})`);
    out.push('', `Logs: \`${p.log_dir}\`.`, '');
  }
  return out;
}

/** `2 requests (gateway_stream 1, agent_chat_turn 1), 3 feed streams`, or `1 runs, 0 turns`. */
const inFlight = (step) =>
  Object.entries(step.in_flight)
    .map(([k, n]) => {
      const kinds = k === 'requests' && step.in_flight_requests ? Object.entries(step.in_flight_requests).map(([kind, m]) => `${kind} ${m}`) : [];
      return `${n} ${k.replace('_', ' ')}${kinds.length ? ` (${kinds.join(', ')})` : ''}`;
    })
    .join(', ');

function restartSection(p) {
  return [
    `## Rolling restart (${p.load_seconds} s of load)`,
    '',
    '| step | replacement healthy after | in flight at SIGTERM | SIGTERM → exit | exit |',
    '|---|---|---|---|---|',
    ...p.steps.map(
      (s) =>
        `| ${s.at_s} s: ${s.replaced} → ${s.replacement} | ${s.replacement_healthy_ms} ms | ${inFlight(s)} | ${s.shutdown_ms} ms | ${s.killed_after_timeout ? '**SIGKILL after timeout**' : (s.exit_code ?? s.exit_signal)} |`,
    ),
    '',
    ...requestTable(p.requests),
    ...checksSection(p),
    ...samplesSection(p),
  ];
}

const fmt = (x) => (x === undefined || x === null || Number.isNaN(x) ? '—' : x);

/** `a → b (+d)` for one component of the early and the end sample. */
const delta = (a, b) => (typeof a === 'number' && typeof b === 'number' ? `${a} → ${b} (${b - a >= 0 ? '+' : ''}${(b - a).toFixed(1)})` : '—');

/** RSS by component, early → end, and RSS with the young generation every minute. */
function memoryBreakdown(memory) {
  const components = [
    ['RSS', (s) => s.rss_mb],
    ['anonymous (RssAnon)', (s) => s.rss_anon_mb],
    ['file-backed (RssFile)', (s) => s.rss_file_mb],
    ['V8 heap total (committed)', (s) => s.heap_total_mb],
    ['— new space', (s) => s.heap_space_total_mb?.new],
    ['— old space', (s) => s.heap_space_total_mb?.old],
    ['— code space', (s) => s.heap_space_total_mb?.code],
    ['— large object space', (s) => s.heap_space_total_mb?.large_object],
    ['V8 heap used', (s) => s.heap_used_mb],
    ['— old space used', (s) => s.heap_space_used_mb?.old],
    ['external (ArrayBuffers, Buffers, …)', (s) => s.external_mb],
    ['glibc malloc arenas (count)', (s) => s.malloc_arenas],
    ['glibc malloc arenas, resident', (s) => s.malloc_arenas_mb],
    ['brk heap (main arena)', (s) => s.brk_heap_mb],
    ['other anonymous mappings (V8 pages, stacks, …)', (s) => s.other_anon_mb],
    ['threads', (s) => s.threads],
    ['open file descriptors (sockets, files)', (s) => s.open_fds],
  ];
  const timeline = memory[0]?.minutes ?? [];
  return [
    'RSS broken down, early → end (MB; `/proc/<pid>/status` and `/proc/<pid>/smaps` — a malloc arena is a 64 MB-aligned',
    '64 MB mapping —, V8 heap spaces and external memory from `/metrics`):',
    '',
    `| component | ${memory.map((m) => m.label).join(' | ')} |`,
    `|---|${memory.map(() => '---|').join('')}`,
    ...components.map(([name, f]) => `| ${name} | ${memory.map((m) => (m.early && m.end ? delta(f(m.early), f(m.end)) : '—')).join(' | ')} |`),
    '',
    'Every minute: RSS / V8 new space / V8 old space / malloc arenas, resident (MB):',
    '',
    `| minute | ${memory.map((m) => m.label).join(' | ')} |`,
    `|---|${memory.map(() => '---|').join('')}`,
    ...timeline.map(
      (_, i) =>
        `| ${i + 1} | ${memory
          .map((m) => {
            const s = m.minutes[i];
            return s ? `${s.rss_mb} / ${fmt(s.heap_space_total_mb?.new)} / ${fmt(s.heap_space_total_mb?.old)} / ${fmt(s.malloc_arenas_mb)}` : '—';
          })
          .join(' | ')} |`,
    ),
    '',
  ];
}

function soakSection(p, config) {
  return [
    `## Soak (${config.soak_minutes} min, no restarts)`,
    '',
    'RSS from `/proc/<pid>/status`; event-loop delay from `/metrics` (`hecate_nodejs_eventloop_lag_{p50,p99,max}_seconds`: prom-client samples',
    'the loop every 10 ms and resets at each scrape, so each figure covers the interval since the previous sample; the',
    '10 ms timer interval is subtracted).',
    '',
    '| process | t (early) | RSS early → end (MB) | growth | heap used early → end (MB) | lag p50 / p99 / max early (ms) | lag p50 / p99 / max end (ms) |',
    '|---|---|---|---|---|---|---|',
    ...p.memory.map(
      (m) =>
        `| ${m.label} | ${fmt(m.early?.t_s)} s → ${fmt(m.end?.t_s)} s | ${fmt(m.early?.rss_mb)} → ${fmt(m.end?.rss_mb)} | ${m.rss_growth_pct === null ? '—' : `${m.rss_growth_pct > 10 ? '**' : ''}${m.rss_growth_pct} %${m.rss_growth_pct > 10 ? '**' : ''}`} | ${fmt(m.early?.heap_used_mb)} → ${fmt(m.end?.heap_used_mb)} | ${fmt(m.early?.eventloop_lag_p50_ms)} / ${fmt(m.early?.eventloop_lag_p99_ms)} / ${fmt(m.early?.eventloop_lag_max_ms)} | ${fmt(m.end?.eventloop_lag_p50_ms)} / ${fmt(m.end?.eventloop_lag_p99_ms)} / ${fmt(m.end?.eventloop_lag_max_ms)} |`,
    ),
    '',
    'Target: RSS at the end within 10 % of RSS at 1 minute.',
    '',
    ...memoryBreakdown(p.memory),
    ...requestTable(p.requests),
    ...checksSection(p),
    ...samplesSection(p),
  ];
}

export function renderMarkdown(r) {
  const c = r.config;
  const pauses = r.core_pauses;
  return [
    `# Scale bench — rolling restart and soak — ${r.date}${c.quick ? ' — QUICK RUN' : ''}`,
    '',
    ...(c.quick
      ? [
          `**Quick run** (\`--quick\`): ${c.load_before_restarts_s} s of load before the restarts, ${c.settle_seconds} s settle after each, ${c.load_after_restarts_s} s after; a ${c.soak_minutes}-minute soak. Not the full bench; taken on a machine other work was loading.`,
          '',
        ]
      : []),
    `Machine: ${r.machine.cpus} cores, ${r.machine.memory_gb} GB, Node ${r.machine.node}; commit ${r.commit}. Load average at start ${r.load_average_start.join(' / ')}, at end ${r.load_average_end.join(' / ')}. Core pauses: ${pauses.pauses_over_1ms_per_core_s.toFixed(2)} per core-second over 1 ms (idle VM ~2), longest ${pauses.longest_ms.toFixed(1)} ms, ${(pauses.paused_share * 100).toFixed(2)} % of the time.`,
    '',
    `Deployment: scaled mode, 2 api + 2 worker processes, Postgres and Redis on this machine, fake upstream (${c.upstream.latency_ms} ms latency, ${c.upstream.chunks} chunks paced ${c.upstream.chunk_interval_ms} ms). \`GATEWAY_TASK_QUEUE_LEASE_SECONDS=${c.lease_seconds}\`, \`GATEWAY_SHUTDOWN_GRACE_MS=${c.shutdown_grace_ms}\`, every other setting at its default. An api stays in the clients' rotation for ${c.lb_lag_ms} ms after its SIGTERM (endpoint propagation), then leaves it.`,
    '',
    `Load (closed-loop users, think time): ${Object.entries(c.profile)
      .map(([k, v]) => (typeof v === 'number' ? `${k} ${v}` : `${k} ${v.users} × ${v.thinkMs} ms`))
      .join(
        ', ',
      )}. A connection refused is retried at once on another api and counted apart; a response that is an error must carry \`error.type\` (retryable: 408/425/429/502/503/504); a 5xx other than those, an error without a type, a stream cut without its terminal or reconnect frame, a timeout are defects.`,
    '',
    ...(r.restart ? restartSection(r.restart) : []),
    ...(r.soak ? soakSection(r.soak, c) : []),
  ].join('\n');
}
