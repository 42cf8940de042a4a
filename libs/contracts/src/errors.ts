/** The error envelope of `/hecate/v1/*` (docs/api.md §4 "Error envelope"). */
export interface ErrorBody {
  type: string;
  message: string;
  user_message: string;
  operator_action: string;
  request_id?: string;
  trace_id?: string;
  [extra: string]: unknown;
}

export interface ErrorEnvelope {
  error: ErrorBody;
}

/** Stable error types of the API contract (docs/api.md §4.2); modules add their own dotted types (e.g. `chat_session.branch_busy`). */
export const ErrorType = {
  InvalidRequest: 'invalid_request',
  Unauthorized: 'unauthorized',
  Forbidden: 'forbidden',
  NotFound: 'not_found',
  Conflict: 'conflict',
  PayloadTooLarge: 'payload_too_large',
  RateLimitExceeded: 'rate_limit_exceeded',
  ModelNotConfigured: 'model_not_configured',
  RouteImpossible: 'route_impossible',
  ServiceUnavailable: 'service_unavailable',
  GatewayError: 'gateway_error',
  // A model call that failed upstream, as the one model-calling service classifies it.
  UpstreamTimeout: 'upstream_timeout',
  UpstreamUnavailable: 'upstream_unavailable',
  UpstreamError: 'upstream_error',
  UpstreamAuthFailed: 'upstream_auth_failed',
  ProviderRateLimited: 'provider_rate_limited',
  BudgetExceeded: 'budget_exceeded',
  // The browser wall (core/http/browser-edge.ts) and the open-stream caps (core/http/sse).
  HostNotAllowed: 'host_not_allowed',
  OriginNotAllowed: 'origin_not_allowed',
  UnsupportedMediaType: 'unsupported_media_type',
  StreamLimitExceeded: 'stream_limit_exceeded',
} as const;
