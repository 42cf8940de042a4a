import { busChannels, channelDoorbell, type Doorbell, type EventBus, type SessionDoorbell } from '@core/bus';

export { channelDoorbell, type Doorbell, type SessionDoorbell };

/**
 * Agent Chat's bus channels are declared in the registry (core/bus/channels.ts): `agent_chat.session.<id>` — a turn of
 * the session started, changed state or settled; `agent_chat.cancel.<turn id>` — stop this turn; `agent_chat.approval.<id>`
 * — an external-agent approval was decided. This name helper serves the callers that still take a name.
 */
export const approvalChannel = (approvalId: string): string => busChannels.agentChatApproval.of(approvalId).name;

/**
 * Subscribes to a session's doorbell for a wait loop (the waiting POST, a revert, an idle stream): a ring that arrives
 * while the caller is reading Postgres is kept, so it never waits out the full timeout for a change it already missed.
 */
export function sessionDoorbell(bus: EventBus, sessionId: string): Promise<Doorbell> {
  return channelDoorbell(bus, busChannels.agentChatSession.of(sessionId));
}
