import { Injectable } from '@nestjs/common';
import { InvalidRequestError } from '@core/http/domain-error';
import { RoutePlanningService, UpstreamFailedError } from '@modules/inference';
import { LlmClient, type RuntimeProvider, UpstreamError } from '@modules/providers';

/** How a count was made: by the provider that would serve the request, or estimated here. */
export type TokenCountSource = 'exact' | 'estimate';

export interface TokenCount {
  input_tokens: number;
  source: TokenCountSource;
  provider?: string;
  model: string;
}

const COUNT_TIMEOUT_MS = 30_000;
/** Characters per token of the estimate (the usual rule of thumb for English text and JSON). */
const CHARS_PER_TOKEN = 4;
/** Tokens the estimate adds per message and per tool for their framing. */
const FRAMING_TOKENS = 4;

interface CountRequest {
  model: string;
  messages: unknown[];
  system?: unknown;
  tools?: unknown[];
  [key: string]: unknown;
}

function checkRequest(body: unknown): CountRequest {
  const b = body as Partial<CountRequest> | undefined;
  if (!b || typeof b !== 'object' || Array.isArray(b)) throw new InvalidRequestError('the body must be a JSON object', { details: { param: 'body' } });
  if (typeof b.model !== 'string' || b.model === '') throw new InvalidRequestError('model is required', { details: { param: 'model' } });
  if (!Array.isArray(b.messages) || b.messages.length === 0)
    throw new InvalidRequestError('messages must be a non-empty array', { details: { param: 'messages' } });
  if (b.tools !== undefined && !Array.isArray(b.tools)) throw new InvalidRequestError('tools must be an array', { details: { param: 'tools' } });
  return b as CountRequest;
}

/** Every string a model reads in `value` (text, tool inputs and schemas alike), concatenated. */
function readableText(value: unknown): string {
  if (typeof value === 'string') return value;
  if (Array.isArray(value)) return value.map(readableText).join(' ');
  if (value && typeof value === 'object') {
    return Object.entries(value)
      .filter(([key]) => key !== 'type' && key !== 'cache_control')
      .map(([, v]) => readableText(v))
      .join(' ');
  }
  return value === undefined || value === null ? '' : String(value);
}

/** The estimate: characters / 4 over what the model reads, plus a few tokens of framing per message and tool. */
export function estimateInputTokens(req: Pick<CountRequest, 'messages' | 'system' | 'tools'>): number {
  const text = readableText(req.system) + readableText(req.messages) + readableText(req.tools ?? []);
  return Math.ceil(text.length / CHARS_PER_TOKEN) + FRAMING_TOKENS * (req.messages.length + (req.tools?.length ?? 0));
}

/**
 * `POST /v1/messages/count_tokens` (Anthropic's token counting, which Claude Code and Anthropic clients call): routed
 * like a message for its model; when the provider that would serve it speaks Anthropic's protocol, its own count is
 * returned (exact), else — or when that provider has no counting endpoint — an estimate, marked as such. Nothing is
 * billed or recorded: counting is free upstream too.
 */
@Injectable()
export class CountTokensService {
  constructor(private readonly planning: RoutePlanningService) {}

  async count(body: unknown): Promise<TokenCount> {
    const req = checkRequest(body);
    const plan = await this.planning.plan({ model: req.model, needsTools: Boolean(req.tools?.length), needsImages: false });
    const chosen = plan.candidates[0];
    if (chosen?.provider.protocol === 'anthropic') {
      const exact = await this.askProvider(chosen.provider, { ...req, model: chosen.model });
      if (exact !== undefined) return { input_tokens: exact, source: 'exact', provider: chosen.provider.id, model: chosen.model };
    }
    return {
      input_tokens: estimateInputTokens(req),
      source: 'estimate',
      ...(chosen ? { provider: chosen.provider.id } : {}),
      model: chosen?.model ?? req.model,
    };
  }

  /** The provider's own count, or undefined when it has no counting endpoint (404/405); other failures are raised. */
  private async askProvider(provider: RuntimeProvider, req: CountRequest): Promise<number | undefined> {
    try {
      const res = await LlmClient.complete(provider, JSON.stringify(req), {
        path: `${provider.chatPath}/count_tokens`,
        firstByteMs: COUNT_TIMEOUT_MS,
        idleMs: COUNT_TIMEOUT_MS,
      });
      const answer = (await res.body.json()) as { input_tokens?: unknown };
      return typeof answer.input_tokens === 'number' ? answer.input_tokens : undefined;
    } catch (err) {
      if (err instanceof UpstreamError && err.kind === 'http' && (err.info.status === 404 || err.info.status === 405)) return undefined;
      if (err instanceof UpstreamError) throw new UpstreamFailedError(err, { provider: provider.id });
      throw err;
    }
  }
}
