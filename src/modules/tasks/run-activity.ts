import type { ApprovalResponse } from '@modules/approvals';
import type { RunActivityItemDto } from './run-stream.dto';
import type { toArtifactResponse, toRunResponse, toStepResponse } from './task-run.dto';

type Step = ReturnType<typeof toStepResponse>;
type Artifact = ReturnType<typeof toArtifactResponse>;
type Run = ReturnType<typeof toRunResponse>;

/** One item of the compact timeline; its documented class is the one declaration of the shape. */
export type ActivityItem = RunActivityItemDto;

const TERMINAL_STEP = new Set(['completed', 'failed', 'cancelled']);

/** The compact timeline of a run (docs/api.md §4 `activity`): steps, artifacts, approvals and the result. */
export function buildActivity(run: Run, steps: Step[], artifacts: Artifact[], approvals: ApprovalResponse[]): ActivityItem[] {
  const items: ActivityItem[] = [];
  for (const s of steps) {
    const type: ActivityItem['type'] =
      // The workspace step is bookkeeping (a `step`, under Details), not a tool the run chose.
      s.kind === 'model' ? 'thinking' : s.kind !== 'workspace' && (s.tool_name || ['shell', 'git', 'file', 'tool'].includes(s.kind)) ? 'tool_call' : 'step';
    items.push({
      id: `step:${s.id}`,
      type,
      status: s.status,
      title: s.title,
      step_id: s.id,
      approval_id: s.approval_id,
      tool_name: s.tool_name,
      kind: s.kind,
      summary: { ...s.output_summary, ...(s.error ? { error: s.error } : {}) },
      occurred_at: s.started_at ?? s.finished_at,
      terminal: TERMINAL_STEP.has(s.status),
    });
  }
  for (const a of artifacts) {
    // The agent loop's conversation checkpoints and the workspace's base tree are machinery, not activity.
    if (a.kind === 'agent_conversation' || a.kind === 'workspace_base') continue;
    const type: ActivityItem['type'] =
      a.kind === 'patch' ? 'patch' : a.kind === 'git_summary' || a.kind === 'diff' ? 'changed_files' : a.kind === 'summary' ? 'final_answer' : 'artifact';
    items.push({
      id: `artifact:${a.id}`,
      type,
      status: a.status,
      title: a.name,
      step_id: a.step_id,
      artifact_id: a.id,
      kind: a.kind,
      path: a.path,
      summary: { size_bytes: a.size_bytes, mime_type: a.mime_type },
      occurred_at: a.created_at,
      terminal: a.status === 'ready' || a.status === 'applied' || a.status === 'reverted',
    });
  }
  for (const ap of approvals) {
    items.push({
      id: `approval:${ap.id}`,
      type: 'approval',
      status: ap.status,
      title: ap.kind,
      approval_id: ap.id,
      kind: ap.kind,
      summary: { reason: ap.reason, action_summary: ap.action_summary },
      occurred_at: ap.created_at,
      needs_action: ap.status === 'pending',
      terminal: ap.status !== 'pending',
    });
  }
  if (['completed', 'failed', 'cancelled'].includes(run.status)) {
    items.push({
      id: `run:${run.id}:terminal`,
      type: 'run_result',
      status: run.status,
      title: run.last_error || `Run ${run.status}`,
      occurred_at: run.finished_at,
      terminal: true,
    });
  }
  return items.sort((a, b) => (a.occurred_at ?? '').localeCompare(b.occurred_at ?? ''));
}
