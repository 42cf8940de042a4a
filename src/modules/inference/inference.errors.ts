import { ErrorType } from '@contracts/errors';
import { DomainError, InvalidRequestError } from '@core/http/domain-error';
import type { UpstreamError } from '@modules/providers';
import type { TraceCandidate } from './usage/trace-store.service';

/** What a server with no provider at all tells its operator: the exact variables, then the console. */
export const NO_PROVIDER_ACTION =
  'No provider is configured. Set PROVIDER_OPENAI_API_KEY=… (or PROVIDER_ANTHROPIC_API_KEY=…, or PROVIDER_<NAME>_BASE_URL for a ' +
  'local OpenAI-compatible server such as Ollama) and restart, or add one in the console under Providers.';

export class ModelNotConfiguredError extends DomainError {
  constructor(
    message: string,
    details: { model?: string; provider?: string; suggested_models: string[]; [k: string]: unknown },
    { noProvider = false }: { noProvider?: boolean } = {},
  ) {
    super(ErrorType.ModelNotConfigured, 422, message, {
      userMessage: noProvider
        ? 'No model provider is configured on this server yet.'
        : 'The selected model is not currently available from any configured provider.',
      operatorAction: noProvider
        ? NO_PROVIDER_ACTION
        : details.suggested_models.length
          ? `Choose one of the suggested models, or refresh discovery (GET /v1/models?refresh=1) and check GET /hecate/v1/providers/status.`
          : 'Configure a provider that serves this model, or refresh discovery (GET /v1/models?refresh=1).',
      details,
    });
  }
}

export class RouteImpossibleError extends DomainError {
  constructor(message: string, candidates: TraceCandidate[]) {
    super(ErrorType.RouteImpossible, 503, message, {
      userMessage: 'No configured provider can serve this request.',
      operatorAction: 'Open Providers to inspect readiness checks, discover models, or enable a routable provider (GET /hecate/v1/providers/status).',
      details: { candidates: candidates.map((c) => ({ provider: c.provider, model: c.model, skip_reason: c.skip_reason })) },
      headers: { 'retry-after': '1' },
    });
  }
}

export class UnknownProviderError extends InvalidRequestError {
  constructor(provider: string, known: string[]) {
    super(`unknown provider "${provider}"; configured providers: ${known.join(', ') || '(none)'}`, {
      userMessage: 'The requested provider is not configured.',
      operatorAction: known.length ? 'Use a provider name from GET /hecate/v1/providers/status, or add it under Settings → Providers.' : NO_PROVIDER_ACTION,
      details: { param: 'provider' },
    });
  }
}

/** A failed route after retries and failover, mapped to a client status without leaking upstream details. */
export class UpstreamFailedError extends DomainError {
  constructor(last: UpstreamError, details: Record<string, unknown>) {
    const { status, type, user } = classify(last);
    super(type, status, last.message, {
      userMessage: user,
      operatorAction:
        type === ErrorType.UpstreamAuthFailed
          ? 'Check the provider API key (PUT /hecate/v1/settings/providers/{provider_id}/api-key).'
          : 'Check GET /hecate/v1/providers/status and the trace (GET /hecate/v1/traces?request_id=...).',
      details,
      headers: status === 429 || status === 503 ? { 'retry-after': String(Math.max(1, Math.ceil((last.info.retryAfterMs ?? 1000) / 1000))) } : {},
    });
  }
}

/** A client's request the gateway cannot serialise for the upstream (e.g. nesting too deep): the client's fault. */
export class UnsendableRequestError extends InvalidRequestError {
  constructor(reason: string) {
    super(`the request cannot be sent upstream: ${reason}`, {
      userMessage: 'The request is invalid.',
      operatorAction: 'Simplify the request body (nesting depth, sizes) and retry.',
    });
  }
}

/** A call whose worst-case cost (the model's output price × its max_tokens) exceeds the caller's cost cap. */
export class BudgetExceededError extends DomainError {
  constructor(details: { cost_cap_micros_usd: number; worst_case_micros_usd: number; provider?: string; model?: string }) {
    super(ErrorType.BudgetExceeded, 402, 'the remaining budget cannot cover this model call', {
      userMessage: 'The budget left for this work cannot cover another model call.',
      operatorAction: 'Raise the budget (budget_micros_usd), lower max_tokens, or choose a cheaper model.',
      details,
    });
  }
}

/** A request built by code (not by a client) that the router cannot send: a server bug, answered as a 500. */
export class InvalidInferenceRequestError extends DomainError {
  constructor(message: string) {
    super(ErrorType.GatewayError, 500, `invalid in-process model request: ${message}`, {
      userMessage: 'The server built an invalid model request.',
      operatorAction: 'Report this with the request id; it is a server bug, not a client error.',
    });
  }
}

function classify(e: UpstreamError): { status: number; type: string; user: string } {
  if (e.kind === 'timeout') return { status: 504, type: ErrorType.UpstreamTimeout, user: 'The provider did not answer in time.' };
  if (e.kind === 'network' || e.kind === 'url_blocked') return { status: 502, type: ErrorType.UpstreamUnavailable, user: 'The provider could not be reached.' };
  if (e.kind === 'protocol') return { status: 502, type: ErrorType.UpstreamError, user: 'The provider sent an invalid response.' };
  const s = e.info.status ?? 502;
  if (s < 400) return { status: 502, type: ErrorType.UpstreamError, user: 'The provider answered with a redirect or an unexpected status.' };
  if (s === 429) return { status: 429, type: ErrorType.ProviderRateLimited, user: 'The provider is rate limiting requests.' };
  if (s === 401 || s === 403) return { status: 502, type: ErrorType.UpstreamAuthFailed, user: 'The provider rejected the gateway credentials.' };
  if (s >= 500) return { status: 502, type: ErrorType.UpstreamError, user: 'The provider failed to answer.' };
  if (s === 404) return { status: 404, type: ErrorType.NotFound, user: 'The provider does not know this model or endpoint.' };
  if (s === 413) return { status: 413, type: ErrorType.PayloadTooLarge, user: 'The request is too large for the provider.' };
  return { status: s >= 400 && s < 500 ? s : 400, type: ErrorType.InvalidRequest, user: 'The provider rejected the request.' };
}
