import type { AgentConfig } from '@core/config/groups/agent.env';
import type { MessageRow, SessionRow, TurnRow } from './agent-chat-rows';
import { diffStatOf, parseUnifiedDiff } from './files/changed-files';

const iso = (d: Date | string | null | undefined): string | undefined => (d ? new Date(d).toISOString() : undefined);

interface Activity {
  type: string;
  status: string;
  title: string;
  detail?: string;
  created_at?: string;
  /** An `approval` activity's approval (`needs_action` while it waits for a decision). */
  approval_id?: string;
  needs_action?: boolean;
}

/** `files_changed` for a captured diff, then one `files_reverted` per revert. */
function changeActivities(m: MessageRow): Activity[] {
  const out: Activity[] = [];
  const files = m.diff ? parseUnifiedDiff(m.diff) : [];
  const reverts = (m.metadata?.reverts as Array<{ paths: string[]; at: string }> | undefined) ?? [];
  const captured = (m.metadata?.captured_paths as string[] | undefined)?.length ?? files.length;
  if (captured > 0)
    out.push({
      type: 'files_changed',
      status: 'completed',
      title: 'Files changed',
      detail: `${captured} file${captured === 1 ? '' : 's'} changed`,
      created_at: iso(m.completed_at),
    });
  for (const r of reverts) out.push({ type: 'files_reverted', status: 'completed', title: 'Files reverted', detail: r.paths.join(', '), created_at: r.at });
  return out;
}

/**
 * The transcript's compact activity vocabulary (docs/api.md §1 "Activity rendering") for one assistant message. A
 * task-backed turn that ended shows its run's activity exactly as Task Detail does (model turns, tool calls,
 * approvals, changed files, final answer, terminal state), after its start and before any revert.
 */
function activitiesOf(m: MessageRow): Activity[] {
  const external = m.metadata?.activities as Activity[] | undefined;
  if (external?.length) return [...external, ...changeActivities(m).filter((a) => a.type === 'files_reverted')];
  if (m.run_activity?.length) {
    const started = {
      type: 'started',
      status: 'completed',
      title: 'Starting Hecate Agent',
      detail: [m.provider, m.model].filter(Boolean).join('/'),
      created_at: iso(m.started_at ?? m.created_at),
    };
    const run = m.run_activity.map((a) => ({ ...a, created_at: a.occurred_at as string | undefined }) as unknown as Activity);
    return [started, ...run, ...changeActivities(m).filter((a) => a.type === 'files_reverted')];
  }
  const who = m.runtime_kind === 'agent' ? 'Starting Hecate Agent' : 'Calling the model';
  const out: Activity[] = [
    {
      type: 'started',
      status: 'completed',
      title: who,
      detail: [m.provider, m.model].filter(Boolean).join('/'),
      created_at: iso(m.started_at ?? m.created_at),
    },
  ];
  switch (m.status) {
    case 'queued':
      out[0].status = 'pending';
      break;
    case 'running':
      out.push({ type: 'running', status: 'running', title: m.runtime_kind === 'agent' ? 'Agent running' : 'Generating' });
      break;
    case 'awaiting_approval':
      out.push({ type: 'approval', status: 'pending', title: 'Waiting for approval' });
      break;
    case 'completed':
      out.push(...changeActivities(m));
      out.push({ type: 'completed', status: 'completed', title: 'Final answer', created_at: iso(m.completed_at) });
      break;
    case 'failed':
      out.push(...changeActivities(m));
      out.push({ type: 'failed', status: 'failed', title: 'Failed', detail: m.error?.message, created_at: iso(m.completed_at) });
      break;
    case 'cancelled':
      out.push({ type: 'cancelled', status: 'cancelled', title: 'Cancelled', created_at: iso(m.completed_at) });
      break;
  }
  return out;
}

/** An External Agent reply's adapter fields at the top level (docs/api.md §4), from what its turn stored. */
function externalFields(m: MessageRow): Record<string, unknown> {
  const meta = m.metadata ?? {};
  const pick = ['run_id', 'adapter_id', 'adapter_name', 'driver_kind', 'native_session_id', 'cost_mode', 'usage', 'raw_output', 'native_session_reset'];
  const out: Record<string, unknown> = {};
  for (const k of pick) if (meta[k] !== undefined && meta[k] !== '') out[k] = meta[k];
  return out;
}

export function toMessageView(m: MessageRow) {
  const started = m.started_at ?? (m.role === 'assistant' ? null : m.created_at);
  return {
    id: m.id,
    role: m.role,
    content: m.content,
    status: m.status,
    runtime_kind: m.runtime_kind,
    segment_id: m.segment_id,
    turn_id: m.turn_id ?? undefined,
    task_id: m.task_id ?? undefined,
    run_id: m.run_id ?? undefined,
    provider: m.provider || undefined,
    model: m.model || undefined,
    capabilities: m.capabilities,
    error: m.error ?? undefined,
    metadata: Object.keys(m.metadata ?? {}).length ? m.metadata : undefined,
    ...(m.runtime_kind === 'external_agent' && m.role === 'assistant' ? externalFields(m) : {}),
    diff_stat: m.diff ? diffStatOf(parseUnifiedDiff(m.diff)) || undefined : undefined,
    timing: m.timing ?? undefined,
    request_id: m.request_id ?? undefined,
    trace_id: m.trace_id ?? undefined,
    span_id: m.span_id ?? undefined,
    workspace: m.workspace || undefined,
    started_at: iso(started),
    completed_at: iso(m.completed_at),
    duration_ms: m.role === 'assistant' && m.started_at && m.completed_at ? new Date(m.completed_at).getTime() - new Date(m.started_at).getTime() : undefined,
    activities: m.role === 'assistant' ? activitiesOf(m) : undefined,
    created_at: iso(m.created_at),
  };
}

/** Contiguous messages with the same segment_id (docs/api.md §4: a render helper; messages stay the source of truth). */
export function segmentsOf(messages: MessageRow[]) {
  const out: Array<{
    id: string;
    runtime_kind: string;
    provider?: string;
    model?: string;
    task_id?: string;
    latest_run_id?: string;
    status: string;
    message_count: number;
    first_at?: string;
    last_at?: string;
  }> = [];
  for (const m of messages) {
    let seg = out[out.length - 1];
    if (!seg || seg.id !== m.segment_id) {
      seg = {
        id: m.segment_id,
        runtime_kind: m.runtime_kind,
        provider: m.provider || undefined,
        model: m.model || undefined,
        status: m.status,
        message_count: 0,
        first_at: iso(m.created_at),
      };
      out.push(seg);
    }
    seg.message_count += 1;
    seg.last_at = iso(m.updated_at ?? m.created_at);
    if (m.task_id) seg.task_id = m.task_id;
    if (m.run_id) seg.latest_run_id = m.run_id;
    if (m.role === 'assistant') seg.status = m.status;
  }
  return out;
}

export function toActiveTurnView(t: TurnRow) {
  return {
    id: t.id,
    runtime_kind: t.runtime_kind,
    status: t.status,
    stream_id: t.stream_id,
    task_id: t.task_id ?? undefined,
    run_id: t.run_id ?? undefined,
    user_message_id: t.user_message_id,
    assistant_message_id: t.assistant_message_id,
    cancel_requested: t.cancel_requested || undefined,
  };
}

export function toSessionSummary(s: SessionRow, limits: AgentConfig['chat']) {
  return {
    id: s.id,
    title: s.title,
    runtime_kind: s.runtime_kind,
    provider: s.provider || undefined,
    model: s.model || undefined,
    workspace: s.workspace || undefined,
    adapter_id: s.adapter_id || undefined,
    agent_id: s.agent_id || undefined,
    agent_version: s.agent_version ?? undefined,
    ...(s.runtime_kind === 'external_agent'
      ? { driver_kind: 'acp', native_session_id: s.native_session_id || undefined, adapter_state: s.adapter_state || undefined }
      : {}),
    capabilities: s.capabilities,
    status: s.status,
    turns_used: s.turns_used,
    max_turns_per_session: limits.maxTurnsPerSession || undefined,
    session_started_at: iso(s.session_started_at),
    max_session_duration_ms: limits.maxSessionDurationMs || undefined,
    idle_timeout_ms: limits.idleTimeoutMs || undefined,
    message_count: s.message_count,
    closed_at: iso(s.closed_at),
    created_at: iso(s.created_at),
    updated_at: iso(s.updated_at),
  };
}

/** The full session (GET …/{session_id}, the stream's snapshot): header, the latest agent segment's task, the active turn, messages, segments. */
export function toSessionView(s: SessionRow, messages: MessageRow[], active: TurnRow | null, limits: AgentConfig['chat']) {
  const lastAgent = [...messages].reverse().find((m) => m.task_id);
  return {
    ...toSessionSummary(s, limits),
    task_id: lastAgent?.task_id ?? undefined,
    latest_run_id: lastAgent?.run_id ?? undefined,
    active_turn: active ? toActiveTurnView(active) : null,
    messages: messages.map(toMessageView),
    segments: segmentsOf(messages),
  };
}

export type SessionView = ReturnType<typeof toSessionView>;
