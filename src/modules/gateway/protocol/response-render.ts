import { Json, NormalizedMessage, NormalizedUsage, STOP_TO_OPENAI } from '@modules/inference';

/** Rendering a normalized completion in a client's protocol (the /v1 edges). */
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
