import { Inject, Injectable } from '@nestjs/common';
import { busChannels, EventBus } from '@core/bus';
import { rootLogger } from '@core/logging/logger';
import { RunQueue } from '@core/queue/run-queue.port';
import { ignoreFailure } from '@core/logging/ignore-failure';
import { isActiveTurn, type RuntimeKind, type TurnRow } from '../agent-chat-rows';
import { AgentChatTurnsService } from './agent-chat-turns.service';
import { TurnLeaseRepository } from './turn-lease.repository';
import { AgentChatRepository } from '../agent-chat.repository';
import { type LaunchRequest, type TurnRuntime, TurnRuntimeKind } from './turn-runtime';

/**
 * `runtime_kind: model` (docs/api.md §4 direct model chat, docs/design.md §11.2): a turn is an `agent_chat.turn` job a worker claims
 * under the turn's lease (AgentChatTurnRunner). No task is created.
 */
@Injectable()
@TurnRuntimeKind()
export class ModelTurnRuntime implements TurnRuntime {
  readonly kind: RuntimeKind = 'model';

  constructor(
    private readonly repo: AgentChatRepository,
    private readonly leases: TurnLeaseRepository,
    private readonly turns: AgentChatTurnsService,
    @Inject(RunQueue) private readonly queue: RunQueue,
    @Inject(EventBus) private readonly bus: EventBus,
  ) {}

  continues(_previous: TurnRow | null): TurnRow | null {
    return null;
  }

  async launch(req: LaunchRequest): Promise<TurnRow> {
    await this.enqueue(req.turn, false);
    return req.turn;
  }

  follow(turn: TurnRow): Promise<TurnRow> {
    return Promise.resolve(turn);
  }

  /** Nobody runs it yet: it ends here. A running one is rung on the bus (its worker stops at the next delta and keeps the partial; a dead worker's successor sees `cancel_requested`). */
  async cancel(turn: TurnRow): Promise<string> {
    if (turn.status === 'queued' && !turn.lease_token) {
      const ended = await this.repo.transaction(async (m) => {
        const fresh = await this.repo.findTurn(turn.id, m);
        if (!fresh || fresh.status !== 'queued' || fresh.lease_token) return null;
        return this.turns.endIn(m, fresh, { status: 'cancelled', content: '', error: { type: 'cancelled', message: 'cancelled before it started' } });
      });
      if (ended) {
        this.turns.ended(turn, 'cancelled', ended);
        return 'cancelled';
      }
    }
    await this.bus
      .send(busChannels.agentChatCancel.of(turn.id), { turn_id: turn.id })
      .catch(ignoreFailure('turn cancel message', 'cancel_requested is stored on the turn: a worker that takes the turn over ends it cancelled'));
    return 'cancelling';
  }

  async recover(turn: TurnRow): Promise<void> {
    if (isActiveTurn(turn.status)) await this.enqueue(turn, true);
  }

  /** Puts the turn on the queue (job id = turn id); a failed enqueue is retried by the recovery pass. */
  private async enqueue(turn: Pick<TurnRow, 'id' | 'tenant_id'>, mark: boolean): Promise<void> {
    try {
      await this.queue.enqueue('agent_chat.turn', { turnId: turn.id, tenantId: turn.tenant_id }, { jobId: turn.id });
      // A new turn's row already says it was enqueued (stamped when it was inserted): one statement less per prompt.
      if (mark) await this.leases.markEnqueued(turn.id);
    } catch (err) {
      rootLogger().warn({ turn_id: turn.id, err: String(err) }, 'agent chat turn enqueue failed; the recovery pass enqueues it');
    }
  }
}

/**
 * `runtime_kind: external_agent` (docs/api.md §4): like a model turn, an `agent_chat.turn` job claimed under the
 * turn's lease — the worker that claims it runs it on the session's adapter (ExternalTurnExecutor), or hands it to the
 * worker holding that adapter. Every turn of the session continues its one segment (the native session).
 */
@Injectable()
@TurnRuntimeKind()
export class ExternalAgentTurnRuntime extends ModelTurnRuntime {
  override readonly kind: RuntimeKind = 'external_agent';

  override continues(previous: TurnRow | null): TurnRow | null {
    return previous?.runtime_kind === 'external_agent' ? previous : null;
  }
}
