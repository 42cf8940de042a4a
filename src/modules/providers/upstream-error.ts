import { scrubSecrets } from '@core/logging/logger';
import type { UrlBlockReason } from '@core/net/outbound-url-policy';
import type { RuntimeProvider } from './runtime-provider';
import { UrlPolicyError } from './upstream-transport';

export type UpstreamFailureKind = 'http' | 'timeout' | 'network' | 'url_blocked' | 'aborted' | 'protocol';
export type TimeoutPhase = 'connect' | 'first_byte' | 'idle';

export interface UpstreamErrorInfo {
  status?: number;
  retryable: boolean;
  phase?: TimeoutPhase;
  retryAfterMs?: number;
  /** The upstream's own error type/code (e.g. `rate_limit_error`), when it sent one. */
  upstreamType?: string;
  blockReason?: UrlBlockReason;
}

/**
 * A failed upstream call, already scrubbed of credentials. Retryable: timeouts, connection failures, 5xx, 408
 * and 429 (the only failures retried).
 */
export class UpstreamError extends Error {
  constructor(
    readonly kind: UpstreamFailureKind,
    message: string,
    readonly info: UpstreamErrorInfo,
  ) {
    super(message);
    this.name = 'UpstreamError';
  }

  get retryable(): boolean {
    return this.info.retryable;
  }

  get rateLimited(): boolean {
    return this.kind === 'http' && this.info.status === 429;
  }
}

const MAX_MESSAGE = 500;

/** Removes the provider key, credentials embedded in URLs, and bearer tokens from upstream text. */
export function scrubUpstreamText(provider: RuntimeProvider, text: string): string {
  const cleaned = scrubSecrets(provider.scrub(text)).replace(/(https?:\/\/)[^/\s:@]+:[^/\s@]+@/gi, '$1***@');
  return cleaned.length > MAX_MESSAGE ? `${cleaned.slice(0, MAX_MESSAGE)}…` : cleaned;
}

/** Extracts `{message, type}` from an OpenAI, Anthropic or Ollama error body. */
export function parseUpstreamErrorBody(text: string): { message?: string; type?: string } {
  try {
    const body = JSON.parse(text) as { error?: unknown; message?: unknown };
    const err = body.error;
    if (typeof err === 'string') return { message: err };
    if (err && typeof err === 'object') {
      const e = err as { message?: unknown; type?: unknown; code?: unknown };
      return {
        message: typeof e.message === 'string' ? e.message : undefined,
        type: typeof e.type === 'string' ? e.type : typeof e.code === 'string' ? e.code : undefined,
      };
    }
    if (typeof body.message === 'string') return { message: body.message };
  } catch {
    // not JSON
  }
  return { message: text.trim() || undefined };
}

export function httpError(provider: RuntimeProvider, status: number, bodyText: string, retryAfter: string | string[] | undefined): UpstreamError {
  const parsed = parseUpstreamErrorBody(bodyText);
  const ra = Array.isArray(retryAfter) ? retryAfter[0] : retryAfter;
  const retryAfterMs = ra && /^\d+(\.\d+)?$/.test(ra) ? Number(ra) * 1000 : undefined;
  const message =
    status < 400
      ? status >= 300
        ? 'redirects are not followed; check the provider base_url'
        : 'unexpected status'
      : scrubUpstreamText(provider, parsed.message ?? `upstream returned HTTP ${status}`);
  return new UpstreamError('http', `${provider.id} returned HTTP ${status}: ${message}`, {
    status,
    retryable: status === 429 || status === 408 || status >= 500,
    retryAfterMs,
    upstreamType: parsed.type,
  });
}

/** Maps undici / connector errors to an UpstreamError. */
export function transportError(provider: RuntimeProvider, err: unknown, signal?: { readonly aborted: boolean }): UpstreamError {
  if (err instanceof UpstreamError) return err;
  if (signal?.aborted) return new UpstreamError('aborted', `request to ${provider.id} was cancelled`, { retryable: false });
  if (err instanceof UrlPolicyError) {
    return new UpstreamError('url_blocked', `${provider.id}: ${err.message}`, { retryable: false, blockReason: err.reason });
  }
  const e = err as { code?: string; message?: string; reason?: UrlBlockReason; cause?: { code?: string; message?: string } };
  const code = e?.code ?? e?.cause?.code;
  if (code === 'UND_ERR_HEADERS_TIMEOUT') {
    return new UpstreamError('timeout', `${provider.id} did not send a first byte within the first-byte timeout`, { retryable: true, phase: 'first_byte' });
  }
  if (code === 'UND_ERR_BODY_TIMEOUT') {
    return new UpstreamError('timeout', `${provider.id} went idle mid-response beyond the idle timeout`, { retryable: true, phase: 'idle' });
  }
  if (code === 'UND_ERR_CONNECT_TIMEOUT') {
    return new UpstreamError('timeout', `connecting to ${provider.id} timed out`, { retryable: true, phase: 'connect' });
  }
  if (code === 'HECATE_URL_BLOCKED') {
    return new UpstreamError('url_blocked', `${provider.id}: ${scrubUpstreamText(provider, e.message ?? 'address refused')}`, {
      retryable: false,
      blockReason: e.reason ?? 'url_blocked',
    });
  }
  const detail = scrubUpstreamText(provider, code ? `${code}` : (e?.message ?? String(err)));
  return new UpstreamError('network', `${provider.id} is unreachable (${detail})`, { retryable: true });
}
