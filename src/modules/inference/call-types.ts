import type { RequestOrigin } from '@core/context/request-context';
import type { UpstreamError } from '@modules/providers';
import type { NormalizedUsage, WireProtocol } from './protocol/normalized';
import type { RouteCandidate, RouteReason } from './route-planner';
import type { UpstreamBody, UpstreamStream } from './upstream-call';

export interface InferenceRouteInfo {
  request_id: string;
  provider: string;
  provider_kind: 'cloud' | 'local';
  model: string;
  route_reason: RouteReason;
  attempts: number;
  failover: boolean;
}

/** A finished non-streaming call, before rendering (the ingress passes `text` through when protocols match). */
export interface CompletedCall {
  info: InferenceRouteInfo;
  selected: RouteCandidate;
  upstreamProtocol: WireProtocol;
  body: UpstreamBody;
  usage: NormalizedUsage;
  costMicros: number;
}

/** A committed stream (first byte received). The consumer must call `finish` exactly once. */
export interface OpenStream {
  info: InferenceRouteInfo;
  selected: RouteCandidate;
  upstreamProtocol: WireProtocol;
  upstream: UpstreamStream;
  /** The request's `continuation` went upstream as a prefill (the reply continues it); false: the reply is anew. */
  continued: boolean;
  /** Records usage/cost/health/trace; `error` for a stream that broke after commit. */
  finish(outcome: { usage: NormalizedUsage; error?: UpstreamError; clientAborted?: boolean }): number;
}

/** Who a call is for and how it is bounded. */
export interface InferenceContext {
  tenantId: string;
  /** The API key that made the call or started the work it serves: its spend budgets apply (docs/budgets.md). */
  apiKeyId?: string;
  /** The saved agent whose run or session the call serves: its spend budgets apply. */
  agentId?: string;
  /** The request (or job) the call serves: its ids go on the usage row and the trace. */
  origin?: RequestOrigin | null;
  signal?: AbortSignal;
  /** For the ledger (e.g. `/hecate/v1/chat/sessions/send`); defaults to `router`. */
  endpoint?: string;
  /**
   * Budget hook: the most this call may cost, in micro-USD. A candidate whose worst case (its output price × the
   * request's max_tokens, or DEFAULT_WORST_CASE_OUTPUT_TOKENS without one) exceeds it is skipped (`budget_denied`);
   * none left → BudgetExceededError before any upstream request.
   */
  costCapMicros?: number;
}
