import { channelDoorbell, type Doorbell } from '@core/bus/doorbell';
import type { EventBus } from '@core/bus/event-bus.port';

export { channelDoorbell, type Doorbell };

/**
 * Bus channels of Agent Chat (doorbells after commit; readers refill from Postgres, DESIGN §4.3):
 * `agent_chat.session.<id>` — a turn of the session started, changed state or settled;
 * `agent_chat.cancel.<turn id>` — stop this turn (the worker running it listens).
 */
export const sessionChannel = (sessionId: string): string => `agent_chat.session.${sessionId}`;
export const cancelChannel = (turnId: string): string => `agent_chat.cancel.${turnId}`;
export const CANCEL_PATTERN = 'agent_chat.cancel.*';
export const cancelledTurnOf = (channel: string): string => channel.slice('agent_chat.cancel.'.length);
/** `agent_chat.approval.<id>` — an external-agent approval was decided (the worker waiting for it listens). */
export const approvalChannel = (approvalId: string): string => `agent_chat.approval.${approvalId}`;

/** What a session doorbell says (enough for the active-sessions feed; readers take the rest from Postgres). */
export interface SessionDoorbell {
  tenant_id: string;
  session_id: string;
  turn_id?: string;
  runtime_kind?: string;
  /** The turn's status now, or `guidance`, `queued_next`, `deleted`. */
  status: string;
}
export const SESSION_PATTERN = 'agent_chat.session.*';

/**
 * Subscribes to a session's doorbell for a wait loop (the waiting POST, a revert, an idle stream): a ring that arrives
 * while the caller is reading Postgres is kept, so it never waits out the full timeout for a change it already missed.
 */
export function sessionDoorbell(bus: EventBus, sessionId: string): Promise<Doorbell> {
  return channelDoorbell(bus, sessionChannel(sessionId));
}
