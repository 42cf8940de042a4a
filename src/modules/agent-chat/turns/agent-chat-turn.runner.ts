import { Inject, Injectable, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import type { JobPayloads } from '@contracts/jobs';
import { sleep } from '@core/async/sleep';
import { BusCancels, busChannels, EventBus, type Unsubscribe } from '@core/bus';
import { AppConfig } from '@core/config/app-config';
import { isTransientDbError, retryTransient } from '@core/database/retry-transient';
import { keepLease, LEASE_OWNER, newLeaseToken } from '@core/lease';
import { rootLogger } from '@core/logging/logger';
import { MetricsService } from '@core/metrics/metrics.service';
import { RunQueue, type JobContext } from '@core/queue/run-queue.port';
import { ignoreFailure } from '@core/logging/ignore-failure';
import type { TurnRow } from '../agent-chat-rows';
import { AgentChatTurnsService } from './agent-chat-turns.service';
import { TurnLeaseRepository } from './turn-lease.repository';
import { ExternalTurnExecutor } from '../external/external-turn.executor';
import { ModelTurnExecutor } from './model-turn.executor';

/** Claims of one model turn that may end in a lost database before the next one ends it failed (each hand-over is one claim). */
const TRANSIENT_HANDOVERS = 5;

/**
 * Agent Chat turns on a worker (docs/design.md §11.2–11.4): claim the turn's lease (waiting out a live one), keep it
 * beating, run the turn — a model turn in ModelTurnExecutor, an external-agent turn in ExternalTurnExecutor — stop it on
 * a cancel from any api process, and hand a draining worker's turn back to the queue (docs/takeover.md).
 */
@Injectable()
export class AgentChatTurnRunner implements OnApplicationBootstrap, OnApplicationShutdown {
  /** The turns this worker runs; a cancel from any api process stops one at its next delta (the lease is the fallback). */
  private readonly cancels: BusCancels<{ turn_id: string }>;
  private forwards: Promise<Unsubscribe> | undefined;
  /** Aborts the turns this worker runs for other workers' hand-offs (not queue jobs) when it shuts down. */
  private readonly stopping = new AbortController();

  constructor(
    private readonly leases: TurnLeaseRepository,
    private readonly turns: AgentChatTurnsService,
    private readonly model: ModelTurnExecutor,
    private readonly external: ExternalTurnExecutor,
    private readonly config: AppConfig,
    @Inject(EventBus) private readonly bus: EventBus,
    @Inject(RunQueue) private readonly queue: RunQueue,
    private readonly metrics: MetricsService,
  ) {
    this.cancels = new BusCancels(bus, busChannels.agentChatCancel);
  }

  private get leaseMs(): number {
    return this.config.tasks.leaseSeconds * 1000;
  }

  activeCount(): number {
    return this.cancels.size;
  }

  /** External Agent turns whose session's adapter lives here are handed over by the worker that dequeued them. */
  onApplicationBootstrap(): void {
    this.forwards = this.bus.listen(busChannels.agentChatAdapterOwner.of(LEASE_OWNER), (m) => {
      void this.execute(m, { jobId: m.turnId, attempt: 1, signal: this.stopping.signal }).catch((err: unknown) =>
        rootLogger().warn({ turn_id: m.turnId, err: String(err) }, 'forwarded external agent turn failed'),
      );
    });
  }

  async onApplicationShutdown(): Promise<void> {
    this.stopping.abort();
    await this.cancels.close();
    // Unsubscribing on shutdown: the connection goes with the process; a failure here has nothing left to act on.
    if (this.forwards) await (await this.forwards)().catch(() => undefined);
  }

  async execute(payload: JobPayloads['agent_chat.turn'], job: JobContext): Promise<void> {
    void this.cancels
      .listen()
      .catch(ignoreFailure('turn cancel subscription', 'cancel_requested is stored on the turn: a worker that takes the turn over ends it cancelled'));
    const token = newLeaseToken();
    const turn = await this.claim(payload.turnId, token, job.signal);
    if (!turn) return;
    let lostDatabase = false;
    const state = { controller: new AbortController(), cancelled: turn.cancel_requested };
    let halted = false;
    const halt = (why: string) => {
      halted = true;
      state.controller.abort(new Error(why));
    };
    const onJobAbort = () => halt('worker shutting down');
    job.signal.addEventListener('abort', onJobAbort, { once: true });
    const unregister = this.cancels.register(turn.id, () => {
      state.cancelled = true;
      state.controller.abort(new Error('turn cancelled'));
    });
    const stopBeat = keepLease(() => this.leases.heartbeat(turn.id, token, this.leaseMs), {
      leaseMs: this.leaseMs,
      what: { turn_id: turn.id },
      onLost: () => halt('lease lost'),
    });
    try {
      if (turn.runtime_kind === 'external_agent') await this.external.run(turn, token, state, () => halted);
      else await this.model.run(turn, token, state, () => halted);
    } catch (err) {
      if (!halted && turn.runtime_kind === 'model' && isTransientDbError(err) && turn.attempts < TRANSIENT_HANDOVERS) {
        // The database dropped this worker's connections for longer than a write's retries (a failover, a storm of
        // terminated backends): that is no fault of the turn. It goes back to the queue like a draining worker's, and
        // the next attempt continues it from its live stream (or the persisted partial) — nothing is lost or repeated.
        rootLogger().warn({ turn_id: turn.id, attempt: turn.attempts, err: String(err) }, 'agent chat turn lost its database; handing it over');
        lostDatabase = true;
      } else if (!halted) {
        rootLogger().error({ turn_id: turn.id, err: err instanceof Error ? err.stack : String(err) }, 'agent chat turn failed');
        await this.turns
          .end(turn, { status: 'failed', content: '', error: { type: 'internal_error', message: err instanceof Error ? err.message : String(err) } }, token)
          .catch(ignoreFailure('ending a failed turn', 'its lease expires and the recovery pass takes the turn over'));
      }
    } finally {
      stopBeat();
      job.signal.removeEventListener('abort', onJobAbort);
      unregister();
    }
    if (lostDatabase || (halted && job.signal.aborted && !this.stopping.signal.aborted)) await this.handOver(turn, token);
  }

  /**
   * A draining worker's turn goes back to the queue at once (lease released, a fresh job): another worker continues it
   * from its live stream (or the persisted partial), without waiting for the lease to expire. If this fails, the
   * recovery pass takes the turn over when the lease expires.
   */
  private async handOver(turn: TurnRow, token: string): Promise<void> {
    try {
      const released = await this.leases.releaseTurn(turn.id, token);
      if (released) {
        await this.queue.enqueue('agent_chat.turn', { turnId: turn.id, tenantId: turn.tenant_id }, { jobId: `${turn.id}.handover.${turn.attempts}` });
      }
      rootLogger().info({ turn_id: turn.id, handed_over: released }, 'draining worker handed its agent chat turn over');
    } catch (err) {
      rootLogger().warn({ turn_id: turn.id, err: String(err) }, 'turn hand-over failed; the recovery pass takes it over when its lease expires');
    }
  }

  /** Takes the lease; a turn whose lease is still held is waited on until it expires (at most 2 × lease), then claimed. */
  private async claim(turnId: string, token: string, signal: AbortSignal): Promise<TurnRow | null> {
    for (let attempt = 0; attempt < 3 && !signal.aborted; attempt += 1) {
      // A retried claim that had committed finds its own token: it claims again (the claim accepts its token).
      const r = await retryTransient(() => this.leases.claimTurn(turnId, LEASE_OWNER, token, this.leaseMs));
      if ('turn' in r) {
        if (r.previousStatus === 'running') {
          rootLogger().warn({ turn_id: turnId, attempt: r.turn.attempts }, 'took over an agent chat turn whose worker was lost');
          this.metrics.leaseReclaimed('turn');
        }
        return r.turn;
      }
      if (r.reason === 'gone' || r.remainingMs > 2 * this.leaseMs) return null;
      await sleep(Math.max(0, r.remainingMs) + 100, signal);
    }
    return null;
  }
}
