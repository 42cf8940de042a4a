import { Injectable } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Principal } from '@core/context/request-context';
import { NotFoundError } from '@core/http/domain-error';
import { SseService, type SseStream } from '@core/http/sse';
import { rootLogger } from '@core/logging/logger';
import { transportError, UpstreamError } from '@modules/providers';
import {
  ClientAbort,
  CompletedCall,
  decodeUpstreamStream,
  InferenceEngineService,
  isObject,
  Json,
  mergeUsage,
  normalizeAnthropicResponse,
  normalizeOpenaiResponse,
  NormalizedUsage,
  openaiUsage,
  OpenStream,
  parseFrame,
  sendsResponses,
  SseFramer,
  startsWith,
  UpstreamStreamError,
} from '@modules/inference';
import { prepareResponsesRequest, type PreparedResponsesRequest, type ResponseItem } from './protocol/responses-request';
import { renderResponse, ResponseHead, ResponsesEventEncoder } from './protocol/responses-render';
import { FrameBatch } from './protocol/frame-batch';
import { routeHeaders } from './response-headers';
import { ResponsesRepository } from './responses.repository';
import { chatSessionIdOf, normalizedOf, SessionExchangeService } from './session-exchange.service';

const EV_ERROR = Buffer.from('event: error');
/** The lifecycle events of a Responses stream: they carry the whole response object. */
const LIFECYCLE = ['response.created', 'response.in_progress', 'response.completed', 'response.incomplete', 'response.failed'].map((t) =>
  Buffer.from(`event: ${t}\n`),
);
const TERMINAL = new Set(['response.completed', 'response.incomplete', 'response.failed']);

export class ResponseNotFoundError extends NotFoundError {
  constructor(id: string, param?: string) {
    super(`no response with id ${id}`, {
      userMessage: 'That response does not exist (it was never stored, was deleted, or belongs to another tenant).',
      operatorAction: 'Send the id of a response created with store: true, within its retention (GATEWAY_RETENTION_RESPONSES_MAX_AGE).',
      details: param ? { param } : {},
    });
  }
}

/** `X-Runtime-Dropped-Tools`: the hosted tools a translated request went without (a Responses upstream gets them). */
const droppedHeader = (req: PreparedResponsesRequest, provider: OpenStream['selected']['provider']): Record<string, string> =>
  req.droppedTools.length > 0 && !sendsResponses(req.prepared, provider) ? { 'x-runtime-dropped-tools': req.droppedTools.join(', ') } : {};

const parseJson = (data: string): Json | undefined => {
  try {
    const v = JSON.parse(data) as unknown;
    return isObject(v) ? v : undefined;
  } catch {
    return undefined;
  }
};

/**
 * `/v1/responses` (the OpenAI Responses API) on any provider: native passthrough to upstreams that speak it (the
 * `openai` preset; only the response's `store`/`previous_response_id` are set back to what the client asked),
 * translation through Chat Completions (and on to Anthropic) otherwise, streaming included. Conversation state is
 * Hecate's: stored responses (tenant-scoped, retention) replay their chain for `previous_response_id`.
 */
@Injectable()
export class ResponsesService {
  constructor(
    private readonly inference: InferenceEngineService,
    private readonly sse: SseService,
    private readonly store: ResponsesRepository,
    private readonly chatExchanges: SessionExchangeService,
  ) {}

  async create(principal: Principal, request: FastifyRequest, reply: FastifyReply): Promise<void> {
    const body = request.body;
    const prev = isObject(body) && typeof body.previous_response_id === 'string' && body.previous_response_id !== '' ? body.previous_response_id : undefined;
    let history: ResponseItem[] = [];
    if (prev) history = (await this.store.history(principal.tenantId, prev)) ?? [];
    const req = prepareResponsesRequest(body, history);
    if (prev && history.length === 0) throw new ResponseNotFoundError(prev, 'previous_response_id');
    const sessionId = chatSessionIdOf(request);
    if (sessionId) return this.recorded(principal, request, reply, sessionId, req);
    const abort = new ClientAbort();
    const onClose = () => {
      if (!reply.raw.writableFinished) abort.abort();
    };
    reply.raw.on('close', onClose);
    const id = this.inference.identity({ tenantId: principal.tenantId, apiKeyId: principal.apiKeyId, origin: request.hecate, endpoint: '/v1/responses' });
    const head: ResponseHead = {
      id: `resp_${id.requestId.replace(/^req_/, '')}`,
      createdAt: Math.floor(Date.now() / 1000),
      model: req.prepared.model ?? '',
      params: req.params,
      previousResponseId: req.previousResponseId,
      store: req.store,
    };
    try {
      if (!req.prepared.stream) {
        const call = await this.inference.dispatchComplete(req.prepared, id, abort);
        if (abort.aborted) return;
        const response = this.renderComplete(call, req, { ...head, model: call.info.model });
        await this.keep(principal, req, response);
        void reply
          .headers({ ...routeHeaders(call.info, req.prepared.model, call.costMicros), ...droppedHeader(req, call.selected.provider) })
          .header('content-type', 'application/json');
        await reply.send(JSON.stringify(response));
        return;
      }
      const open = await this.inference.dispatchStream(req.prepared, id, abort);
      await this.pipe(open, req, { ...head, model: open.info.model }, principal, reply, abort);
    } catch (err) {
      if (abort.aborted && (err instanceof UpstreamError || reply.raw.destroyed)) return;
      throw err;
    } finally {
      reply.raw.off('close', onClose);
    }
  }

  /**
   * With a chat session (`session_id` / X-Session-Id): the exchange is recorded into it like a chat completion's, always
   * translated (the session stores chat messages), and the response stored as usual.
   */
  private recorded(principal: Principal, request: FastifyRequest, reply: FastifyReply, sessionId: string, req: PreparedResponsesRequest): Promise<void> {
    const head = (model: string, requestId: string): ResponseHead => ({
      id: `resp_${requestId.replace(/^req_/, '')}`,
      createdAt: Math.floor(Date.now() / 1000),
      model,
      params: req.params,
      previousResponseId: req.previousResponseId,
      store: req.store,
    });
    return this.chatExchanges.exchange(principal, request, reply, sessionId, {
      messages: req.prepared.body.messages as unknown[],
      build: (messages) => ({ ...req.prepared, body: { ...req.prepared.body, messages }, responses: undefined }),
      dialect: {
        endpoint: '/v1/responses',
        render: (result) => renderResponse(head(result.model, result.request_id), normalizedOf(result)),
        encoder: (s) => {
          const enc = new ResponsesEventEncoder(head(s.model, s.request_id));
          return {
            encode: (d) => enc.encode(d),
            end: () => enc.end(),
            fail: (message) => enc.fail('upstream_error', message),
            get response() {
              return enc.response;
            },
          };
        },
        finished: (rendered) => (rendered ? this.keep(principal, req, rendered) : Promise.resolve()),
      },
    });
  }

  async get(principal: Principal, id: string): Promise<Json> {
    const found = await this.store.find(principal.tenantId, id);
    if (!found) throw new ResponseNotFoundError(id);
    return found.response;
  }

  async delete(principal: Principal, id: string): Promise<Json> {
    if (!(await this.store.delete(principal.tenantId, id))) throw new ResponseNotFoundError(id);
    return { id, object: 'response.deleted', deleted: true };
  }

  /** `GET /v1/responses/{response_id}/input_items`: the response's own input items, paged like the API (`limit`, `order`, `after`). */
  async inputItems(principal: Principal, id: string, q: { limit?: number; order?: 'asc' | 'desc'; after?: string }): Promise<Json> {
    const found = await this.store.find(principal.tenantId, id);
    if (!found) throw new ResponseNotFoundError(id);
    const items = q.order === 'asc' ? found.inputItems : [...found.inputItems].reverse();
    const from = q.after ? items.findIndex((i) => i.id === q.after) + 1 : 0;
    const limit = q.limit ?? 20;
    const page = items.slice(from, from + limit);
    return { object: 'list', data: page, first_id: page[0]?.id ?? null, last_id: page.at(-1)?.id ?? null, has_more: from + limit < items.length };
  }

  private renderComplete(call: CompletedCall, req: PreparedResponsesRequest, head: ResponseHead): Json {
    if (sendsResponses(req.prepared, call.selected.provider))
      return { ...call.body.json, store: req.store, previous_response_id: req.previousResponseId ?? null };
    const json = call.body.json;
    return renderResponse(head, call.upstreamProtocol === 'openai' ? normalizeOpenaiResponse(json) : normalizeAnthropicResponse(json));
  }

  /** Stores a finished response (when `store` is not false) with its input items, for `previous_response_id`. */
  private async keep(principal: Principal, req: PreparedResponsesRequest, response: Json): Promise<void> {
    if (!req.store || typeof response.id !== 'string') return;
    await this.store.insert({
      id: response.id,
      tenantId: principal.tenantId,
      apiKeyId: principal.apiKeyId ?? null,
      previousResponseId: req.previousResponseId ?? null,
      model: String(response.model ?? ''),
      status: String(response.status ?? 'completed'),
      inputItems: req.inputItems,
      output: (Array.isArray(response.output) ? response.output.filter(isObject) : []) as ResponseItem[],
      response,
    });
  }

  private async pipe(open: OpenStream, req: PreparedResponsesRequest, head: ResponseHead, principal: Principal, reply: FastifyReply, abort: ClientAbort) {
    const headers = { ...routeHeaders(open.info, req.prepared.model), ...droppedHeader(req, open.selected.provider) };
    const res = this.sse.open(reply, { stream: 'gateway', heartbeatMs: 0, reconnectable: false, deferHead: true, headers });
    const usage: NormalizedUsage = { inputTokens: 0, outputTokens: 0, cachedInputTokens: 0 };
    let outcome: { error?: UpstreamError; response?: Json };
    try {
      outcome = sendsResponses(req.prepared, open.selected.provider)
        ? await this.passthrough(open, req, res, usage, abort)
        : await this.translate(open, head, res, usage, abort);
    } catch (err) {
      const error = err instanceof UpstreamError ? err : transportError(open.selected.provider, err, abort);
      outcome = { error };
      rootLogger().warn({ request_id: open.info.request_id, provider: open.selected.provider.id, err: error.message }, 'responses stream relay failed');
    }
    const clientAborted = abort.aborted;
    if (clientAborted) open.upstream.body.destroy();
    else res.end();
    open.finish({ usage, error: clientAborted ? undefined : outcome.error, clientAborted });
    if (!clientAborted && outcome.response) {
      await this.keep(principal, req, outcome.response).catch((err: unknown) =>
        rootLogger().warn({ request_id: open.info.request_id, err: (err as Error).message }, 'storing a streamed response failed'),
      );
    }
  }

  /**
   * The upstream speaks the Responses API: its frames go out as they are, except the few lifecycle frames that carry
   * the response object (`store` and `previous_response_id` set back to the client's); the terminal one gives the
   * usage and the response to store.
   */
  private async passthrough(
    open: OpenStream,
    req: PreparedResponsesRequest,
    res: SseStream,
    usage: NormalizedUsage,
    signal: ClientAbort,
  ): Promise<{ error?: UpstreamError; response?: Json }> {
    const framer = new SseFramer();
    const reader = open.upstream.reader;
    let response: Json | undefined;
    let failed = false;
    let frames = 0;
    const batch = new FrameBatch();
    const relay = (chunk: Buffer): boolean => {
      for (const frame of framer.push(chunk)) {
        frames++;
        if (LIFECYCLE.some((p) => startsWith(frame, p))) {
          const f = parseFrame(frame);
          const obj = parseJson(f.data);
          if (obj && isObject(obj.response)) {
            obj.response.store = req.store;
            obj.response.previous_response_id = req.previousResponseId ?? null;
            if (TERMINAL.has(String(obj.type))) {
              response = obj.response;
              failed = obj.type === 'response.failed';
              const u = openaiUsage(obj.response.usage);
              if (u) mergeUsage(usage, u);
            }
            batch.push(`event: ${f.event}\ndata: ${JSON.stringify(obj)}\n\n`);
            continue;
          }
        } else if (startsWith(frame, EV_ERROR)) failed = true;
        batch.push(frame);
      }
      return batch.flush(res, reader, signal.aborted);
    };
    relay(open.upstream.first);
    if (!batch.wrote) res.flushHead();
    const broke = (e: UpstreamError) => {
      res.relay(
        `event: error\ndata: ${JSON.stringify({ type: 'error', sequence_number: frames, code: 'upstream_error', message: e.message, param: null })}\n\n`,
      );
      return { error: e, response };
    };
    try {
      await reader.pump(relay);
    } catch (err) {
      const e = transportError(open.selected.provider, err, signal);
      if (e.kind === 'aborted' || signal.aborted) return { error: e };
      return broke(e);
    }
    if (signal.aborted) return {};
    const rest = framer.flush();
    if (rest) res.relay(rest);
    if (failed) return { error: new UpstreamStreamError(`${open.selected.provider.id} reported an error mid-stream`), response };
    if (!response) return broke(new UpstreamError('network', `${open.selected.provider.id} closed the stream before it was complete`, { retryable: true }));
    return { response };
  }

  /** Any other upstream: its deltas re-encoded as Responses events. */
  private async translate(
    open: OpenStream,
    head: ResponseHead,
    res: SseStream,
    usage: NormalizedUsage,
    signal: ClientAbort,
  ): Promise<{ error?: UpstreamError; response?: Json }> {
    const encoder = new ResponsesEventEncoder(head);
    res.relay(encoder.begin());
    let upstreamErrored = false;
    try {
      for await (const d of decodeUpstreamStream(open, signal)) {
        if (d.type === 'error') {
          upstreamErrored = true;
          res.relay(encoder.fail(d.error.type, d.error.message));
          break;
        }
        const out = encoder.encode(d);
        if (out && !res.relay(out)) await res.drained();
        if (signal.aborted) return {};
      }
      if (upstreamErrored) return { error: new UpstreamStreamError(`${open.selected.provider.id} reported an error mid-stream`), response: encoder.response };
      res.relay(encoder.end());
      return { response: encoder.response };
    } catch (err) {
      const e = err instanceof UpstreamError ? err : transportError(open.selected.provider, err, signal);
      if (e.kind === 'aborted' || signal.aborted) return { error: e };
      if (!upstreamErrored) res.relay(encoder.fail(e.kind === 'timeout' ? 'upstream_timeout' : 'upstream_error', e.message));
      return { error: e, response: encoder.response };
    } finally {
      mergeUsage(usage, encoder.usage);
    }
  }
}
