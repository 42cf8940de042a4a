import { Inject, Injectable, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { busChannels, EventBus, type Unsubscribe } from '@core/bus';
import { AppConfig } from '@core/config/app-config';
import { LEASE_OWNER } from '@core/lease';
import { rootLogger } from '@core/logging/logger';
import { TurnApprovalsService } from '@modules/approvals';
import { isFinishedTurn } from '../agent-chat-rows';
import { AgentChatQueueService } from '../queue/agent-chat-queue.service';
import { TurnRuntimes } from './turn-runtime';
import { QueueRepository } from '../queue/queue.repository';
import { TurnLeaseRepository } from './turn-lease.repository';
import { ExternalAgentSessions } from '@modules/external-agents';

const BATCH = 200;
/** Queued-next items left `starting` by a process that died are looked at after this long. */
const STARTING_GRACE_MS = 60_000;
/** A session key is minted right after its adapter lease is claimed: younger ones are never orphans. */
const KEY_GRACE_MS = 10_000;

/**
 * Recovery of Agent Chat turns (worker role; docs/design.md §11.3, the lease is the one clock): every reconcile interval,
 * each active turn gets its runtime's recovery — model turns queued but not on the queue (a failed enqueue, a lost
 * Redis, an embedded restart) or running under an expired lease are enqueued again (the claim takes them over), agent
 * turns catch up with their runs even when no client is reading; sessions left idle with queued-next prompts are drained;
 * pending external-agent approvals whose waiter is gone become `timed_out` (`startup_reconcile`). In embedded mode, turns another (earlier)
 * life of this process held are taken over at boot.
 */
@Injectable()
export class AgentChatRecoveryService implements OnApplicationBootstrap, OnApplicationShutdown {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private stopped = false;
  private doorbells: Promise<Unsubscribe> | undefined;

  constructor(
    private readonly config: AppConfig,
    private readonly leases: TurnLeaseRepository,
    private readonly queueRows: QueueRepository,
    private readonly runtimes: TurnRuntimes,
    private readonly queue: AgentChatQueueService,
    private readonly approvals: TurnApprovalsService,
    private readonly externalSessions: ExternalAgentSessions,
    @Inject(EventBus) private readonly bus: EventBus,
  ) {}

  onApplicationBootstrap(): void {
    const boot = this.config.mode === 'embedded' ? this.leases.expireTurnsHeldByOthers(LEASE_OWNER) : Promise.resolve(0);
    this.running = boot
      .then(() => this.pass(true))
      .catch((err: unknown) => rootLogger().warn({ err: String(err) }, 'agent chat boot recovery failed; the periodic pass retries'))
      .finally(() => (this.running = undefined));
    this.timer = setInterval(() => void this.tick(), this.config.tasks.reconcileIntervalMs);
    this.timer.unref();
    // A turn that ended (on any process) lets the session's queued-next prompt start at once.
    this.doorbells = this.bus.listen(busChannels.agentChatSession.all, (bell) => {
      if (this.stopped || !(isFinishedTurn(bell.status) || bell.status === 'queued_next')) return;
      this.queue
        .drain(bell.session_id)
        .catch((err: unknown) => rootLogger().warn({ session_id: bell.session_id, err: String(err) }, 'queue drain failed; the next pass retries'));
    });
  }

  async onApplicationShutdown(): Promise<void> {
    this.stopped = true;
    clearInterval(this.timer);
    // Unsubscribing on shutdown: the connection goes with the process; a failure here has nothing left to act on.
    if (this.doorbells) await (await this.doorbells)().catch(() => undefined);
    // A running pass logs its own failure (tick, boot): this only waits for it to end.
    await this.running?.catch(() => undefined);
  }

  async tick(): Promise<void> {
    if (this.running || this.stopped) return;
    this.running = this.pass(false)
      .catch((err: unknown) => rootLogger().warn({ err: String(err) }, 'agent chat recovery pass failed; retrying next interval'))
      .finally(() => (this.running = undefined));
    await this.running;
  }

  private async pass(all: boolean): Promise<void> {
    const before = all ? new Date() : new Date(Date.now() - this.config.tasks.reconcileIntervalMs);
    for (const turn of await this.leases.turnsToRecover(before, BATCH)) {
      if (this.runtimes.has(turn.runtime_kind)) await this.runtimes.get(turn.runtime_kind).recover(turn);
    }
    // External-agent approvals nobody waits for any more (their worker was lost, or this process restarted).
    for (const a of await this.approvals.reconcileOrphans())
      rootLogger().info({ approval_id: a.id, session_id: a.session_id }, 'pending approval without a waiter: timed_out (startup_reconcile)');
    // Gateway keys of metered adapters whose worker died without revoking them.
    await this.externalSessions.revokeOrphanKeys(KEY_GRACE_MS);
    // Queued-next: items a dead process left `starting`, and idle sessions that still have waiting items.
    await this.queueRows.recoverStartingItems(STARTING_GRACE_MS);
    for (const sessionId of await this.queueRows.sessionsToDrain(BATCH)) await this.queue.drain(sessionId);
  }
}
