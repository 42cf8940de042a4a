import type { IncomingMessage } from 'node:http';
import { checkOutboundUrl } from '@core/net/outbound-url-policy';
import { pinnedRequest } from '@core/net/pinned-request';
import type { ToolContext, ToolResult } from './tool-types';
import { storableText } from '@core/database/storable';

const MAX_REDIRECTS = 5;

/**
 * The http_request tool: every hop passes the outbound policy (docs/security.md) — scheme, allowlist, and every address the
 * host resolves to — and the connection goes to the address that was checked (no second DNS answer). Redirects are
 * followed by hand and re-checked; the time and the response size are bounded.
 */
export async function httpRequest(req: { url: string; method: string; body: string; headers: Record<string, string> }, ctx: ToolContext): Promise<ToolResult> {
  const { timeoutMs, maxResponseBytes } = ctx.config.agent.http;
  let url = req.url;
  let method = req.method.toUpperCase();
  let body = req.body;
  for (let hop = 0; hop <= MAX_REDIRECTS; hop++) {
    const verdict = await checkOutboundUrl(url, { ...ctx.config.tasks.outbound, selfPort: ctx.config.server.port });
    if (!verdict.ok) return { text: `refused by the outbound policy: ${verdict.message}`, isError: true, summary: { blocked: true, url } };
    let res: { status: number; headers: IncomingMessage['headers']; body: Buffer; truncated: boolean };
    try {
      res = await pinnedRequest(verdict.url, verdict.address, {
        method,
        body,
        headers: { 'user-agent': 'hecate-agent', ...req.headers },
        timeoutMs,
        maxBytes: maxResponseBytes,
        signal: ctx.signal,
      });
    } catch (err) {
      return { text: `request failed: ${(err as Error).message}`, isError: true };
    }
    if (res.status >= 300 && res.status < 400 && res.headers.location) {
      url = new URL(res.headers.location, verdict.url).toString();
      if (res.status === 303 || ((res.status === 301 || res.status === 302) && method === 'POST')) {
        method = 'GET';
        body = '';
      }
      continue;
    }
    const text = storableText(res.body.toString('utf8'));
    return {
      text: `HTTP ${res.status}\n${text}${res.truncated ? `\n[truncated at ${maxResponseBytes} bytes]` : ''}`,
      isError: res.status >= 400,
      summary: { status: res.status, bytes: res.body.length, truncated: res.truncated, url },
    };
  }
  return { text: `more than ${MAX_REDIRECTS} redirects`, isError: true };
}
