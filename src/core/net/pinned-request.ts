import { request as httpRequestRaw, type IncomingMessage } from 'node:http';
import { request as httpsRequestRaw } from 'node:https';

export interface PinnedRequest {
  method: string;
  body: string;
  headers: Record<string, string>;
  timeoutMs: number;
  /** The response body is read up to this many bytes (then the connection is dropped and `truncated` set). */
  maxBytes: number;
  signal?: AbortSignal;
}

export interface PinnedResponse {
  status: number;
  headers: IncomingMessage['headers'];
  body: Buffer;
  truncated: boolean;
}

/**
 * One HTTP(S) request to the address the outbound policy checked (`checkOutboundUrl`), whatever a resolver would answer
 * now: no redirect is followed, the whole exchange is bounded by `timeoutMs` and the body read by `maxBytes`.
 */
export function pinnedRequest(url: URL, address: string, r: PinnedRequest): Promise<PinnedResponse> {
  const { method, body, headers, timeoutMs, maxBytes, signal } = r;
  return new Promise((resolve, reject) => {
    const family = address.includes(':') ? 6 : 4;
    const make = url.protocol === 'https:' ? httpsRequestRaw : httpRequestRaw;
    const req = make(
      url,
      {
        method,
        headers,
        signal,
        timeout: timeoutMs,
        // Connect to the address the policy checked, whatever the resolver would say now.
        lookup: (_host, options, cb) => {
          if ((options as { all?: boolean }).all) (cb as (e: null, a: { address: string; family: number }[]) => void)(null, [{ address, family }]);
          else (cb as (e: null, a: string, f: number) => void)(null, address, family);
        },
      },
      (res) => {
        const chunks: Buffer[] = [];
        let size = 0;
        let truncated = false;
        res.on('data', (c: Buffer) => {
          if (truncated) return;
          const room = maxBytes - size;
          if (c.length > room) {
            chunks.push(c.subarray(0, room));
            size = maxBytes;
            truncated = true;
            res.destroy();
            resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks), truncated });
            return;
          }
          chunks.push(c);
          size += c.length;
        });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks), truncated }));
        res.on('error', reject);
      },
    );
    const timer = setTimeout(() => req.destroy(new Error(`timed out after ${timeoutMs} ms`)), timeoutMs);
    req.on('close', () => clearTimeout(timer));
    req.on('timeout', () => req.destroy(new Error(`timed out after ${timeoutMs} ms`)));
    req.on('error', reject);
    req.end(body || undefined);
  });
}
