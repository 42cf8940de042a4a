import { createHash, randomUUID } from 'node:crypto';
import { Injectable, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { AppConfig } from '@core/config/app-config';
import { randomHex } from '@core/context/random-hex';
import { newRequestId, type Principal } from '@core/context/request-context';
import { AgentChatQueueService } from '@modules/agent-chat';
import { openSecret, resolveSecretKey } from '@core/crypto/secret-box';
import { DomainError } from '@core/http/domain-error';
import { asDomainError, toErrorEnvelope } from '@core/http/error-envelope';
import { PeriodicPass } from '@core/async/periodic-pass';
import { LEASE_OWNER } from '@core/lease';
import { rootLogger } from '@core/logging/logger';
import { unsealMcpServers } from '@modules/mcp';
import { type CreateTaskDto, TaskRunChainsService } from '@modules/tasks';
import { type ClaimedFiring, type FiringRow, type NewFiring, type Outcome, type ScheduleRow, SchedulesRepository } from './schedules.repository';
import { planDue } from './schedule-times';
import { timingOf } from './schedules.service';

/** Schedules planned per pass (a pass loops while it finds a full batch). */
const BATCH = 50;
/** Workers that may take one firing on before it is failed (each after the previous one's claim expired). */
const MAX_ATTEMPTS = 5;

/**
 * Fires schedules on workers (docs/schedules.md). Each pass, under `FOR UPDATE SKIP LOCKED`, it plans the due schedules:
 * the fire times due now become `pending` firings claimed by this worker until the lease ends, missed ones follow the
 * schedule's catch-up policy, and `next_fire_at` moves on — in one transaction, so a fire time is planned once whatever
 * the number of workers (UNIQUE (schedule_id, scheduled_for) besides). It then fires each claimed firing under ids derived
 * from the firing's (the task, or the Agent Chat queued item): a worker that dies mid-fire leaves a pending firing whose
 * claim expires, and the worker that takes it over finds what the first one made instead of making another.
 */
@Injectable()
export class ScheduleFirer implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly passes = new PeriodicPass('schedule pass', () => this.pass());
  private readonly secretKey: Buffer | undefined;

  constructor(
    private readonly repo: SchedulesRepository,
    private readonly chains: TaskRunChainsService,
    private readonly queue: AgentChatQueueService,
    private readonly config: AppConfig,
  ) {
    this.secretKey = resolveSecretKey(config);
  }

  onApplicationBootstrap(): void {
    this.passes.start(this.config.tasks.scheduler.intervalMs);
    void this.passes.run();
  }

  /** A firing left pending by the shutdown is taken over once its claim expires. */
  onApplicationShutdown(): Promise<void> {
    return this.passes.stop();
  }

  /** One pass now (tests; the timer otherwise). */
  tick(): Promise<void> {
    return this.passes.run();
  }

  /** Plans what is due, fires what this worker claimed, then takes over expired claims. */
  private async pass(): Promise<void> {
    for (let more = true; more && !this.passes.stopped;) {
      const planned = await this.plan();
      more = planned.full;
      await this.fireAll(planned.claimed);
    }
    await this.fireAll(await this.repo.reclaim(BATCH, this.claim()));
  }

  private claim() {
    return { owner: LEASE_OWNER, token: randomUUID(), leaseSeconds: this.config.tasks.leaseSeconds };
  }

  private async plan(): Promise<{ claimed: ClaimedFiring[]; full: boolean }> {
    const claim = this.claim();
    return this.repo.transaction(async (m) => {
      const { now, due } = await this.repo.lockDue(m, BATCH);
      const claimed: ClaimedFiring[] = [];
      for (const s of due) {
        const plan = planDue(timingOf(s), { nextFireAt: s.next_fire_at!, fired: s.fire_count }, now, {
          catchUp: s.catch_up,
          catchUpMax: s.catch_up_max,
          graceMs: this.config.tasks.scheduler.misfireGraceMs,
        });
        const firings: NewFiring[] = plan.fire.map((at) => ({ id: firingId(), scheduled_for: at, status: 'pending', error: null }));
        if (plan.skipped) firings.push({ id: firingId(), scheduled_for: plan.skipped.last, status: 'skipped', error: missed(plan.skipped, s) });
        const written = await this.repo.recordPass(m, s, firings, { at: plan.next, fired: plan.fire.length }, claim);
        claimed.push(...written.map((f) => withTarget(f, s)));
      }
      return { claimed, full: due.length === BATCH };
    });
  }

  private async fireAll(firings: ClaimedFiring[]): Promise<void> {
    for (const f of firings) {
      if (this.passes.stopped) return;
      await this.fire(f);
    }
  }

  /** Does what the firing's target says (once, whoever finishes it) and records it while this worker still holds the claim. */
  private async fire(f: ClaimedFiring): Promise<void> {
    const token = f.claim_token!;
    try {
      await this.repo.finish(f.id, token, { status: 'fired', error: null, ...(await this.act(f)) });
    } catch (err) {
      // A refusal (the template no longer valid, the saved agent or session gone, no model configured) is the firing's
      // answer; anything else (the database went away) leaves it pending for the next claim, up to MAX_ATTEMPTS workers.
      if (err instanceof DomainError || f.attempts >= MAX_ATTEMPTS) {
        const error = toErrorEnvelope(asDomainError(err, (message) => new DomainError('schedule_fire_failed', 500, message)));
        await this.repo.finish(f.id, token, { status: 'failed', error });
        rootLogger().warn({ schedule_id: f.schedule_id, firing_id: f.id, error_type: error.type }, 'schedule fire refused');
      } else {
        rootLogger().warn({ schedule_id: f.schedule_id, firing_id: f.id, err: String(err) }, 'schedule fire failed; another claim retries it');
      }
    }
  }

  /**
   * The fire itself, under ids derived from the firing's: the task (created if absent, its first run started if not yet)
   * or the session's queued item (queued if absent; the queue starts it as the session's next turn).
   */
  private async act(f: ClaimedFiring): Promise<Omit<Outcome, 'status' | 'error'>> {
    const derived = createHash('sha256').update(f.id).digest('hex').slice(0, 24);
    const origin = { requestId: newRequestId() };
    if (f.target.type === 'agent_chat_message') {
      const { session_id, content, runtime_kind, provider, model } = f.target;
      const principal: Principal = { kind: f.host_paths ? 'operator' : 'api_key', tenantId: f.tenant_id, scopes: [] };
      const item = await this.queue.enqueue(principal, session_id, { content, runtime_kind, provider, model }, `queued_${derived}`);
      return { session_id, queue_item_id: item.id };
    }
    const taskId = `task_${derived}`;
    const fire = { schedule_id: f.schedule_id, firing_id: f.id, scheduled_for: f.scheduled_for.toISOString() };
    const run = await this.chains.createAndStartOnce(
      f.tenant_id,
      taskId,
      this.taskOf(f.target.task),
      { hostPaths: f.host_paths, apiKeyId: keyOf(f.created_by) },
      origin,
      fire,
    );
    return { task_id: taskId, run_id: run.id };
  }

  /** The task fields of the target, MCP literal values opened for the task to seal again. */
  private taskOf(template: Record<string, unknown>): CreateTaskDto {
    const task = { ...template };
    if (Array.isArray(task.mcp_servers)) task.mcp_servers = unsealMcpServers(task.mcp_servers, (sealed) => openSecret(this.secretKey, sealed));
    return task as unknown as CreateTaskDto;
  }
}

const firingId = (): string => `fire_${randomHex(12)}`;

const withTarget = (f: FiringRow, s: ScheduleRow): ClaimedFiring => ({ ...f, target: s.target, host_paths: s.host_paths, created_by: s.created_by });

function missed(skipped: { count: number; first: Date; last: Date; capped: boolean }, s: ScheduleRow): { type: string; message: string } {
  const count = `${skipped.capped ? 'at least ' : ''}${skipped.count} fire time${skipped.count === 1 ? '' : 's'}`;
  return {
    type: 'missed_fire_times',
    message: `${count} from ${skipped.first.toISOString()} to ${skipped.last.toISOString()} passed without a fire (catch_up ${s.catch_up}${s.max_fires !== null ? `, max_fires ${s.max_fires}` : ''})`,
  };
}

/** The API key a schedule was created with (`api_key:<id>`): the budgets of the key apply to what its fires start. */
const keyOf = (createdBy: string): string | undefined => (createdBy.startsWith('api_key:') ? createdBy.slice('api_key:'.length) : undefined);
