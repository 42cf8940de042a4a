import { Injectable } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Principal } from '@core/context/request-context';
import { DomainError, InvalidRequestError } from '@core/http/domain-error';
import { toErrorEnvelope } from '@core/http/error-envelope';
import { SseService } from '@core/http/sse';
import { rootLogger } from '@core/logging/logger';
import { ChatExchangeRecorderService, type ExchangeResult, type GeneratedReply, type PreparedExchange } from '@modules/chat-sessions';
import {
  InferenceRouteInfo,
  InferenceContext,
  InferenceResult,
  InferenceService,
  InferenceStream,
  isObject,
  Json,
  InferenceDelta,
  normalizeAnthropicResponse,
  NormalizedMessage,
  PreparedRequest,
} from '@modules/inference';
import { prepareRequest } from './ingress-validation';
import { renderOpenaiCompletion } from './protocol/response-render';
import { OpenaiChunkEncoder } from './protocol/stream-encoders';
import { routeHeaders } from './response-headers';

const SESSION_HEADER = 'x-session-id';

/** What a stream of recorded exchange writes: the dialect's frames for each delta, its ending, its failure. */
export interface ExchangeEncoder {
  encode(d: InferenceDelta): string;
  end(): string;
  fail(message: string): string;
  /** The rendered whole, when the dialect keeps one (the Responses API stores it). */
  readonly response?: Json;
}

/** How a recorded exchange answers: chat completions, or the Responses API. */
export interface ExchangeDialect {
  endpoint: string;
  render(result: InferenceResult): Json;
  encoder(s: InferenceStream, prepared: PreparedRequest): ExchangeEncoder;
  /** After a successful reply is rendered (before the response ends). */
  finished?(rendered: Json | undefined): Promise<void>;
}

const CHAT_DIALECT: ExchangeDialect = {
  endpoint: '/v1/chat/completions',
  render: (result) =>
    result.protocol === 'openai' && result.raw ? result.raw : renderOpenaiCompletion(normalizeAnthropicResponse(result.raw ?? {}), result.model),
  encoder: (s, prepared) => {
    const enc = new OpenaiChunkEncoder(`chatcmpl-${s.request_id.replace(/^req_/, '')}`, s.model, prepared.clientWantsUsage);
    return {
      encode: (d) => enc.encode(d),
      end: () => enc.end(),
      fail: (message) => `data: ${JSON.stringify({ error: { message, type: 'upstream_error', code: 'upstream_error', param: null } })}\n\n`,
    };
  },
};

/** An exchange's result as the protocol-neutral message the renderers take. */
export const normalizedOf = (r: InferenceResult): NormalizedMessage => ({
  id: r.id,
  model: r.model,
  content_blocks: r.content_blocks,
  tool_calls: r.tool_calls,
  text: r.text,
  stop_reason: r.stop_reason,
  usage: { inputTokens: r.usage.input_tokens, outputTokens: r.usage.output_tokens, cachedInputTokens: r.usage.cached_input_tokens },
});

/** The session a `/v1/chat/completions` request names: the `session_id` body field, else the X-Session-Id header. */
export function chatSessionIdOf(request: FastifyRequest): string | undefined {
  const body = request.body;
  if (isObject(body) && typeof body.session_id === 'string' && body.session_id !== '') return body.session_id;
  const header = request.headers[SESSION_HEADER];
  return typeof header === 'string' && header !== '' ? header : undefined;
}

const replyOf = (r: InferenceResult): GeneratedReply => ({
  text: r.text,
  content_blocks: r.content_blocks as Array<Record<string, unknown>>,
  tool_calls: r.tool_calls,
});

function callOf(info: InferenceRouteInfo, requestedModel: string | undefined, r?: InferenceResult): ExchangeResult['call'] {
  return {
    requestId: info.request_id,
    provider: info.provider,
    providerKind: info.provider_kind,
    model: info.model,
    requestedModel: requestedModel ?? null,
    routeReason: info.route_reason,
    costMicrosUsd: r?.cost_micros_usd ?? 0,
    promptTokens: r?.usage.input_tokens ?? 0,
    completionTokens: r?.usage.output_tokens ?? 0,
  };
}

const sessionHeaders = (info: InferenceRouteInfo, sessionId: string, requestedModel: string | undefined, costMicros?: number): Record<string, string> => ({
  ...routeHeaders(info, requestedModel, costMicros),
  'x-session-id': sessionId,
});

/**
 * `POST /v1/chat/completions` (and `/v1/responses`) with a session (docs/api.md §1 RecordChatExchange): the session's system prompt is
 * applied, the call goes through the gateway router, and the exchange is recorded before the response
 * completes (a streamed one when it ends; a stream the client cut keeps its partial reply as `incomplete`).
 */
@Injectable()
export class SessionExchangeService {
  constructor(
    private readonly recorder: ChatExchangeRecorderService,
    private readonly inference: InferenceService,
    private readonly sse: SseService,
  ) {}

  async handle(principal: Principal, request: FastifyRequest, reply: FastifyReply, sessionId: string): Promise<void> {
    if (!isObject(request.body) || !Array.isArray(request.body.messages)) throw new InvalidRequestError('messages must be a non-empty array');
    const { session_id: _ignored, ...body } = request.body as Json & { session_id?: unknown };
    await this.exchange(principal, request, reply, sessionId, {
      messages: body.messages as unknown[],
      build: (messages) => prepareRequest('openai', { ...body, messages }, request.headers),
      dialect: CHAT_DIALECT,
    });
  }

  /**
   * One recorded exchange in a client's protocol: the session's system prompt applied to the client's messages, the
   * call through the router, the reply recorded before the response completes, rendered by the dialect.
   */
  async exchange(
    principal: Principal,
    request: FastifyRequest,
    reply: FastifyReply,
    sessionId: string,
    how: { messages: unknown[]; build: (messages: unknown[]) => PreparedRequest; dialect: ExchangeDialect },
  ): Promise<void> {
    const exchange = await this.recorder.prepare(principal.tenantId, sessionId, how.messages);
    const upstream = how.build(exchange.messages);
    const requestedModel = upstream.model;
    const abort = new AbortController();
    const onClose = () => {
      if (!reply.raw.writableFinished) abort.abort();
    };
    reply.raw.on('close', onClose);
    const ctx: InferenceContext = {
      tenantId: principal.tenantId,
      apiKeyId: principal.apiKeyId,
      origin: request.hecate,
      signal: abort.signal,
      endpoint: how.dialect.endpoint,
    };
    try {
      if (upstream.stream) await this.stream(exchange, upstream, requestedModel, ctx, reply, abort.signal, how.dialect);
      else await this.complete(exchange, upstream, requestedModel, ctx, reply, how.dialect);
    } finally {
      reply.raw.off('close', onClose);
    }
  }

  private async complete(
    exchange: PreparedExchange,
    prepared: PreparedRequest,
    requestedModel: string | undefined,
    ctx: InferenceContext,
    reply: FastifyReply,
    dialect: ExchangeDialect,
  ): Promise<void> {
    let result: InferenceResult;
    try {
      result = await this.inference.completePrepared(prepared, ctx);
    } catch (err) {
      await this.recordFailure(exchange, err, requestedModel, ctx);
      throw err;
    }
    await this.recorder.record(exchange, { status: 'complete', reply: replyOf(result), call: callOf(result, requestedModel, result) });
    const out = dialect.render(result);
    await dialect.finished?.(out);
    await reply
      .headers(sessionHeaders(result, exchange.sessionId, requestedModel, result.cost_micros_usd))
      .header('content-type', 'application/json')
      .send(JSON.stringify(out));
  }

  private async stream(
    exchange: PreparedExchange,
    prepared: PreparedRequest,
    requestedModel: string | undefined,
    ctx: InferenceContext,
    reply: FastifyReply,
    signal: AbortSignal,
    dialect: ExchangeDialect,
  ): Promise<void> {
    let s: InferenceStream;
    try {
      s = await this.inference.streamPrepared(prepared, ctx);
    } catch (err) {
      await this.recordFailure(exchange, err, requestedModel, ctx);
      throw err;
    }
    const res = this.sse.open(reply, {
      stream: 'gateway',
      heartbeatMs: 0,
      reconnectable: false,
      headers: sessionHeaders(s, exchange.sessionId, requestedModel),
    });
    const encoder = dialect.encoder(s, prepared);
    let failure: unknown;
    try {
      for await (const d of s.deltas) {
        const out = encoder.encode(d);
        if (out && !signal.aborted && !res.relay(out)) await res.drained();
      }
    } catch (err) {
      if (!signal.aborted) failure = err;
    }
    let result: InferenceResult | undefined;
    try {
      result = await s.result;
    } catch (err) {
      failure ??= err;
    }
    if (failure || !result) {
      res.end(encoder.fail('the upstream stream broke before it was complete'));
      await this.recordFailure(exchange, failure, requestedModel, ctx, s);
      return;
    }
    // Recorded before the stream ends, so the client's next request sees this exchange persisted.
    const status = signal.aborted ? 'incomplete' : 'complete';
    await this.recorder.record(exchange, { status, reply: replyOf(result), call: callOf(result, requestedModel, result) }).catch((err) => {
      rootLogger().error({ request_id: ctx.origin?.requestId, err: String(err), sessionId: exchange.sessionId }, 'chat exchange could not be recorded');
    });
    if (signal.aborted) return;
    const last = encoder.end();
    await dialect.finished?.(encoder.response);
    res.end(last);
  }

  /** An upstream failure is recorded as a failed reply (excluded from replay); request errors are not. */
  private async recordFailure(
    exchange: PreparedExchange,
    err: unknown,
    requestedModel: string | undefined,
    ctx: InferenceContext,
    info?: InferenceRouteInfo,
  ): Promise<void> {
    if (ctx.signal?.aborted) return;
    const status = err instanceof DomainError ? err.status : 502;
    if (status < 500 && status !== 429) return;
    const error =
      err instanceof DomainError
        ? toErrorEnvelope(err, 'without-details')
        : { type: 'upstream_error', message: err instanceof Error ? err.message : String(err), status };
    const call = info
      ? callOf(info, requestedModel)
      : {
          requestId: ctx.origin?.requestId ?? '',
          provider: '',
          providerKind: '',
          model: requestedModel ?? '',
          requestedModel: requestedModel ?? null,
          routeReason: null,
          costMicrosUsd: 0,
          promptTokens: 0,
          completionTokens: 0,
        };
    await this.recorder
      .record(exchange, { status: 'failed', reply: { text: '', content_blocks: [], tool_calls: [] }, call, error })
      .catch((e) =>
        rootLogger().warn({ request_id: ctx.origin?.requestId, err: String(e), sessionId: exchange.sessionId }, 'failed chat exchange could not be recorded'),
      );
  }
}
