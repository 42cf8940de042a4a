import { InvalidInferenceRequestError } from './inference.errors';
import type { Json, ToolCall } from './protocol/normalized';
import { hasHecateMessageFields } from './protocol/request-translation';
import type { PreparedRequest } from './upstream-call';

/** One message of a model request built by code: OpenAI Chat Completions semantics, with Hecate's extensions. */
export interface InferenceMessage {
  role: 'system' | 'developer' | 'user' | 'assistant' | 'tool';
  content?: string | null | Array<Record<string, unknown>>;
  name?: string;
  tool_calls?: ToolCall[];
  tool_call_id?: string;
  /** Anthropic-style blocks (thinking with its signature) kept across protocols. */
  content_blocks?: Array<Record<string, unknown>>;
  /** A tool result that is an error (Anthropic `is_error`). */
  tool_error?: boolean;
}

export interface InferenceTool {
  type: 'function';
  function: { name: string; description?: string; parameters?: Record<string, unknown> };
}

export type InferenceToolChoice = 'auto' | 'none' | 'required' | { type: 'function'; function: { name: string } };

/**
 * A model call as code builds it (chat sessions, agent chat, the agent loop). Typed, and never run through the /v1
 * validator: a malformed one is a server bug (500 `gateway_error`), not a client's 400.
 */
export interface InferenceRequest {
  messages: InferenceMessage[];
  /** Requested model; absent → the provider's or the global default (route reasons as on /v1). */
  model?: string;
  /** Pins a provider (no failover). */
  provider?: string;
  tools?: InferenceTool[];
  tool_choice?: InferenceToolChoice;
  max_tokens?: number;
  temperature?: number;
  /**
   * The partial reply an earlier attempt of this call streamed before its worker died (docs/takeover.md). The engine
   * sends it as a trailing assistant message only to a model that continues prefills (`assistant_prefill`); any other
   * gets the request without it and answers anew. The stream says which happened (`continued`). Streams only: a
   * non-streaming call ignores it.
   */
  continuation?: string;
}

const ROLES = new Set(['system', 'developer', 'user', 'assistant', 'tool']);

function hasImage(messages: InferenceMessage[]): boolean {
  for (const m of messages) {
    if (!Array.isArray(m.content)) continue;
    for (const p of m.content) if (p.type === 'image_url') return true;
  }
  return false;
}

/** The engine's form of an in-process request (OpenAI protocol), checked for the invariants the router relies on. */
export function prepareInternal(req: InferenceRequest, stream: boolean): PreparedRequest {
  if (!Array.isArray(req.messages) || req.messages.length === 0) throw new InvalidInferenceRequestError('messages must be a non-empty array');
  let hecateFields = false;
  req.messages.forEach((m, i) => {
    if (!ROLES.has(m.role)) throw new InvalidInferenceRequestError(`messages[${i}].role ${JSON.stringify(m.role)} is not a chat role`);
    if (!hecateFields) hecateFields = hasHecateMessageFields(m as unknown as Json);
  });
  if (req.model !== undefined && req.model === '') throw new InvalidInferenceRequestError('model must not be empty');
  if (req.max_tokens !== undefined && !(Number.isInteger(req.max_tokens) && req.max_tokens > 0))
    throw new InvalidInferenceRequestError('max_tokens must be a positive integer');
  const body: Json = { messages: req.messages, stream };
  if (req.model !== undefined) body.model = req.model;
  if (req.provider !== undefined) body.provider = req.provider;
  if (req.tools !== undefined && req.tools.length > 0) body.tools = req.tools;
  if (req.tool_choice !== undefined) body.tool_choice = req.tool_choice;
  if (req.max_tokens !== undefined) body.max_tokens = req.max_tokens;
  if (req.temperature !== undefined) body.temperature = req.temperature;
  return {
    protocol: 'openai',
    body,
    stream,
    model: req.model,
    provider: req.provider,
    needsTools: (req.tools?.length ?? 0) > 0,
    needsImages: hasImage(req.messages),
    clientWantsUsage: false,
    hecateMessageFields: hecateFields,
    forwardHeaders: undefined,
    ...(req.continuation ? { continuation: req.continuation } : {}),
  };
}
