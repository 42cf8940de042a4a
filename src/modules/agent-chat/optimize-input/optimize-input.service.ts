import { Injectable } from '@nestjs/common';
import { AppConfig } from '@core/config/app-config';
import type { Principal, RequestOrigin } from '@core/context/request-context';
import { InvalidRequestError } from '@core/http/domain-error';
import { renderError, toDomainError } from '@core/http/error-rendering';
import { UpstreamError } from '@modules/providers';
import {
  InferenceService,
  UpstreamFailedError,
  type InferenceContext,
  type InferenceMessage,
  type InferenceRequest,
  type InferenceResult,
  type InferenceStream,
} from '@modules/inference';
import { AgentChatSessionNotFoundError, checkContentSize, optimizeInputModelRequired } from '../agent-chat.errors';
import { AgentChatRepository } from '../agent-chat.repository';
import type { OptimizeInputDto } from './optimize-input.dto';

/** The usage ledger's `endpoint` of each form (GET /hecate/v1/usage/events shows it). */
export const OPTIMIZE_INPUT_ENDPOINT = '/hecate/v1/agent-chat/optimize-input';
export const OPTIMIZE_INPUT_STREAM_ENDPOINT = '/hecate/v1/agent-chat/optimize-input/stream';

/** Recent messages of a session that inform the rewrite, and how much of each. */
const CONTEXT_MESSAGES = 12;
const CONTEXT_CHARS_PER_MESSAGE = 4000;

/** Marks the optimiser's instruction, so a test (or an operator reading a trace) can tell it from a chat prompt. */
export const OPTIMIZER_SYSTEM_PROMPT = [
  "You rewrite a user's draft prompt for an AI assistant (Hecate input optimisation).",
  "Make it clear, specific and complete enough to act on: state the goal, the things it concerns, the constraints and the expected result, as far as the draft and the conversation make them known. Keep the user's intent; add no requirement the user did not express; keep the user's tone and point of view.",
  'Do not answer or carry out the draft. Reply with the rewritten prompt only: no preface, explanation, title or quotes.',
].join('\n');

export interface OptimizedInput {
  success: true;
  optimized_input: string;
  request_id: string;
  provider: string;
  model: string;
  route_reason: string;
  stop_reason: string | null;
  usage: InferenceResult['usage'];
  cost_micros_usd: number;
  cost_usd: string;
}

/** One line of the stream (NDJSON): `start`, `delta`…, then `done` or `error`. */
export type OptimizeInputLine =
  | { type: 'start'; request_id: string; provider: string; model: string; timestamp: number }
  | { type: 'delta'; content: string; timestamp: number }
  | ({ type: 'done'; timestamp: number } & OptimizedInput)
  | { type: 'error'; error: OptimizeInputLineError; timestamp: number };

/** The error envelope's `error` (docs/api.md), as the stream's last line carries it. */
export type OptimizeInputLineError = ReturnType<typeof lineError>;

const now = (): number => Date.now() / 1000;

function toOptimizedInput(r: InferenceResult): OptimizedInput {
  return {
    success: true,
    optimized_input: r.text.trim(),
    request_id: r.request_id,
    provider: r.provider,
    model: r.model,
    route_reason: r.route_reason,
    stop_reason: r.stop_reason,
    usage: r.usage,
    cost_micros_usd: r.cost_micros_usd,
    cost_usd: r.cost_usd,
  };
}

function lineError(err: unknown, s: InferenceStream, origin: RequestOrigin) {
  const e = err instanceof UpstreamError ? new UpstreamFailedError(err, { provider: s.provider, model: s.model }) : err;
  const rendered = renderError('hecate', toDomainError(e).domain, origin.requestId, origin.traceId) as {
    error: { type: string; message: string; user_message: string; operator_action: string; request_id: string; trace_id?: string };
  };
  return rendered.error;
}

/**
 * Input optimisation (docs/api.md §5): rewrites a draft prompt through a model — InferenceService, so routing, failover, the
 * cost cap, the usage ledger, traces and error types are those of any call. The structured form answers the rewrite;
 * the stream yields NDJSON lines as the model writes it. Nothing is stored but the usage row and the trace.
 */
@Injectable()
export class OptimizeInputService {
  constructor(
    private readonly inference: InferenceService,
    private readonly chats: AgentChatRepository,
    private readonly config: AppConfig,
  ) {}

  async optimize(p: Principal, origin: RequestOrigin, dto: OptimizeInputDto, signal?: AbortSignal): Promise<OptimizedInput> {
    const request = await this.request(p, dto);
    return toOptimizedInput(await this.inference.complete(request, { ...this.context(p, origin, dto, OPTIMIZE_INPUT_ENDPOINT), signal }));
  }

  /**
   * Validates, routes and opens the upstream stream; whatever fails until the upstream's first byte rejects (the
   * caller answers the JSON envelope). Aborting `signal` (the client left) cancels the upstream request.
   */
  async open(p: Principal, origin: RequestOrigin, dto: OptimizeInputDto, signal: AbortSignal): Promise<AsyncIterable<OptimizeInputLine>> {
    const request = await this.request(p, dto);
    const s = await this.inference.stream(request, { ...this.context(p, origin, dto, OPTIMIZE_INPUT_STREAM_ENDPOINT), signal });
    return lines(s, origin);
  }

  private context(p: Principal, origin: RequestOrigin, dto: OptimizeInputDto, endpoint: string): InferenceContext {
    return { tenantId: p.tenantId, apiKeyId: p.apiKeyId, origin, endpoint, costCapMicros: dto.budget_micros_usd };
  }

  /** The model call: the optimiser's instruction, then the conversation (if any) and the draft in one user message. */
  private async request(p: Principal, dto: OptimizeInputDto): Promise<InferenceRequest> {
    const max = this.config.agent.chat.maxContentBytes;
    if (dto.current_input !== undefined && dto.input !== undefined)
      throw new InvalidRequestError('send the draft as current_input or as input, not both', { details: { field: 'input' } });
    const field = dto.input !== undefined ? 'input' : 'current_input';
    const draft = dto.current_input ?? dto.input;
    checkContentSize(draft, max, field, true);
    checkContentSize(dto.instructions, max, 'instructions');
    const model = dto.model?.trim() || this.config.agent.chat.optimizeInputModel;
    if (!model) throw optimizeInputModelRequired();
    const history = dto.history_messages ?? (await this.sessionHistory(p.tenantId, dto.session_id));
    const conversation = history
      .map((m) => ({ role: m.role.trim() || 'user', content: m.content.trim().slice(0, CONTEXT_CHARS_PER_MESSAGE) }))
      .filter((m) => m.content)
      .slice(-CONTEXT_MESSAGES)
      .map((m) => `[${m.role}] ${m.content}`)
      .join('\n');

    let system = OPTIMIZER_SYSTEM_PROMPT;
    system += dto.language?.trim() ? `\nWrite the rewrite in ${dto.language.trim()}.` : "\nWrite the rewrite in the draft's language.";
    if (dto.instructions?.trim()) system += `\n\nThe user's instructions for this rewrite:\n${dto.instructions.trim()}`;
    const user = conversation
      ? `Recent conversation (context only):\n${conversation}\n\nDraft prompt to rewrite:\n${draft!}`
      : `Draft prompt to rewrite:\n${draft!}`;
    const messages: InferenceMessage[] = [
      { role: 'system', content: system },
      { role: 'user', content: user },
    ];
    return { messages, model, provider: dto.provider?.trim() || undefined, max_tokens: dto.max_tokens, temperature: 0.2 };
  }

  /** The session's recent user and assistant messages (superseded answers left out); none without a session. */
  private async sessionHistory(tenantId: string, sessionId: string | undefined): Promise<Array<{ role: string; content: string }>> {
    if (!sessionId) return [];
    const session = await this.chats.findSession(tenantId, sessionId);
    if (!session) throw new AgentChatSessionNotFoundError(sessionId);
    return (await this.chats.messages(sessionId)).filter((m) => m.status !== 'superseded');
  }
}

async function* lines(s: InferenceStream, origin: RequestOrigin): AsyncGenerator<OptimizeInputLine> {
  yield { type: 'start', request_id: s.request_id, provider: s.provider, model: s.model, timestamp: now() };
  try {
    for await (const d of s.deltas) if (d.type === 'text_delta' && d.text) yield { type: 'delta', content: d.text, timestamp: now() };
    yield { type: 'done', ...toOptimizedInput(await s.result), timestamp: now() };
  } catch (err) {
    yield { type: 'error', error: lineError(err, s, origin), timestamp: now() };
  }
}
