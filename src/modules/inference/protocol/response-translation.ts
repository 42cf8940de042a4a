import { anthropicUsage, ContentBlock, isObject, Json, NormalizedUsage, OPENAI_TO_STOP, openaiUsage, StopReason, ToolCall, ZERO_USAGE } from './normalized';

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
