import { Inject, Injectable } from '@nestjs/common';
import { busChannels, EventBus } from '@core/bus';
import { noWorkerAnswered, WorkerRequests } from '@core/lease';
import { ignoreFailure } from '@core/logging/ignore-failure';
import { AdapterSessionRepository } from './adapter-session.repository';
import { ADAPTER_OPEN_REQUEST, type AdapterOpenRequest } from './external-agents.types';
import { SessionKeysRepository } from './session-keys.repository';

/** Beyond the adapter's own start ceiling: the queue hand-off and the bus round trip. */
const OPEN_WAIT_MS = 75_000;

/**
 * External Agent sessions, api side (docs/design.md §11: the adapter runs on a worker). Open starts a new session's
 * adapter on a worker — initialize + `session/new` in the session's workspace, a worker request the worker holding the
 * adapter (AdapterSessionHost) answers once the native session id is persisted; an adapter that cannot start answers
 * 502 with its diagnostic. Close and delete ring the worker holding the adapter and give its lease up (the lease ends it
 * even if the ring is lost).
 */
@Injectable()
export class ExternalAgentSessions {
  constructor(
    private readonly rows: AdapterSessionRepository,
    private readonly keys: SessionKeysRepository,
    private readonly requests: WorkerRequests,
    @Inject(EventBus) private readonly bus: EventBus,
  ) {}

  /** Opens the session's adapter on a worker of the runs queue (a worker request); raises what the worker raised. */
  async open(tenantId: string, sessionId: string, adapterId: string): Promise<void> {
    const request: AdapterOpenRequest = { session_id: sessionId };
    await this.requests.ask(
      tenantId,
      ADAPTER_OPEN_REQUEST,
      { ...request },
      {
        queue: 'runs',
        waitMs: OPEN_WAIT_MS,
        noWorker: () =>
          noWorkerAnswered(`no worker started the ${adapterId} adapter within ${OPEN_WAIT_MS / 1000} s`, {
            userMessage: 'The external agent did not start.',
          }),
      },
    );
  }

  /** `close` (history kept) or `delete`: the holder closes the native session and ends the process group. */
  async release(sessionId: string, action: 'close' | 'delete'): Promise<void> {
    try {
      if (action === 'close') await this.rows.markClosed(sessionId);
      // Its gateway key goes now, whether or not a worker still holds the adapter (the recovery pass retries).
      await this.keys.revokeAll(sessionId).catch(ignoreFailure('session gateway keys revoke', 'the recovery pass revokes session keys no adapter holds'));
    } finally {
      await this.bus
        .send(busChannels.agentChatAdapterControl, { session_id: sessionId, action })
        .catch(ignoreFailure('adapter control message', 'the worker holding the adapter ends it at its idle timeout'));
    }
  }

  /** Gateway keys of metered adapters whose worker died without revoking them (older than `graceMs`); how many. */
  revokeOrphanKeys(graceMs: number): Promise<number> {
    return this.keys.revokeOrphans(graceMs);
  }
}
