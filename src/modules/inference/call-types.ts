import type { UpstreamError } from '@modules/providers';
import type { NormalizedUsage, WireProtocol } from './protocol/normalized';
import type { RouteCandidate, RouteReason } from './route-planner';
import type { UpstreamBody, UpstreamStream } from './upstream-call';

export interface GatewayRouteInfo {
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
  info: GatewayRouteInfo;
  selected: RouteCandidate;
  upstreamProtocol: WireProtocol;
  body: UpstreamBody;
  usage: NormalizedUsage;
  costMicros: number;
}

/** A committed stream (first byte received). The consumer must call `finish` exactly once. */
export interface OpenStream {
  info: GatewayRouteInfo;
  selected: RouteCandidate;
  upstreamProtocol: WireProtocol;
  upstream: UpstreamStream;
  /** Records usage/cost/health/trace; `error` for a stream that broke after commit. */
  finish(outcome: { usage: NormalizedUsage; error?: UpstreamError; clientAborted?: boolean }): number;
}
