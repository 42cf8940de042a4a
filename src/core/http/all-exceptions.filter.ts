import { ArgumentsHost, Catch, ExceptionFilter } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { rootLogger, scrubSecrets } from '@core/logging/logger';
import { dialectOf, renderError, toDomainError } from './error-rendering';
import { requestIds } from './request-id';

/** The one place that turns errors into HTTP (docs/style.md rule 10). */
@Catch()
export class AllExceptionsFilter implements ExceptionFilter {
  catch(exception: unknown, host: ArgumentsHost): void {
    const http = host.switchToHttp();
    const request = http.getRequest<FastifyRequest>();
    const reply = http.getResponse<FastifyReply>();
    sendError(exception, request, reply);
  }
}

export function sendError(exception: unknown, request: FastifyRequest, reply: FastifyReply): void {
  const { domain, internal } = toDomainError(exception);
  const { requestId, traceId } = requestIds(request);
  if (internal) {
    const err = exception instanceof Error ? exception : new Error(String(exception));
    rootLogger().error(
      { request_id: requestId, trace_id: traceId, err: { message: scrubSecrets(err.message), stack: scrubSecrets(err.stack ?? '') }, url: request.url },
      'unhandled error',
    );
  }
  if (reply.sent || reply.raw.headersSent) {
    // A stream already started: the protocol-level error (if any) was written by the streamer.
    if (!reply.raw.writableEnded) reply.raw.end();
    return;
  }
  for (const [k, v] of Object.entries(domain.headers)) void reply.header(k, v);
  void reply
    .status(domain.status)
    .header('content-type', 'application/json; charset=utf-8')
    .send(renderError(dialectOf(request.routeOptions?.url ?? request.url), domain, requestId, traceId));
}
