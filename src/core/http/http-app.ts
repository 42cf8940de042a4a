import { INestApplication } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, NestFastifyApplication } from '@nestjs/platform-fastify';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { AppConfig } from '@core/config/app-config';
import { PinoNestLogger, rootLogger } from '@core/logging/logger';
import { MetricsService } from '@core/metrics/metrics.service';
import { AllExceptionsFilter } from './all-exceptions.filter';
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
  });
  const app = await NestFactory.create<NestFastifyApplication>(rootModule as never, adapter, {
    logger: new PinoNestLogger(rootLogger()),
    bufferLogs: false,
    abortOnError: false,
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
  fastify.addHook('onResponse', (request: FastifyRequest, reply: FastifyReply, done: () => void) => {
    const route = request.routeOptions?.url ?? 'unmatched';
    metrics.httpDuration.observe({ method: request.method, route, status: String(reply.statusCode) }, reply.elapsedTime / 1000);
    done();
  });
  // Errors raised by Fastify itself (body too large, malformed JSON, bad content type) reach the same filter:
  // Nest installs its own Fastify error handler at init, which hands them to the exception filters.
  app.useGlobalFilters(new AllExceptionsFilter());
  app.useGlobalPipes(createValidationPipe());
  return app;
}

export async function listen(app: INestApplication, config: AppConfig): Promise<string> {
  await app.listen(config.server.port, config.server.host);
  return app.getUrl();
}
