import {
  anthropicUsage,
  ContentBlock,
  isObject,
  Json,
  NormalizedUsage,
  OPENAI_TO_STOP,
  openaiUsage,
  STOP_TO_OPENAI,
  StopReason,
  ToolCall,
  ZERO_USAGE,
} from './normalized';

/** The protocol-neutral view of a finished completion. */
export interface NormalizedMessage {
  id: string;
  model: string;
  content_blocks: ContentBlock[];
  tool_calls: ToolCall[];
  text: string;
  stop_reason: StopReason | null;
  usage: NormalizedUsage;
}

function parseArgs(args: unknown): unknown {
  if (typeof args !== 'string') return args ?? {};
  try {
    return args.trim() === '' ? {} : (JSON.parse(args) as unknown);
  } catch {
    return { _raw: args };
  }
}

export function normalizeOpenaiResponse(body: Json): NormalizedMessage {
  const choice = Array.isArray(body.choices) && isObject(body.choices[0]) ? body.choices[0] : {};
  const message = isObject(choice.message) ? choice.message : {};
  const blocks: ContentBlock[] = [];
  const reasoning = typeof message.reasoning_content === 'string' ? message.reasoning_content : typeof message.reasoning === 'string' ? message.reasoning : '';
  if (Array.isArray(message.content_blocks)) {
    blocks.push(...(message.content_blocks.filter(isObject) as ContentBlock[]));
  } else {
    if (reasoning) blocks.push({ type: 'thinking', thinking: reasoning, signature: '' });
    const text = typeof message.content === 'string' ? message.content : '';
    if (text) blocks.push({ type: 'text', text });
  }
  const toolCalls: ToolCall[] = [];
  for (const tc of Array.isArray(message.tool_calls) ? message.tool_calls : []) {
    if (!isObject(tc) || !isObject(tc.function)) continue;
    const call: ToolCall = {
      id: String(tc.id ?? ''),
      type: 'function',
      function: { name: String(tc.function.name ?? ''), arguments: String(tc.function.arguments ?? '') },
    };
    toolCalls.push(call);
    if (!Array.isArray(message.content_blocks))
      blocks.push({ type: 'tool_use', id: call.id, name: call.function.name, input: parseArgs(call.function.arguments) });
  }
  const finish = typeof choice.finish_reason === 'string' ? choice.finish_reason : null;
  return assembleMessage(body, blocks, toolCalls, finish === null ? null : (OPENAI_TO_STOP[finish] ?? finish), openaiUsage(body.usage) ?? { ...ZERO_USAGE });
}

function assembleMessage(body: Json, blocks: ContentBlock[], toolCalls: ToolCall[], stop: StopReason | null, usage: NormalizedUsage): NormalizedMessage {
  return {
    id: String(body.id ?? ''),
    model: String(body.model ?? ''),
    content_blocks: blocks,
    tool_calls: toolCalls,
    text: blocks
      .filter((b) => b.type === 'text')
      .map((b) => (b as { text: string }).text)
      .join(''),
    stop_reason: stop,
    usage,
  };
}

export function normalizeAnthropicResponse(body: Json): NormalizedMessage {
  const blocks = (Array.isArray(body.content) ? body.content.filter(isObject) : []) as ContentBlock[];
  const toolCalls: ToolCall[] = blocks
    .filter((b) => b.type === 'tool_use')
    .map((b) => {
      const t = b as { id: string; name: string; input: unknown };
      return { id: t.id, type: 'function', function: { name: t.name, arguments: JSON.stringify(t.input ?? {}) } };
    });
  const u = anthropicUsage(body.usage) ?? {};
  const usage = { inputTokens: u.inputTokens ?? 0, outputTokens: u.outputTokens ?? 0, cachedInputTokens: u.cachedInputTokens ?? 0 };
  return assembleMessage(body, blocks, toolCalls, typeof body.stop_reason === 'string' ? body.stop_reason : null, usage);
}

export function toOpenaiUsage(u: NormalizedUsage): Json {
  return {
    prompt_tokens: u.inputTokens,
    completion_tokens: u.outputTokens,
    total_tokens: u.inputTokens + u.outputTokens,
    prompt_tokens_details: { cached_tokens: u.cachedInputTokens },
  };
}

export function toAnthropicUsage(u: NormalizedUsage): Json {
  return {
    input_tokens: u.inputTokens - u.cachedInputTokens,
    cache_creation_input_tokens: 0,
    cache_read_input_tokens: u.cachedInputTokens,
    output_tokens: u.outputTokens,
  };
}

/** Anthropic Messages response → OpenAI chat.completion (thinking kept as `reasoning_content` and `content_blocks`). */
export function renderOpenaiCompletion(n: NormalizedMessage, model: string, created = Math.floor(Date.now() / 1000)): Json {
  const thinking = n.content_blocks
    .filter((b) => b.type === 'thinking')
    .map((b) => String((b as { thinking: string }).thinking ?? ''))
    .join('');
  const message: Json = { role: 'assistant', content: n.text === '' && n.tool_calls.length > 0 ? null : n.text, refusal: null };
  if (thinking) message.reasoning_content = thinking;
  if (n.tool_calls.length > 0) message.tool_calls = n.tool_calls;
  if (n.content_blocks.some((b) => b.type !== 'text')) message.content_blocks = n.content_blocks;
  return {
    id: n.id.startsWith('chatcmpl') ? n.id : `chatcmpl-${n.id}`,
    object: 'chat.completion',
    created,
    model,
    choices: [{ index: 0, message, logprobs: null, finish_reason: n.stop_reason === null ? 'stop' : (STOP_TO_OPENAI[n.stop_reason] ?? 'stop') }],
    usage: toOpenaiUsage(n.usage),
  };
}

/** OpenAI chat.completion → Anthropic Messages response (reasoning_content becomes a thinking block). */
export function renderAnthropicMessage(n: NormalizedMessage, model: string): Json {
  const content = n.content_blocks.length > 0 ? n.content_blocks : [{ type: 'text', text: '' }];
  return {
    id: n.id.startsWith('msg_') ? n.id : `msg_${n.id.replace(/^chatcmpl-/, '')}`,
    type: 'message',
    role: 'assistant',
    model,
    content,
    stop_reason: n.stop_reason ?? 'end_turn',
    stop_sequence: null,
    usage: toAnthropicUsage(n.usage),
  };
}
