import { EventEmitter } from 'node:events';

/**
 * A cheap cancellation signal for the /v1 hot path: undici accepts an EventEmitter with `aborted` as a request
 * signal, and one costs far less to create than an AbortController (measured ~4 % of gateway CPU).
 */
export class ClientAbort extends EventEmitter {
  aborted = false;

  abort(): void {
    if (this.aborted) return;
    this.aborted = true;
    this.emit('abort');
  }
}

/** What the router accepts: a standard AbortSignal (module callers) or a ClientAbort (the ingress). */
export type CancelSignal = AbortSignal | ClientAbort;
