import { backoffDelay, retryAfterMs, sleep, type BackoffPolicy } from './backoff';
import { HecateError } from './errors';
import { IDEMPOTENT_BODY_OPERATIONS } from './generated/operations';
import type { HttpMethod, InitArgs, LooseInit, Operation, PathsWith, SuccessBody } from './operations';
import { HecateStreams, type ReconnectPolicy } from './streams';

export interface RetryPolicy extends BackoffPolicy {
  /** Retries after the first attempt (0: none). */
  retries: number;
}

export interface HecateClientOptions {
  /** The server's origin, e.g. `http://127.0.0.1:8765` (no `/hecate/v1`: paths carry it). */
  baseUrl: string;
  /** An API key (`hk_…`) or the operator token, sent as `Authorization: Bearer`. */
  apiKey?: string;
  /** Headers sent with every request. */
  headers?: Record<string, string>;
  /** A fetch implementation (default: the global one). */
  fetch?: typeof fetch;
  retry?: Partial<RetryPolicy>;
  /** How streams reconnect (see `streams`). */
  reconnect?: Partial<ReconnectPolicy>;
}

/** A successful answer with its status and headers. */
export interface HecateResponse<T> {
  status: number;
  headers: Headers;
  data: T;
}

const DEFAULT_RETRY: RetryPolicy = { retries: 3, initialDelayMs: 200, maxDelayMs: 5_000 };

/** Methods whose repetition has no further effect (RFC 9110 §9.2.2). */
const IDEMPOTENT_METHODS = new Set<HttpMethod>(['get', 'put', 'delete']);

/** The server refused before acting (rate limit; an outage it reports as `service_unavailable`, nothing changed). */
const REFUSED_BEFORE_ACTING = new Set([429, 503]);

/**
 * A typed client of `/hecate/v1`: every path, parameter, body and answer comes from the server's OpenAPI document.
 *
 *   const hecate = new HecateClient({ baseUrl, apiKey });
 *   const { data: task } = await hecate.post('/hecate/v1/tasks', { body: { execution_kind: 'shell', shell_command: 'ls' } });
 *
 * Non-2xx answers throw `HecateError`. Requests are retried with back-off on network errors, 5xx and 429 when that
 * cannot act twice: GET/PUT/DELETE, and POSTs whose body takes `client_request_id` (the client sends one, the same
 * on every attempt). Other POSTs and PATCHes are retried only on 429 and 503, which the server answers before acting.
 */
export class HecateClient {
  readonly baseUrl: string;
  /** Resumable SSE streams as async iterators (run stream, events feed, agent-chat turns, active sessions). */
  readonly streams: HecateStreams;
  private readonly fetchImpl: typeof fetch;
  private readonly retryPolicy: RetryPolicy;
  private readonly defaultHeaders: Record<string, string>;

  constructor(options: HecateClientOptions) {
    this.baseUrl = options.baseUrl.replace(/\/+$/, '');
    this.fetchImpl = options.fetch ?? globalThis.fetch.bind(globalThis);
    this.retryPolicy = { ...DEFAULT_RETRY, ...options.retry };
    this.defaultHeaders = { ...(options.apiKey ? { authorization: `Bearer ${options.apiKey}` } : {}), ...options.headers };
    this.streams = new HecateStreams(this, options.reconnect);
  }

  get<P extends PathsWith<'get'>>(path: P, ...init: InitArgs<Operation<P, 'get'>>): Promise<SuccessBody<Operation<P, 'get'>>> {
    return this.data('get', path, init[0] as LooseInit | undefined);
  }

  post<P extends PathsWith<'post'>>(path: P, ...init: InitArgs<Operation<P, 'post'>>): Promise<SuccessBody<Operation<P, 'post'>>> {
    return this.data('post', path, init[0] as LooseInit | undefined);
  }

  put<P extends PathsWith<'put'>>(path: P, ...init: InitArgs<Operation<P, 'put'>>): Promise<SuccessBody<Operation<P, 'put'>>> {
    return this.data('put', path, init[0] as LooseInit | undefined);
  }

  patch<P extends PathsWith<'patch'>>(path: P, ...init: InitArgs<Operation<P, 'patch'>>): Promise<SuccessBody<Operation<P, 'patch'>>> {
    return this.data('patch', path, init[0] as LooseInit | undefined);
  }

  delete<P extends PathsWith<'delete'>>(path: P, ...init: InitArgs<Operation<P, 'delete'>>): Promise<SuccessBody<Operation<P, 'delete'>>> {
    return this.data('delete', path, init[0] as LooseInit | undefined);
  }

  /** Any operation, answered with its status and headers too (e.g. to tell a 200 from a 202). */
  async request<M extends HttpMethod, P extends PathsWith<M>>(
    method: M,
    path: P,
    ...init: InitArgs<Operation<P, M>>
  ): Promise<HecateResponse<SuccessBody<Operation<P, M>>>> {
    const res = await this.send(method, path, init[0] as LooseInit | undefined);
    const text = await res.text();
    let data: unknown;
    try {
      data = text === '' ? undefined : JSON.parse(text);
    } catch (err) {
      throw new HecateError({ status: res.status, type: 'invalid_response', message: `${method.toUpperCase()} ${path}: the answer is not JSON`, cause: err });
    }
    return { status: res.status, headers: res.headers, data: data as SuccessBody<Operation<P, M>> };
  }

  /** The URL of `path` with its path parameters and query filled in. */
  url(path: string, params: { path?: object; query?: object } = {}): string {
    const filled = path.replace(/\{([^}]+)\}/g, (_, name: string) => {
      const value = (params.path as Record<string, unknown> | undefined)?.[name];
      if (value === undefined || value === null) throw new TypeError(`${path}: path parameter ${name} is missing`);
      return encodeURIComponent(String(value));
    });
    const query = new URLSearchParams();
    for (const [k, v] of Object.entries(params.query ?? {})) if (v !== undefined && v !== null) query.set(k, String(v));
    const qs = query.toString();
    return `${this.baseUrl}${filled}${qs ? `?${qs}` : ''}`;
  }

  /** Headers of every request (credentials and the caller's defaults). */
  headers(extra: Record<string, string> = {}): Record<string, string> {
    return { ...this.defaultHeaders, ...extra };
  }

  /** The raw fetch, for the streams (which handle their own reconnects). */
  get fetch(): typeof fetch {
    return this.fetchImpl;
  }

  private async data(method: HttpMethod, path: string, init: LooseInit | undefined): Promise<never> {
    const { data } = await this.request(method as never, path as never, init as never);
    return data as never;
  }

  /** One call with its retries; a non-2xx answer becomes a HecateError. */
  private async send(method: HttpMethod, path: string, init: LooseInit = {}): Promise<Response> {
    const url = this.url(path, init);
    let body = init.body as Record<string, unknown> | undefined;
    const keyed = IDEMPOTENT_BODY_OPERATIONS.has(`${method.toUpperCase()} ${path}`);
    if (keyed && body && body.client_request_id === undefined) body = { ...body, client_request_id: init.idempotencyKey ?? globalThis.crypto.randomUUID() };
    const safe = IDEMPOTENT_METHODS.has(method) || keyed;
    const retries = init.retry === false ? 0 : this.retryPolicy.retries;
    const headers = this.headers({ accept: 'application/json', ...(body !== undefined ? { 'content-type': 'application/json' } : {}), ...init.headers });
    const payload = body === undefined ? undefined : JSON.stringify(body);
    for (let attempt = 0; ; attempt++) {
      let res: Response;
      try {
        res = await this.fetchImpl(url, { method: method.toUpperCase(), headers, body: payload, signal: init.signal });
      } catch (err) {
        if (init.signal?.aborted || !safe || attempt >= retries) throw HecateError.network(err, `${method.toUpperCase()} ${path}`);
        await sleep(backoffDelay(this.retryPolicy, attempt), init.signal);
        continue;
      }
      if (res.ok) return res;
      const retriable = res.status === 429 || (res.status >= 500 && (safe || REFUSED_BEFORE_ACTING.has(res.status)));
      if (!retriable || attempt >= retries) throw await HecateError.fromResponse(res);
      // Discarding the body of a response about to be retried: a cancel that fails has nothing left to release.
      await res.body?.cancel().catch(() => undefined);
      await sleep(backoffDelay(this.retryPolicy, attempt, retryAfterMs(res.headers.get('retry-after'))), init.signal);
    }
  }
}
