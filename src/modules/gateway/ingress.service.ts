import { Injectable } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Principal } from '@core/context/request-context';
import { SseService, type SseStream } from '@core/http/sse';
import { rootLogger } from '@core/logging/logger';
import { transportError, UpstreamError } from '@modules/providers';
import {
  anthropicUsage,
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
  PreparedRequest,
  SseFramer,
  startsWith,
  UpstreamStreamError,
  WireProtocol,
} from '@modules/inference';
import { prepareRequest } from './ingress-validation';
import { renderAnthropicMessage, renderOpenaiCompletion } from './protocol/response-render';
import { AnthropicEventEncoder, OpenaiChunkEncoder } from './protocol/stream-encoders';
import { FrameBatch } from './protocol/frame-batch';
import { routeHeaders } from './response-headers';

const USAGE_OBJECT = Buffer.from('"usage":{');
const DATA_DONE = Buffer.from('data: [DONE]');
const DATA_ERROR = Buffer.from('data: {"error"');
const EV_START = Buffer.from('event: message_start');
const EV_DELTA = Buffer.from('event: message_delta');
const EV_STOP = Buffer.from('event: message_stop');
const EV_ERROR = Buffer.from('event: error');

function errorFrame(protocol: WireProtocol, e: UpstreamError): string {
  const message = e.kind === 'timeout' ? 'the upstream provider went idle mid-stream' : 'the upstream stream broke before it was complete';
  if (protocol === 'anthropic') return `event: error\ndata: ${JSON.stringify({ type: 'error', error: { type: 'api_error', message } })}\n\n`;
  return `data: ${JSON.stringify({ error: { message, type: 'upstream_error', code: e.kind === 'timeout' ? 'upstream_timeout' : 'upstream_error', param: null } })}\n\n`;
}

/**
 * The /v1 completion ingress: validates by hand, routes, and writes the answer in the client's protocol —
 * upstream bytes unchanged when the protocols match (only usage is read), translated otherwise. A client
 * disconnect aborts the upstream request.
 */
@Injectable()
export class IngressService {
  constructor(
    private readonly inference: InferenceEngineService,
    private readonly sse: SseService,
  ) {}

  async handle(protocol: WireProtocol, request: FastifyRequest, reply: FastifyReply, principal: Principal): Promise<void> {
    const prepared = prepareRequest(protocol, request.body, request.headers);
    const abort = new ClientAbort();
    const onClose = () => {
      if (!reply.raw.writableFinished) abort.abort();
    };
    reply.raw.on('close', onClose);
    const id = this.inference.identity({
      tenantId: principal.tenantId,
      apiKeyId: principal.apiKeyId,
      origin: request.hecate,
      endpoint: protocol === 'openai' ? '/v1/chat/completions' : '/v1/messages',
    });
    try {
      if (!prepared.stream) {
        const call = await this.inference.dispatchComplete(prepared, id, abort);
        if (abort.aborted) return;
        void reply.headers(routeHeaders(call.info, prepared.model, call.costMicros)).header('content-type', 'application/json');
        await reply.send(this.renderComplete(protocol, call));
        return;
      }
      const open = await this.inference.dispatchStream(prepared, id, abort);
      await this.pipe(open, prepared, request, reply, abort);
    } catch (err) {
      if (abort.aborted && (err instanceof UpstreamError || reply.raw.destroyed)) return;
      throw err;
    } finally {
      reply.raw.off('close', onClose);
    }
  }

  private renderComplete(protocol: WireProtocol, call: CompletedCall): string {
    if (call.upstreamProtocol === protocol) return call.body.text;
    const n = call.upstreamProtocol === 'openai' ? normalizeOpenaiResponse(call.body.json) : normalizeAnthropicResponse(call.body.json);
    return JSON.stringify(protocol === 'openai' ? renderOpenaiCompletion(n, call.info.model) : renderAnthropicMessage(n, call.info.model));
  }

  private async pipe(open: OpenStream, prepared: PreparedRequest, request: FastifyRequest, reply: FastifyReply, abort: ClientAbort): Promise<void> {
    // The head is deferred: it goes out in the same socket write as the first relayed bytes (one syscall on the
    // way to the first token instead of two); each path flushes it alone only when the upstream's first chunk
    // produced nothing to send. No heartbeat (the provider protocols have none), no reconnect hint on shutdown.
    const res = this.sse.open(reply, {
      stream: 'gateway',
      heartbeatMs: 0,
      reconnectable: false,
      deferHead: true,
      headers: routeHeaders(open.info, prepared.model),
    });
    const usage: NormalizedUsage = { inputTokens: 0, outputTokens: 0, cachedInputTokens: 0 };
    let error: UpstreamError | undefined;
    try {
      if (open.upstreamProtocol === prepared.protocol) error = await this.passthrough(open, prepared, res, usage, abort);
      else error = await this.translate(open, prepared, res, usage, request.hecate?.requestId ?? open.info.request_id, abort);
    } catch (err) {
      error = err instanceof UpstreamError ? err : transportError(open.selected.provider, err, abort);
      rootLogger().warn({ request_id: open.info.request_id, provider: open.selected.provider.id, err: error.message }, 'stream relay failed');
    }
    const clientAborted = abort.aborted;
    if (clientAborted) open.upstream.body.destroy();
    else res.end();
    open.finish({ usage, error: clientAborted ? undefined : error, clientAborted });
  }

  /**
   * Same protocol: forward frames as they are, synchronously in each upstream 'data' event; read usage from
   * the few frames that carry it; drop the usage-only chunk the gateway asked for when the client did not.
   */
  private async passthrough(
    open: OpenStream,
    prepared: PreparedRequest,
    res: SseStream,
    usage: NormalizedUsage,
    signal: ClientAbort,
  ): Promise<UpstreamError | undefined> {
    const openai = prepared.protocol === 'openai';
    const dropUsageChunk = openai && !prepared.clientWantsUsage;
    const framer = new SseFramer();
    const reader = open.upstream.reader;
    let ended = false;
    let upstreamErrorFrame = false;
    const batch = new FrameBatch();
    const relay = (chunk: Buffer): boolean => {
      for (const frame of framer.push(chunk)) {
        if (openai) {
          if (frame.indexOf(USAGE_OBJECT) !== -1) {
            const obj = parseJson(parseFrame(frame).data);
            if (obj) {
              const u = openaiUsage(obj.usage);
              if (u) mergeUsage(usage, u);
              if (dropUsageChunk && Array.isArray(obj.choices) && obj.choices.length === 0) continue;
            }
          } else if (startsWith(frame, DATA_DONE)) ended = true;
          else if (startsWith(frame, DATA_ERROR)) upstreamErrorFrame = true;
        } else if (startsWith(frame, EV_START) || startsWith(frame, EV_DELTA)) {
          const obj = parseJson(parseFrame(frame).data);
          const u = obj && anthropicUsage(isObject(obj.message) ? obj.message.usage : obj.usage);
          if (u) mergeUsage(usage, u);
        } else if (startsWith(frame, EV_STOP)) ended = true;
        else if (startsWith(frame, EV_ERROR)) upstreamErrorFrame = true;
        batch.push(frame);
      }
      return batch.flush(res, reader, signal.aborted);
    };
    relay(open.upstream.first);
    if (!batch.wrote) res.flushHead();
    try {
      await reader.pump(relay);
    } catch (err) {
      const e = transportError(open.selected.provider, err, signal);
      if (e.kind !== 'aborted' && !signal.aborted) res.relay(errorFrame(prepared.protocol, e));
      return e;
    }
    if (signal.aborted) return undefined;
    const rest = framer.flush();
    if (rest) res.relay(rest);
    if (upstreamErrorFrame) return new UpstreamStreamError(`${open.selected.provider.id} reported an error mid-stream`);
    if (!ended) {
      const e = new UpstreamError('network', `${open.selected.provider.id} closed the stream before it was complete`, { retryable: true });
      res.relay(errorFrame(prepared.protocol, e));
      return e;
    }
    return undefined;
  }

  /** Different protocols: decode upstream frames to deltas and encode them in the client's protocol. */
  private async translate(
    open: OpenStream,
    prepared: PreparedRequest,
    res: SseStream,
    usage: NormalizedUsage,
    requestId: string,
    signal: ClientAbort,
  ): Promise<UpstreamError | undefined> {
    const suffix = requestId.replace(/^req_/, '');
    const encoder =
      prepared.protocol === 'openai'
        ? new OpenaiChunkEncoder(`chatcmpl-${suffix}`, open.info.model, prepared.clientWantsUsage)
        : new AnthropicEventEncoder(`msg_${suffix}`, open.info.model);
    let sentErrorFrame = false;
    let headFlushed = false;
    try {
      for await (const d of decodeUpstreamStream(open, signal)) {
        if (d.type === 'error') sentErrorFrame = true;
        const out = encoder.encode(d);
        if (!headFlushed) {
          headFlushed = true;
          if (!out) res.flushHead();
        }
        if (out && !res.relay(out)) await res.drained();
        if (signal.aborted) return undefined;
      }
      res.relay(encoder.end());
      return undefined;
    } catch (err) {
      const e = err instanceof UpstreamError ? err : transportError(open.selected.provider, err, signal);
      if (e.kind !== 'aborted' && !sentErrorFrame) res.relay(errorFrame(prepared.protocol, e));
      return e;
    } finally {
      mergeUsage(usage, encoder.usage);
    }
  }
}

function parseJson(data: string): Json | undefined {
  try {
    const v = JSON.parse(data) as unknown;
    return isObject(v) ? v : undefined;
  } catch {
    return undefined;
  }
}
