/** One gateway request as the trace inspector shows it (`GET /hecate/v1/traces?request_id=`), and what a peer api process answers a trace lookup with. */

export interface TraceCandidate {
  provider: string;
  model: string;
  kind?: string;
  status: 'selected' | 'skipped' | 'failed' | 'not_tried';
  reason?: string;
  skip_reason?: string;
}

export interface TraceAttempt {
  provider: string;
  model: string;
  attempt: number;
  status: 'ok' | 'error';
  started_at: string;
  duration_ms: number;
  first_byte_ms?: number;
  upstream_status?: number;
  error_type?: string;
  error?: string;
  retryable?: boolean;
}

export interface TraceSpan {
  name: string;
  start_ms: number;
  duration_ms: number;
  attributes: Record<string, string | number | boolean>;
}

/** One gateway request as the trace inspector shows it (GET /hecate/v1/traces?request_id=). */
export interface GatewayTrace {
  request_id: string;
  trace_id: string;
  tenant_id: string;
  endpoint: string;
  inbound_protocol: string;
  stream: boolean;
  started_at: string;
  duration_ms: number;
  status: 'ok' | 'error';
  error_type?: string;
  route: {
    reason?: string;
    requested_model?: string;
    requested_provider?: string;
    selected_provider?: string;
    selected_model?: string;
    failover: boolean;
    fallback_from?: string;
    candidates: TraceCandidate[];
  };
  attempts: TraceAttempt[];
  usage?: { input_tokens: number; output_tokens: number; cached_input_tokens: number };
  cost_micros_usd?: number;
  timings: { route_ms: number; first_byte_ms?: number; total_ms: number };
  spans: TraceSpan[];
}
