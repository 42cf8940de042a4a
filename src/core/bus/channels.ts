import type { EventEnvelope } from '@contracts/events';
import type { JobPayloads } from '@contracts/jobs';
import type { GatewayTrace } from '@contracts/traces';

/**
 * The bus channel registry: every channel name on the EventBus and the payload it carries, declared once (as
 * libs/contracts/src/jobs.ts does for jobs). `EventBus.send` / `EventBus.listen` type-check against it. The names are
 * the wire: an api and a worker of the same version talk through them, so a name never changes in place.
 * Every message is a doorbell (docs/architecture.md): lossy, so a reader refills from Postgres.
 */

/** One channel; `P` is what its messages carry (carried by the type only). */
export interface BusChannel<P> {
  readonly name: string;
  /** Never set: ties the payload type to the channel. */
  readonly payload?: P;
}

/** Channels of one kind with an id in the name (`runs.cancel.<run id>`); `all` is the subscription pattern of them all. */
export interface BusChannelFamily<P> {
  of(id: string): BusChannel<P>;
  readonly all: BusChannel<P>;
  /** The id in the name of one of this family's channels. */
  idOf(channel: string): string;
}

const channel = <P>(name: string): BusChannel<P> => ({ name });

const family = <P>(prefix: string, suffix = ''): BusChannelFamily<P> => ({
  of: (id) => ({ name: `${prefix}${id}${suffix}` }),
  all: { name: `${prefix}*${suffix}` },
  idOf: (name) => name.slice(prefix.length, name.length - suffix.length),
});

/** Events of one run committed together: sequences from..to, contiguous. */
export interface RunBatchMessage {
  from: number;
  to: number;
  events: EventEnvelope[];
}

/** One stamping pass: feed cursors from..to, contiguous across all tenants. */
export interface FeedBatchMessage {
  from: number;
  to: number;
  events: { tenant_id: string; envelope: EventEnvelope }[];
}

/** What an Agent Chat session doorbell says (enough for the active-sessions feed; readers take the rest from Postgres). */
export interface SessionDoorbell {
  tenant_id: string;
  session_id: string;
  turn_id?: string;
  runtime_kind?: string;
  /** The turn's status now, or `guidance`, `queued_next`, `deleted`. */
  status: string;
}

/** One worker's MCP client cache counts. */
export interface CacheReplyMessage {
  worker: string;
  entries: number;
  in_use: number;
  idle: number;
}

/** A trace lookup one api process asks the others; `replyTo` is a `gatewayTraceReply` channel. */
export interface TraceLookupMessage {
  requestId: string;
  tenantId: string | null;
  replyTo: string;
  /** The asking process (it ignores its own question). */
  origin: string;
}

/** A live stream's doorbell: chunk `i` with its data `d`, or `i: -1` when the stream is done. */
export interface LiveStreamBell {
  i: number;
  d?: string;
}

/** A settings table changed: every process reloads it from Postgres. */
export interface SettingsChanged {
  at: number;
}

export const busChannels = {
  // events: the run's and the public feed's doorbells after commit
  eventsRun: family<RunBatchMessage>('events.run.'),
  eventsFeed: channel<FeedBatchMessage>('events.feed'),
  // tasks
  /** An api process committed a cancel; the worker running the run aborts it. */
  runCancel: family<{ runId: string }>('runs.cancel.'),
  // gateway
  gatewayTraceLookup: channel<TraceLookupMessage>('gateway.traces.lookup'),
  gatewayTraceReply: family<{ traces: GatewayTrace[] }>('gateway.traces.reply.'),
  pricingChanged: channel<SettingsChanged>('gateway.pricing.changed'),
  providersChanged: channel<SettingsChanged>('gateway.providers.changed'),
  capabilitiesChanged: channel<SettingsChanged>('gateway.capabilities.changed'),
  /** A spend budget was created, changed or deleted: every process reloads its copy (docs/budgets.md). */
  budgetsChanged: channel<SettingsChanged>('gateway.budgets.changed'),
  // chat sessions: per session id
  /** Stop this generation (its owner aborts it and persists the partial reply). */
  chatStop: family<{ generation_id: string }>('chat.stop.'),
  /** The owner persisted the stopped generation's partial reply. */
  chatStopped: family<{ generation_id: string }>('chat.stopped.'),
  chatSessionChanged: channel<{ session_id: string }>('chat.session.changed'),
  // agent chat
  agentChatSession: family<SessionDoorbell>('agent_chat.session.'),
  /** Stop this turn (the worker running it listens); per turn id. */
  agentChatCancel: family<{ turn_id: string }>('agent_chat.cancel.'),
  /** An external-agent approval was decided (the worker waiting for it listens); per approval id. */
  agentChatApproval: family<{ approval_id: string }>('agent_chat.approval.'),
  /** An External Agent turn handed to the worker (lease owner) whose process holds the session's adapter. */
  agentChatAdapterOwner: family<JobPayloads['agent_chat.turn']>('agent_chat.adapter_owner.'),
  agentChatAdapterControl: channel<{ session_id: string; action: 'close' | 'delete' }>('agent_chat.adapter_control'),
  // auth
  apiKeyRevoked: channel<{ prefix: string }>('auth.api_key.revoked'),
  // mcp: the cache census
  mcpCacheRequest: channel<{ id: string }>('mcp.cache.request'),
  mcpCacheReply: family<CacheReplyMessage>('mcp.cache.reply.'),
  // worker requests (core/lease): the api asks a worker and waits
  /** Rung after the worker's commit (taken, answered): the waiting api rereads the row. */
  workerRequest: family<Record<string, never>>('worker-request.'),
  /** Input that is never stored (literal secrets), handed by the api to the lease holder `token` only. */
  workerRequestInput: { of: (id: string, token: string): BusChannel<unknown> => channel(`worker-request.${id}.input.${token}`) },
  // platform
  liveStream: family<LiveStreamBell>('live.'),
  /** The `system.echo` self-check's progress, per token. */
  systemProbe: family<{ status: 'running' | 'completed'; worker: string; attempts: number }>('system.probe.'),
} as const;
