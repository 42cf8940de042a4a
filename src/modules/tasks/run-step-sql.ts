import { NOW, setClause } from '@core/database/sql';
import { storableJson, storableText } from '@core/database/storable';
import type { SqlFragment } from '@modules/events';
import { type RunUsage, STEP_STATUS, type StepOutcome } from './run-step';
import { RUN_LEASE } from './task-run.repository';
import type { TaskArtifactEntity } from './task-artifact.entity';
import type { TaskStepEntity } from './task-step.entity';

/** The rows a step write adds, as CTEs of RunWriter.stepWrite's one statement (each conditioned on its guard `g`). */

/** A new step's dispatch record, written only while the guard `g` holds (RunWriter.stepWrite). */
export function insertStepSql(step: TaskStepEntity): SqlFragment {
  return {
    sql: `INSERT INTO task_steps (id, tenant_id, task_id, run_id, step_index, kind, title, status, phase, result, tool_name, idempotent,
                                  input, output_summary, exit_code, error, error_kind, approval_id, started_at, finished_at, created_at, updated_at)
          SELECT $1, $2, $3, $4, $5::int, $6, $7, $8, $9, '', $10, $11::boolean, $12::jsonb, '{}'::jsonb, NULL, '', '', $13,
                 $14::timestamptz, NULL, $14::timestamptz, $14::timestamptz
            FROM g`,
    params: [
      step.id,
      step.tenantId,
      step.taskId,
      step.runId,
      step.index,
      step.kind,
      storableText(step.title),
      step.status,
      step.phase,
      storableText(step.toolName),
      step.idempotent,
      storableJson(step.input),
      step.approvalId,
      (step.startedAt ?? new Date()).toISOString(),
    ],
  };
}

/** An artifact row, written only while the guard `g` holds (RunWriter.stepWrite). */
export function insertArtifactSql(a: TaskArtifactEntity): SqlFragment {
  return {
    sql: `INSERT INTO task_artifacts (id, tenant_id, task_id, run_id, step_id, kind, name, description, mime_type, path, content_text,
                                      size_bytes, sha256, truncated, status, metadata, created_at, updated_at)
          SELECT $1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12::bigint, $13, $14::boolean, $15, $16::jsonb, $17::timestamptz, $17::timestamptz
            FROM g`,
    params: [
      a.id,
      a.tenantId,
      a.taskId,
      a.runId,
      a.stepId,
      a.kind,
      a.name,
      a.description,
      a.mimeType,
      a.path,
      a.contentText,
      a.sizeBytes,
      a.sha256,
      a.truncated,
      a.status,
      storableJson(a.metadata),
      a.createdAt.toISOString(),
    ],
  };
}

/** A step's result, written only while the guard `g` holds (RunWriter.stepWrite). */
export function finishStepSql(stepId: string, outcome: StepOutcome): SqlFragment {
  return {
    sql: `UPDATE task_steps SET status = $2, phase = 'finished', result = $3, output_summary = $4::jsonb, exit_code = $5::int, error = $6,
                 error_kind = $7, finished_at = now(), updated_at = now()
           WHERE id = $1 AND EXISTS (SELECT 1 FROM g)`,
    params: [
      stepId,
      STEP_STATUS[outcome.status],
      storableText(outcome.result ?? outcome.status),
      storableJson(outcome.outputSummary ?? {}),
      outcome.exitCode ?? null,
      storableText(outcome.error ?? ''),
      outcome.errorKind ?? (outcome.status === 'timed_out' ? 'timeout' : ''),
    ],
  };
}

/** The lease guard `g` of a step write, recording the step's `usage` on the run as it proves the lease. */
export function usageGuardSql(runId: string, token: string, usage: RunUsage | undefined): SqlFragment {
  const set = setClause({ updated_at: NOW, model: usage?.model, provider: usage?.provider, provider_kind: usage?.providerKind }, 3);
  const params: unknown[] = [runId, token, ...set.params];
  // An addition, not an assignment: each step adds its cost to the run's.
  const cost = usage?.addCostMicrosUsd ? `, total_cost_micros_usd = total_cost_micros_usd + $${params.push(Math.trunc(usage.addCostMicrosUsd))}::bigint` : '';
  return { sql: RUN_LEASE.guardSql(set.sql + cost), params };
}
