import type { ServerResponse } from 'node:http';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { MetricsService } from '@core/metrics/metrics.service';

/** Responses that are SSE streams: recorded when the stream opened, not again when (or if) it finishes. */
const streams = new WeakSet<ServerResponse>();

/** The route pattern (`/hecate/v1/tasks/:task_id`), never the URL: `unmatched` when no route matched (404s, probes). */
const routeOf = (request: FastifyRequest): string => request.routeOptions?.url ?? 'unmatched';

/** A finished response in hecate_http_request_duration_seconds (Fastify's onResponse). */
export function recordResponse(metrics: MetricsService, request: FastifyRequest, reply: FastifyReply): void {
  if (streams.has(reply.raw)) return;
  metrics.httpRequest(request.method, routeOf(request), reply.statusCode, reply.elapsedTime / 1000);
}

/**
 * An SSE response is one request whose duration is the time until its stream opened (200 and the head): the stream's
 * own life is in the SSE metrics, and a stream the client closes never "finishes" for Fastify.
 */
export function recordStreamOpened(metrics: MetricsService, reply: FastifyReply): void {
  streams.add(reply.raw);
  metrics.httpRequest(reply.request.method, routeOf(reply.request), 200, reply.elapsedTime / 1000);
}
