import { ErrorType } from '@contracts/errors';
import type { Principal } from '@core/context/request-context';
import { DomainError } from '../domain-error';

/** Seconds a refused client waits before opening again (the `Retry-After` of the 429). */
export const STREAM_RETRY_AFTER_SECONDS = 5;

export interface StreamCaps {
  /** Open reader streams one credential may hold in this process; 0 = no cap. */
  perKey: number;
  /** Open reader streams in this process; 0 = no cap. */
  total: number;
}

/** The bucket a stream counts in: the API key, else the operator token or the local operator (one each). */
export const streamOwnerOf = (p: Principal | undefined): string => (p?.apiKeyId ? `key:${p.apiKeyId}` : `${p?.kind ?? 'anonymous'}:${p?.tenantId ?? ''}`);

export class StreamLimitError extends DomainError {
  constructor(message: string, scope: 'key' | 'process', limit: number) {
    super(ErrorType.StreamLimitExceeded, 429, message, {
      userMessage: 'Too many live streams are open; close one or retry shortly.',
      operatorAction:
        scope === 'key'
          ? 'Close streams this credential no longer reads, or raise GATEWAY_SSE_MAX_STREAMS_PER_KEY.'
          : 'Add api processes, or raise GATEWAY_SSE_MAX_STREAMS if the process has memory to spare.',
      headers: { 'retry-after': String(STREAM_RETRY_AFTER_SECONDS) },
      details: { limit, limit_scope: scope },
    });
  }
}

/**
 * Counts open reader streams per credential and per process (one key opening hundreds of
 * `/events/stream` readers exhausted the api's heap). `admit` either throws the 429 or returns the release to call
 * once, when the stream ends.
 */
export class SseAdmission {
  private readonly perOwner = new Map<string, number>();
  private open = 0;

  constructor(private readonly caps: StreamCaps) {}

  admit(owner: string): () => void {
    const mine = this.perOwner.get(owner) ?? 0;
    if (this.caps.perKey > 0 && mine >= this.caps.perKey) {
      throw new StreamLimitError(`this credential already holds ${mine} open streams on this server (limit ${this.caps.perKey})`, 'key', this.caps.perKey);
    }
    if (this.caps.total > 0 && this.open >= this.caps.total) {
      throw new StreamLimitError(`this server already holds ${this.open} open streams (limit ${this.caps.total})`, 'process', this.caps.total);
    }
    this.perOwner.set(owner, mine + 1);
    this.open += 1;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.open -= 1;
      const left = (this.perOwner.get(owner) ?? 1) - 1;
      if (left > 0) this.perOwner.set(owner, left);
      else this.perOwner.delete(owner);
    };
  }

  get openStreams(): number {
    return this.open;
  }
}
