import { INestApplication } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, NestFastifyApplication } from '@nestjs/platform-fastify';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { AppConfig } from '@core/config/app-config';
import { PinoNestLogger, rootLogger } from '@core/logging/logger';
import { MetricsService } from '@core/metrics/metrics.service';
import { AllExceptionsFilter, sendError } from './all-exceptions.filter';
import { installBrowserEdge } from './browser-edge';
import { recordResponse } from './http-metrics';
import { InvalidRequestError, ServiceUnavailableError } from './domain-error';
import { jsonDepthExceeds, MAX_JSON_DEPTH, mayHoldNul, nulInUrl, nulPath } from './json-limits';
import { currentTraceId, incomingRequestId } from './request-id';
import { createValidationPipe } from './validation.pipe';

/** Creates the Fastify-backed Nest app with the platform's hooks, filter, pipe and limits. */
export async function createHttpApp(rootModule: unknown, config: AppConfig): Promise<NestFastifyApplication> {
  const adapter = new FastifyAdapter({
    bodyLimit: config.server.bodyLimitBytes,
    trustProxy: true,
    keepAliveTimeout: 65_000,
    genReqId: (req: { headers: Record<string, string | string[] | undefined> }) => incomingRequestId(req.headers['x-request-id']),
    routerOptions: { ignoreTrailingSlash: true },
    // Fastify's own answer while closing is a bare 503 without the error envelope; ours is below.
    return503OnClosing: false,
  });
  const app = await NestFactory.create<NestFastifyApplication>(rootModule as never, adapter, {
    logger: new PinoNestLogger(rootLogger()),
    bufferLogs: false,
    abortOnError: false,
    // No urlencoded parser (Nest's default): JSON is the only body type; see the parsers below.
    bodyParser: false,
  });
  const fastify = app.getHttpAdapter().getInstance();
  const metrics = app.get(MetricsService);

  // The request's context lives on the request (`request.hecate`); controllers hand its origin on explicitly
  // (@Origin()), so none of our code puts an AsyncLocalStorage — and its promise hooks — on the request path.
  fastify.addHook('onRequest', (request: FastifyRequest, reply: FastifyReply, done: () => void) => {
    const store = { requestId: String(request.id), traceId: currentTraceId(request.headers.traceparent) };
    request.hecate = store;
    void reply.header('x-request-id', store.requestId).header('x-trace-id', store.traceId);
    done();
  });
  // Closing (SIGTERM, after the shutdown hooks): a request that still reaches this process gets the API contract's envelope —
  // 503 `service_unavailable`, Retry-After, Connection: close — so a client retries it on another instance.
  let closing = false;
  fastify.addHook('preClose', (done: () => void) => {
    closing = true;
    done();
  });
  fastify.addHook('onRequest', async (request: FastifyRequest, reply: FastifyReply) => {
    if (!closing) return;
    void reply.header('connection', 'close');
    sendError(
      new ServiceUnavailableError('this server is shutting down; retry the request (another instance serves it)', {
        userMessage: 'The server restarted while the request arrived; nothing was done.',
        operatorAction: 'Retry the request; during a rolling restart another instance answers it.',
      }),
      request,
      reply,
    );
    return reply;
  });
  // A NUL in the path or a query value can only fail later (Postgres refuses it in text): 400 naming where it is.
  fastify.addHook('onRequest', async (request: FastifyRequest, reply: FastifyReply) => {
    const where = nulInUrl(request.url);
    if (!where) return;
    const what = where === 'path' ? 'the path' : where === 'query' ? 'the query string' : `query parameter ${where}`;
    sendError(new InvalidRequestError(`${what} contains a NUL character (%00)`, { details: { param: where } }), request, reply);
    return reply;
  });
  // Host, Origin and content type, before authentication and before the body is read (browser-edge.ts).
  installBrowserEdge(fastify, {
    localOperator: !config.auth.token,
    allowedHosts: config.auth.allowedHosts,
    allowedOrigins: config.auth.allowedOrigins,
    corsOrigins: config.auth.corsOrigins,
  });
  answerOversizedBodies(fastify);
  fastify.addHook('onResponse', (request: FastifyRequest, reply: FastifyReply, done: () => void) => {
    recordResponse(metrics, request, reply);
    done();
  });
  // Errors raised by Fastify itself (body too large, malformed JSON, bad content type) reach the same filter:
  // Nest installs its own Fastify error handler at init, which hands them to the exception filters.
  // The only body parser: Fastify's own text/plain parser goes, so a cross-site form or text/plain POST is never parsed.
  fastify.removeContentTypeParser('text/plain');
  app.useBodyParser('application/json', { bodyLimit: config.server.bodyLimitBytes }, guardedJsonParser(fastify));
  app.useGlobalFilters(new AllExceptionsFilter());
  app.useGlobalPipes(createValidationPipe());
  return app;
}

type ParserDone = (err: Error | null, body?: unknown) => void;

/** How much of an oversized body is read and dropped after its 413, and for how long, before the socket is cut. */
const OVERSIZE_DRAIN_BYTES = 256 * 1024 * 1024;
const OVERSIZE_DRAIN_MS = 30_000;

/**
 * A 413 goes out while the client is still sending the body: keep reading (and dropping) it so the client gets the
 * answer instead of a reset connection (Fastify closes the connection after a body error).
 */
function answerOversizedBodies(fastify: FastifyInstance): void {
  fastify.addHook('onSend', (request: FastifyRequest, reply: FastifyReply, payload: unknown, done: (err: null, payload: unknown) => void) => {
    if (reply.statusCode === 413 && !request.raw.complete) drainOversizedBody(request, reply);
    done(null, payload);
  });
}

/**
 * Reads the rest of a body already answered 413 and drops it, keeping the connection open until the client has sent
 * it all (it reads the 413, and may reuse the connection); a client that sends more than OVERSIZE_DRAIN_BYTES or for
 * longer than OVERSIZE_DRAIN_MS loses the connection instead.
 */
function drainOversizedBody(request: FastifyRequest, reply: FastifyReply): void {
  void reply.removeHeader('connection');
  const { raw } = request;
  let dropped = 0;
  const cut = () => raw.socket?.destroy();
  const timer = setTimeout(cut, OVERSIZE_DRAIN_MS).unref();
  raw.on('data', (chunk: Buffer) => {
    dropped += chunk.length;
    if (dropped > OVERSIZE_DRAIN_BYTES) cut();
  });
  raw.once('close', () => clearTimeout(timer));
  raw.resume();
}

/**
 * Fastify's JSON parser (prototype-poisoning checks included) behind the ingress limits of json-limits.ts: nesting
 * deeper than MAX_JSON_DEPTH and NUL characters in strings or keys answer 400 before any handler sees the body. An
 * empty body is no body.
 */
function guardedJsonParser(fastify: FastifyInstance) {
  const { onProtoPoisoning, onConstructorPoisoning } = fastify.initialConfig as {
    onProtoPoisoning?: 'error' | 'remove' | 'ignore';
    onConstructorPoisoning?: 'error' | 'remove' | 'ignore';
  };
  const parse = fastify.getDefaultJsonParser(onProtoPoisoning ?? 'error', onConstructorPoisoning ?? 'error');
  return (request: FastifyRequest, body: Buffer, done: ParserDone): void => {
    const text = body.toString('utf8');
    // `Content-Type: application/json` with nothing after it (curl -X DELETE -H …, many clients' …/start and
    // …/cancel) is a request without a body, not a malformed one; a route that needs a body says what is missing.
    if (text.trim() === '') return done(null, undefined);
    if (jsonDepthExceeds(text, MAX_JSON_DEPTH)) {
      return done(new InvalidRequestError(`the JSON body nests deeper than ${MAX_JSON_DEPTH} levels`, { details: { param: 'body' } }));
    }
    // The default parser answers through the callback; its declared promise return is never one here.
    void parse(request, text, (err: Error | null, value?: unknown) => {
      if (err) return done(err);
      const at = mayHoldNul(text) ? nulPath(value) : undefined;
      if (at) return done(new InvalidRequestError(`${at} contains a NUL character (\\u0000)`, { details: { param: at } }));
      done(null, value);
    });
  };
}

export async function listen(app: INestApplication, config: AppConfig): Promise<string> {
  await app.listen(config.server.port, config.server.host);
  return app.getUrl();
}
