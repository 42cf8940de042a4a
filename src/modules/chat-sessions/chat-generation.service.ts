import { Injectable } from '@nestjs/common';
import type { RequestOrigin } from '@core/context/request-context';
import { GatewayResult, GatewayRouterService } from '@modules/gateway/gateway-router.service';
import type { GatewayDelta } from '@modules/gateway/protocol/normalized';
import type { DeltaFrame } from './chat-delta-frames';
import type { ChatMessageJson, GeneratedReply } from './chat-message';
import type { NewProviderCall } from './chat-write-types';

export interface GenerationRequest {
  tenantId: string;
  messages: ChatMessageJson[];
  model?: string;
  provider?: string;
  /** For the usage ledger (e.g. `/hecate/v1/chat/sessions/messages`). */
  endpoint: string;
  /** The HTTP request the generation serves: its ids go on the usage row and the trace. */
  origin: RequestOrigin | null;
}

export type CallRecord = Omit<NewProviderCall, 'id' | 'status'>;

export interface GenerationStream {
  provider: string;
  model: string;
  frames: AsyncIterable<DeltaFrame>;
  /** The assembled reply and its call (after the frames end, or after an abort: the partial reply). */
  result: Promise<{ reply: GeneratedReply; call: CallRecord }>;
}

/** A router delta as the frame a client sees (usage, stop and message_start are not forwarded). */
export function frameOf(d: GatewayDelta): DeltaFrame | undefined {
  switch (d.type) {
    case 'text_delta':
      return { content: d.text };
    case 'thinking_delta':
      return { reasoning: d.thinking };
    case 'thinking_signature':
      return { reasoning_signature: d.signature };
    case 'tool_call_start':
      return { tool_calls: [{ index: d.index, id: d.id, type: 'function', function: { name: d.name, arguments: '' } }] };
    case 'tool_call_delta':
      return { tool_calls: [{ index: d.index, function: { arguments: d.arguments } }] };
    default:
      return undefined;
  }
}

const replyOf = (r: GatewayResult): GeneratedReply => ({
  text: r.text,
  content_blocks: r.content_blocks as Array<Record<string, unknown>>,
  tool_calls: r.tool_calls,
});

const callOf = (r: GatewayResult, requestedModel: string | undefined): CallRecord => ({
  requestId: r.request_id,
  provider: r.provider,
  providerKind: r.provider_kind,
  model: r.model,
  requestedModel: requestedModel ?? null,
  routeReason: r.route_reason,
  costMicrosUsd: r.cost_micros_usd,
  promptTokens: r.usage.input_tokens,
  completionTokens: r.usage.output_tokens,
});

/**
 * The one place chat sessions call a model: through the gateway router (routing, failover, ledger,
 * traces), always streaming so a stop keeps the partial reply.
 */
@Injectable()
export class ChatGenerationService {
  constructor(private readonly router: GatewayRouterService) {}

  private body(req: GenerationRequest, stream: boolean) {
    return {
      protocol: 'openai' as const,
      body: {
        messages: req.messages,
        stream,
        ...(req.model ? { model: req.model } : {}),
        ...(req.provider ? { provider: req.provider } : {}),
      },
    };
  }

  async stream(req: GenerationRequest, signal: AbortSignal): Promise<GenerationStream> {
    const s = await this.router.stream(this.body(req, true), { tenantId: req.tenantId, signal, endpoint: req.endpoint, ...req.origin });
    async function* frames(): AsyncGenerator<DeltaFrame> {
      for await (const d of s.deltas) {
        const f = frameOf(d);
        if (f) yield f;
      }
    }
    return {
      provider: s.provider,
      model: s.model,
      frames: frames(),
      result: s.result.then((r) => ({ reply: replyOf(r), call: callOf(r, req.model) })),
    };
  }

  async complete(req: GenerationRequest, signal?: AbortSignal): Promise<{ reply: GeneratedReply; call: CallRecord }> {
    const r = await this.router.complete(this.body(req, false), { tenantId: req.tenantId, signal, endpoint: req.endpoint, ...req.origin });
    return { reply: replyOf(r), call: callOf(r, req.model) };
  }
}
