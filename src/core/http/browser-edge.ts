import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ErrorType } from '@contracts/errors';
import { sendError } from './all-exceptions.filter';
import { DomainError } from './domain-error';

/**
 * The browser wall: a web page the operator visits must not drive the server. Three checks run in an
 * `onRequest` hook, before authentication and before the body is read:
 *
 * - `Host` (only without GATEWAY_AUTH_TOKEN, where every loopback caller is the local operator): a loopback name or
 *   address (`localhost`, 127.0.0.0/8, `[::1]`, with or without a port) or a name in GATEWAY_ALLOWED_HOSTS. A DNS
 *   rebinding page reaches the server under its own name, so it is refused. `/healthz` and `/readyz` are exempt
 *   (read-only liveness; probes send whatever address they dialled).
 * - `Origin` (every mode): absent (not a browser, or a same-origin GET), the server's own origin, or one in
 *   GATEWAY_ALLOWED_ORIGINS. Without a token "own" is any loopback name on the port the request came in on; with a
 *   token it is the origin whose host is the request's `Host` (as a proxy forwards it). The API sends no CORS headers,
 *   so no page on another origin can use it legitimately; refusing them keeps cross-site "simple" requests (forms,
 *   beacons, no-cors fetches) from changing state even if a credential became ambient. A browser request without
 *   Origin (an <img> or link GET) marked `Sec-Fetch-Site: cross-site` or `same-site` is refused the same way.
 * - Content type: a POST, PUT, PATCH or DELETE that sends a `Content-Type` other than `application/json` (or a body
 *   without one) answers 415 — a cross-site form can only send urlencoded, multipart or text/plain.
 *
 * CORS is opt-in: only an origin listed in GATEWAY_CORS_ORIGINS gets its preflight answered (204, the requested
 * method and headers allowed, no credentials mode — the API's credentials are headers, never cookies) and
 * `Access-Control-Allow-Origin` on its responses, so a page there can read what it called. Any other page still cannot
 * read a response (no header) and its requests are refused above.
 */
export interface EdgePolicy {
  /** No GATEWAY_AUTH_TOKEN: loopback callers are the local operator, so `Host` is checked too. */
  localOperator: boolean;
  /** Extra host names (or host:port) accepted in `Host` without a token. Lower case. */
  allowedHosts: readonly string[];
  /** Extra origins (`scheme://host[:port]`) accepted in `Origin`. Lower case, no trailing slash. */
  allowedOrigins: readonly string[];
  /** Origins whose pages may call the API from a browser (CORS); accepted in `Origin` too. Same form. */
  corsOrigins?: readonly string[];
}

/** What a page on a CORS origin may read besides the safelisted headers: correlation, rate limits, routing facts. */
const EXPOSED_HEADERS = [
  'x-request-id',
  'x-trace-id',
  'x-span-id',
  'x-ratelimit-limit',
  'x-ratelimit-remaining',
  'x-ratelimit-reset',
  'retry-after',
  'x-runtime-provider',
  'x-runtime-provider-kind',
  'x-runtime-route-reason',
  'x-runtime-requested-model',
  'x-runtime-model',
  'x-runtime-cost-usd',
  'x-runtime-attempts',
  'x-runtime-retries',
  'x-runtime-fallback-from',
  'x-runtime-token-count',
  'x-runtime-dropped-tools',
].join(', ');
const CORS_METHODS = 'GET, POST, PUT, PATCH, DELETE';
/** A preflight's answer is cached this long (seconds) by the browser. */
const PREFLIGHT_MAX_AGE = '600';

const LOOPBACK_V4 = /^127\.(25[0-5]|2[0-4]\d|1?\d?\d)(\.(25[0-5]|2[0-4]\d|1?\d?\d)){2}$/;
/** A loopback host name as a URL parser gives it: exactly 127.0.0.0/8, `localhost` or `[::1]` (not `127.0.0.1.evil.example`). */
export const isLoopbackName = (hostname: string): boolean => hostname === 'localhost' || hostname === '[::1]' || LOOPBACK_V4.test(hostname);

/** Paths answered whatever the Host: liveness and readiness (no data, no state). */
const HOST_EXEMPT = new Set(['/healthz', '/readyz']);
const STATE_CHANGING = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

interface HostParts {
  hostname: string;
  port: string;
}

/** `Host`/`Origin` host as a URL parser reads it (lower case; default ports empty), or undefined when it is not one. */
function parseHost(hostHeader: string): HostParts | undefined {
  try {
    const u = new URL(`http://${hostHeader}`);
    if (u.username || u.password || u.pathname !== '/' || u.search || u.hash) return undefined;
    return { hostname: u.hostname.toLowerCase(), port: u.port };
  } catch {
    return undefined;
  }
}

const single = (v: string | string[] | undefined): string | undefined => (Array.isArray(v) ? v[0] : v);

/** Why the request's `Host` is refused (no-token mode only), or undefined. */
export function hostProblem(host: string | undefined, policy: EdgePolicy): string | undefined {
  const parts = host ? parseHost(host) : undefined;
  if (parts && (isLoopbackName(parts.hostname) || policy.allowedHosts.includes(parts.hostname) || policy.allowedHosts.includes(host!.toLowerCase()))) {
    return undefined;
  }
  return `Host ${JSON.stringify(host ?? '')} is not a loopback address or a GATEWAY_ALLOWED_HOSTS name`;
}

/** Why the request's `Origin` is refused, or undefined. `host` is the Host the request was sent to. */
export function originProblem(origin: string | undefined, host: string | undefined, policy: EdgePolicy): string | undefined {
  if (origin === undefined) return undefined;
  const refused = `Origin ${JSON.stringify(origin)} is not this server's origin or a GATEWAY_ALLOWED_ORIGINS entry`;
  let url: URL;
  try {
    url = new URL(origin);
  } catch {
    return refused; // `null` (sandboxed frames, file: pages) and anything unparsable
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return refused;
  if (policy.allowedOrigins.includes(url.origin.toLowerCase()) || policy.corsOrigins?.includes(url.origin.toLowerCase())) return undefined;
  const target = host ? parseHost(host) : undefined;
  if (!target) return refused;
  const from = { hostname: url.hostname.toLowerCase(), port: url.port };
  if (from.hostname === target.hostname && from.port === target.port) return undefined;
  if (policy.localOperator && isLoopbackName(from.hostname) && isLoopbackName(target.hostname) && from.port === target.port) return undefined;
  return refused;
}

/**
 * A browser request without `Origin` (an <img>, <script> or link GET from another page) still says where it comes from
 * in `Sec-Fetch-Site`: one from another site is refused like a foreign Origin. Clients that are not browsers send none.
 */
export function fetchSiteProblem(site: string | undefined): string | undefined {
  if (site === undefined) return undefined;
  const value = site.trim().toLowerCase();
  return value === 'cross-site' || value === 'same-site' ? `a ${value} browser request (Sec-Fetch-Site) is not accepted` : undefined;
}

/** `application/json` (any parameters, e.g. charset), the one body type the API parses. */
export const isJsonContentType = (contentType: string): boolean => contentType.split(';')[0].trim().toLowerCase() === 'application/json';

/** A state-changing request whose body is not declared JSON (a form, text/plain, multipart, or an undeclared body). */
export function mediaTypeProblem(method: string, headers: FastifyRequest['headers']): string | undefined {
  if (!STATE_CHANGING.has(method)) return undefined;
  const contentType = single(headers['content-type']);
  if (contentType !== undefined) {
    return isJsonContentType(contentType) ? undefined : `Content-Type ${JSON.stringify(contentType)} is not accepted: send application/json`;
  }
  const length = single(headers['content-length']);
  const hasBody = headers['transfer-encoding'] !== undefined || (length !== undefined && length.trim() !== '0');
  return hasBody ? 'a request body without Content-Type is not accepted: send application/json' : undefined;
}

const hostError = (message: string): DomainError =>
  new DomainError(ErrorType.HostNotAllowed, 403, message, {
    userMessage: 'This server only answers requests addressed to it by a local name.',
    operatorAction: 'Use http://127.0.0.1:<port> or http://localhost:<port>, list the name in GATEWAY_ALLOWED_HOSTS, or set GATEWAY_AUTH_TOKEN.',
  });

const originError = (message: string): DomainError =>
  new DomainError(ErrorType.OriginNotAllowed, 403, message, {
    userMessage: 'Requests from another web site are not accepted.',
    operatorAction: 'Call the API from a client that is not a web page on another origin, or list the origin in GATEWAY_ALLOWED_ORIGINS.',
  });

const mediaTypeError = (message: string): DomainError =>
  new DomainError(ErrorType.UnsupportedMediaType, 415, message, {
    userMessage: 'The request body must be JSON.',
    operatorAction: 'Send the body as JSON with Content-Type: application/json.',
  });

/** Registers the browser wall's `onRequest` hook (see the comment at the top). */
export function installBrowserEdge(fastify: FastifyInstance, policy: EdgePolicy): void {
  fastify.addHook('onRequest', async (request: FastifyRequest, reply: FastifyReply) => {
    const host = single(request.headers.host);
    const path = request.url.split('?')[0];
    let problem: DomainError | undefined;
    const badHost = policy.localOperator && !HOST_EXEMPT.has(path) ? hostProblem(host, policy) : undefined;
    if (badHost) problem = hostError(badHost);
    else {
      // With a token the server may sit behind a proxy: the Host it forwards (trustProxy) names the public origin.
      const origin = single(request.headers.origin);
      let badOrigin = originProblem(origin, host, policy);
      if (badOrigin && !policy.localOperator && request.host !== host && !originProblem(origin, request.host, policy)) badOrigin = undefined;
      if (!badOrigin && origin === undefined) badOrigin = fetchSiteProblem(single(request.headers['sec-fetch-site']));
      if (badOrigin) problem = originError(badOrigin);
      else {
        const badType = mediaTypeProblem(request.method, request.headers);
        if (badType) problem = mediaTypeError(badType);
      }
    }
    if (!problem) return corsAnswer(request, reply, policy);
    void reply.header('connection', 'close');
    sendError(problem, request, reply);
    return reply;
  });
}

/**
 * For a request from a GATEWAY_CORS_ORIGINS origin (already accepted above): answers its preflight here, before
 * authentication (a preflight carries no credentials), or marks the response readable by that origin.
 */
function corsAnswer(request: FastifyRequest, reply: FastifyReply, policy: EdgePolicy): FastifyReply | undefined {
  const origin = single(request.headers.origin);
  if (!origin || !policy.corsOrigins?.length) return undefined;
  let normal: string;
  try {
    normal = new URL(origin).origin.toLowerCase();
  } catch {
    return undefined;
  }
  if (!policy.corsOrigins.includes(normal)) return undefined;
  void reply.header('access-control-allow-origin', origin).header('vary', 'Origin');
  const requestedMethod = single(request.headers['access-control-request-method']);
  if (request.method !== 'OPTIONS' || requestedMethod === undefined) {
    void reply.header('access-control-expose-headers', EXPOSED_HEADERS);
    return undefined;
  }
  const requestedHeaders = single(request.headers['access-control-request-headers']);
  void reply
    .header('access-control-allow-methods', CORS_METHODS)
    .header('access-control-max-age', PREFLIGHT_MAX_AGE)
    .header('vary', 'Origin, Access-Control-Request-Method, Access-Control-Request-Headers');
  if (requestedHeaders) void reply.header('access-control-allow-headers', requestedHeaders);
  void reply.code(204).send();
  return reply;
}
