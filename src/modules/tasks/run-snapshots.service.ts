import { Injectable } from '@nestjs/common';
import { ApprovalsService } from '@modules/approvals';
import { toApprovalResponse } from '@modules/approvals';
import { buildActivity } from './run-activity';
import { toArtifactResponse, toRunResponse, toStepResponse } from './task-run.dto';
import { TaskArtifactRepository } from './task-artifact.repository';
import { TaskRunRepository } from './task-run.repository';
import { TaskStepRepository } from './task-step.repository';

export interface RunSnapshot {
  /** The state was read after this sequence had committed. */
  sequence: number;
  status: string;
  /** `"run":…,"steps":…,"artifacts":…,"approvals":…,"activity":…` — spliced into every frame. */
  json: string;
}

const MAX_CACHED_RUNS = 500;

/**
 * Per-run state projections for the run stream, shared by every subscriber of the run in this process:
 * one database read per new sequence however many clients watch (fan-out), concurrent loads coalesced.
 */
@Injectable()
export class RunSnapshotsService {
  private readonly cache = new Map<string, { sequence: number; promise: Promise<RunSnapshot> }>();

  constructor(
    private readonly runs: TaskRunRepository,
    private readonly steps: TaskStepRepository,
    private readonly artifacts: TaskArtifactRepository,
    private readonly approvals: ApprovalsService,
  ) {}

  /** The newest cached snapshot of the run, if any (for events that change no state). */
  cached(tenantId: string, runId: string): Promise<RunSnapshot> | undefined {
    return this.cache.get(`${tenantId}/${runId}`)?.promise;
  }

  /** A snapshot read after `sequence` committed (a cached newer one is fine). */
  get(tenantId: string, runId: string, sequence: number): Promise<RunSnapshot> {
    const key = `${tenantId}/${runId}`;
    const hit = this.cache.get(key);
    if (hit && hit.sequence >= sequence) return hit.promise;
    const promise = this.load(tenantId, runId, sequence);
    this.cache.delete(key);
    this.cache.set(key, { sequence, promise });
    if (this.cache.size > MAX_CACHED_RUNS) this.cache.delete(this.cache.keys().next().value!);
    promise.catch(() => {
      if (this.cache.get(key)?.promise === promise) this.cache.delete(key);
    });
    return promise;
  }

  private async load(tenantId: string, runId: string, sequence: number): Promise<RunSnapshot> {
    const [run, steps, artifacts, approvals] = await Promise.all([
      this.runs.findById(tenantId, runId),
      this.steps.listForRun(tenantId, runId),
      this.artifacts.listForRun(tenantId, runId),
      this.approvals.listForRun(tenantId, runId),
    ]);
    if (!run) throw new Error(`run ${runId} disappeared`);
    const r = toRunResponse(run);
    const s = steps.map(toStepResponse);
    const a = artifacts.map(toArtifactResponse);
    const ap = approvals.map(toApprovalResponse);
    const body = JSON.stringify({ run: r, steps: s, artifacts: a, approvals: ap, activity: buildActivity(r, s, a, ap) });
    return { sequence, status: run.status, json: body.slice(1, -1) };
  }
}
