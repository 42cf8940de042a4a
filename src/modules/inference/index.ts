/** The inference module's public face: other modules import from `@modules/inference`, never its files. */
export { InferenceModule } from './inference.module';
export { DEFAULT_WORST_CASE_OUTPUT_TOKENS, InferenceEngineService } from './inference-engine.service';
export { RoutePlanningService } from './route-planning.service';
export { InferenceService, toUsageResponse, type InferenceResult, type InferenceStream, type LiveInferenceStream, type LiveTee } from './inference.service';
export type { CompletedCall, InferenceRouteInfo, InferenceContext, OpenStream } from './call-types';
export type { InferenceMessage, InferenceRequest, InferenceTool, InferenceToolChoice } from './inference-request';
export { liveFrameOf, resetFrame, type LiveDeltaFrame, type LiveResetFrame } from './live-frames';
export { LiveDeltaFrameDto, LiveResetFrameDto, ToolProgressFrameDto } from './live-frames.dto';
export {
  BudgetExceededError,
  InvalidInferenceRequestError,
  ModelNotConfiguredError,
  NO_PROVIDER_ACTION,
  RouteImpossibleError,
  UnknownProviderError,
  UpstreamFailedError,
} from './inference.errors';
export { ClientAbort, type CancelSignal } from './client-abort';
export { sendsResponses, type PreparedRequest } from './upstream-call';
export type { RouteReason } from './route-planner';
export { decodeUpstreamStream, UpstreamStreamError } from './stream-pipeline';
export {
  anthropicUsage,
  isObject,
  mergeUsage,
  num,
  openaiUsage,
  OPENAI_TO_STOP,
  STOP_TO_OPENAI,
  ZERO_USAGE,
  type ContentBlock,
  type InferenceDelta,
  type Json,
  type NormalizedUsage,
  type StopReason,
  type ToolCall,
  type WireProtocol,
} from './protocol/normalized';
export { hasHecateMessageFields } from './protocol/request-translation';
export { normalizeAnthropicResponse, normalizeOpenaiResponse, type NormalizedMessage } from './protocol/response-translation';
export { parseFrame, SseFramer, startsWith, type SseFrame } from './protocol/sse';
export { TracesController } from './usage/traces.controller';
export { UsageController } from './usage/usage.controller';
export { TraceUsageDto } from './usage/usage.dto';
export { TraceStoreService, type GatewayTrace, type TraceCandidate } from './usage/trace-store.service';
export { UsageLedgerService } from './usage/usage-ledger.service';
