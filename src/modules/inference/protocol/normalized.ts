/** Protocol-neutral shapes shared by translation, the router and its callers (chat sessions). */

export type WireProtocol = 'openai' | 'anthropic';

export type Json = Record<string, unknown>;

export interface NormalizedUsage {
  /** All prompt tokens, cached ones included. */
  inputTokens: number;
  outputTokens: number;
  /** Prompt tokens read from the provider's cache (part of inputTokens). */
  cachedInputTokens: number;
  /** Output tokens spent on reasoning (part of outputTokens), when the provider reports them. */
  reasoningTokens?: number;
}

export const ZERO_USAGE: NormalizedUsage = { inputTokens: 0, outputTokens: 0, cachedInputTokens: 0 };

/** Anthropic's stop vocabulary is the normalized one (it is the richer of the two). */
export type StopReason = 'end_turn' | 'max_tokens' | 'tool_use' | 'stop_sequence' | 'refusal' | 'pause_turn' | (string & {});

/** Anthropic-style content blocks: what `content_blocks` carries (thinking preserved with its signature). */
export type ContentBlock =
  | { type: 'text'; text: string }
  | { type: 'thinking'; thinking: string; signature: string }
  | { type: 'redacted_thinking'; data: string }
  | { type: 'tool_use'; id: string; name: string; input: unknown }
  | { type: string; [k: string]: unknown };

/** OpenAI-style tool call. */
export interface ToolCall {
  id: string;
  type: 'function';
  function: { name: string; arguments: string };
}

/** A streamed delta, protocol-neutral. */
export type InferenceDelta =
  | { type: 'message_start'; id: string; model: string }
  | { type: 'text_delta'; text: string }
  | { type: 'thinking_delta'; thinking: string }
  | { type: 'thinking_signature'; signature: string }
  | { type: 'redacted_thinking'; data: string }
  | { type: 'tool_call_start'; index: number; id: string; name: string }
  | { type: 'tool_call_delta'; index: number; arguments: string }
  | { type: 'usage'; usage: Partial<NormalizedUsage> }
  | { type: 'stop'; stop_reason: StopReason }
  | { type: 'error'; error: { type: string; message: string } };

export const OPENAI_TO_STOP: Record<string, StopReason> = {
  stop: 'end_turn',
  length: 'max_tokens',
  tool_calls: 'tool_use',
  function_call: 'tool_use',
  content_filter: 'refusal',
};

export const STOP_TO_OPENAI: Record<string, string> = {
  end_turn: 'stop',
  stop_sequence: 'stop',
  pause_turn: 'stop',
  max_tokens: 'length',
  model_context_window_exceeded: 'length',
  tool_use: 'tool_calls',
  refusal: 'content_filter',
};

export const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

export const num = (v: unknown): number => (typeof v === 'number' && Number.isFinite(v) ? v : 0);

/** OpenAI usage: Chat Completions (`prompt_tokens`, …) or Responses (`input_tokens`, …) naming. */
export function openaiUsage(u: unknown): NormalizedUsage | undefined {
  if (!isObject(u)) return undefined;
  const responses = u.prompt_tokens === undefined && u.input_tokens !== undefined;
  const inDetails = responses ? u.input_tokens_details : u.prompt_tokens_details;
  const outDetails = responses ? u.output_tokens_details : u.completion_tokens_details;
  const usage: NormalizedUsage = {
    inputTokens: num(responses ? u.input_tokens : u.prompt_tokens),
    outputTokens: num(responses ? u.output_tokens : u.completion_tokens),
    cachedInputTokens: num(isObject(inDetails) ? inDetails.cached_tokens : 0),
  };
  const reasoning = num(isObject(outDetails) ? outDetails.reasoning_tokens : 0);
  if (reasoning > 0) usage.reasoningTokens = reasoning;
  return usage;
}

export function anthropicUsage(u: unknown): Partial<NormalizedUsage> | undefined {
  if (!isObject(u)) return undefined;
  const out: Partial<NormalizedUsage> = {};
  if ('input_tokens' in u || 'cache_read_input_tokens' in u || 'cache_creation_input_tokens' in u) {
    out.inputTokens = num(u.input_tokens) + num(u.cache_read_input_tokens) + num(u.cache_creation_input_tokens);
    out.cachedInputTokens = num(u.cache_read_input_tokens);
  }
  if ('output_tokens' in u) out.outputTokens = num(u.output_tokens);
  return out;
}

export function mergeUsage(into: NormalizedUsage, part: Partial<NormalizedUsage>): void {
  if (part.inputTokens !== undefined && part.inputTokens > 0) into.inputTokens = part.inputTokens;
  if (part.cachedInputTokens !== undefined && part.cachedInputTokens > 0) into.cachedInputTokens = part.cachedInputTokens;
  if (part.outputTokens !== undefined && part.outputTokens > 0) into.outputTokens = part.outputTokens;
  if (part.reasoningTokens !== undefined && part.reasoningTokens > 0) into.reasoningTokens = part.reasoningTokens;
}
