import type { Dispatcher } from 'undici';
import { httpError, transportError, UpstreamError } from './upstream-error';
import type { RuntimeProvider } from './runtime-provider';

const MAX_ERROR_BODY = 64 * 1024;

export interface UpstreamCallOptions {
  /** AbortSignal or an EventEmitter with `aborted` (both are undici request signals). */
  signal?: AbortSignal | (NodeJS.EventEmitter & { aborted: boolean });
  /** Extra request headers (e.g. `anthropic-beta` forwarded from the client). */
  headers?: Record<string, string>;
  firstByteMs?: number;
  idleMs?: number;
  /** Another request path than the provider's chat path (the Responses API's `…/responses`). */
  path?: string;
}

export interface UpstreamResponse {
  statusCode: number;
  headers: Dispatcher.ResponseData['headers'];
  body: Dispatcher.ResponseData['body'];
}

const isSuccess = (status: number): boolean => status >= 200 && status < 300;

async function readLimited(body: Dispatcher.ResponseData['body'], limit: number): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of body) {
      const buf = chunk as Buffer;
      size += buf.length;
      if (size > limit) {
        chunks.push(buf.subarray(0, Math.max(0, limit - (size - buf.length))));
        body.destroy();
        break;
      }
      chunks.push(buf);
    }
  } catch {
    // a truncated error body is still useful
  }
  return Buffer.concat(chunks).toString('utf8');
}

/**
 * LlmClient (docs/design.md §3): the one way bytes reach a provider. Paths and credentials come from the provider's
 * protocol (OpenAI: Bearer, `/chat/completions` or `/responses`; Anthropic: x-api-key + anthropic-version, `/messages`).
 * Non-2xx answers (3xx included) become an `UpstreamError` (body read, scrubbed); transport failures too.
 */
export const LlmClient = {
  /** POSTs a completion body; resolves with the 2xx response whose body the caller consumes. */
  async complete(provider: RuntimeProvider, body: string, options: UpstreamCallOptions = {}): Promise<UpstreamResponse> {
    const headers = provider.authHeaders();
    if (options.headers) Object.assign(headers, options.headers);
    let res: Dispatcher.ResponseData;
    try {
      res = await provider.endpoint().request({
        method: 'POST',
        path: options.path ?? provider.chatPath,
        headers,
        body,
        signal: options.signal,
        headersTimeout: options.firstByteMs,
        bodyTimeout: options.idleMs,
      });
    } catch (err) {
      throw transportError(provider, err, options.signal);
    }
    // Anything but a 2xx is an upstream error, redirects included (they are not followed: a provider that redirects
    // is misconfigured, and relaying its 3xx body as our 200 would hand the client garbage).
    if (!isSuccess(res.statusCode)) {
      const text = await readLimited(res.body, MAX_ERROR_BODY);
      throw httpError(provider, res.statusCode, text, res.headers['retry-after']);
    }
    return res;
  },

  /** GET returning parsed JSON (model discovery); never a billed call. */
  async getJson(provider: RuntimeProvider, path: string, timeoutMs: number, signal?: AbortSignal): Promise<unknown> {
    const headers = provider.authHeaders();
    delete headers['content-type'];
    const timeout = AbortSignal.timeout(timeoutMs);
    const combined = signal ? AbortSignal.any([signal, timeout]) : timeout;
    let res: Dispatcher.ResponseData;
    try {
      res = await provider.endpoint().request({ method: 'GET', path, headers, signal: combined, headersTimeout: timeoutMs, bodyTimeout: timeoutMs });
    } catch (err) {
      if (timeout.aborted && !signal?.aborted) {
        throw new UpstreamError('timeout', `${provider.id} did not answer within ${timeoutMs} ms`, { retryable: true, phase: 'first_byte' });
      }
      throw transportError(provider, err, signal);
    }
    const text = await readLimited(res.body, 8 * 1024 * 1024);
    if (!isSuccess(res.statusCode)) throw httpError(provider, res.statusCode, text, res.headers['retry-after']);
    try {
      return JSON.parse(text) as unknown;
    } catch {
      throw new UpstreamError('protocol', `${provider.id} answered ${path} with a body that is not JSON`, { retryable: false });
    }
  },
};
