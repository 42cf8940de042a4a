import type { FastifyRequest } from 'fastify';
import { trace } from '@opentelemetry/api';
import { randomHex } from '@core/context/random-hex';
import { newRequestId, RequestContextStore } from '@core/context/request-context';

const VALID_INCOMING = /^[A-Za-z0-9._:-]{1,128}$/;

declare module 'fastify' {
  interface FastifyRequest {
    hecate?: RequestContextStore;
  }
}

export function incomingRequestId(header: string | string[] | undefined): string {
  const value = Array.isArray(header) ? header[0] : header;
  return value && VALID_INCOMING.test(value) ? value : newRequestId();
}

export function currentTraceId(traceparent: string | string[] | undefined): string {
  const spanContext = trace.getActiveSpan()?.spanContext();
  if (spanContext && spanContext.traceId !== '00000000000000000000000000000000') return spanContext.traceId;
  const tp = Array.isArray(traceparent) ? traceparent[0] : traceparent;
  const match = tp ? /^[0-9a-f]{2}-([0-9a-f]{32})-/.exec(tp) : null;
  return match ? match[1] : randomHex(16);
}

export function requestIds(request: FastifyRequest): { requestId: string; traceId: string | undefined; apiKeyId?: string } {
  const ids = { requestId: request.hecate?.requestId ?? String(request.id), traceId: request.hecate?.traceId };
  const key = request.hecate?.principal?.apiKeyId;
  return key ? { ...ids, apiKeyId: key } : ids;
}
