import { isObject, Json } from './normalized';

/** Fields of an OpenAI chat request that the translation consumes; everything else is dropped for Anthropic. */
const DEFAULT_MAX_TOKENS = 4096;

type Block = Json;

function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return content === null || content === undefined ? '' : JSON.stringify(content);
  return content
    .map((p) => (isObject(p) && typeof p.text === 'string' ? p.text : ''))
    .filter(Boolean)
    .join('\n');
}

function parseArgs(args: unknown): unknown {
  if (typeof args !== 'string') return isObject(args) ? args : {};
  if (args.trim() === '') return {};
  try {
    return JSON.parse(args) as unknown;
  } catch {
    return { _raw: args };
  }
}

function imageBlockFromUrl(url: string): Block {
  const m = /^data:([^;,]+);base64,(.*)$/s.exec(url);
  if (m) return { type: 'image', source: { type: 'base64', media_type: m[1], data: m[2] } };
  return { type: 'image', source: { type: 'url', url } };
}

/** OpenAI user/assistant content parts → Anthropic blocks. */
function openaiPartsToBlocks(content: unknown): Block[] {
  if (typeof content === 'string') return content === '' ? [] : [{ type: 'text', text: content }];
  if (!Array.isArray(content)) return [];
  const out: Block[] = [];
  for (const part of content) {
    if (!isObject(part)) continue;
    if (part.type === 'text' && typeof part.text === 'string') out.push({ type: 'text', text: part.text });
    else if (part.type === 'image_url') {
      const iu = part.image_url;
      const url = typeof iu === 'string' ? iu : isObject(iu) && typeof iu.url === 'string' ? iu.url : undefined;
      if (url) out.push(imageBlockFromUrl(url));
    } else if (part.type === 'input_audio' || part.type === 'file') {
      out.push({ type: 'text', text: `[${String(part.type)} attachment omitted: not supported by this provider]` });
    }
  }
  return out;
}

function pushMessage(messages: Json[], role: 'user' | 'assistant', blocks: Block[]): void {
  if (blocks.length === 0) return;
  const last = messages[messages.length - 1];
  // Anthropic wants alternating roles: merge consecutive same-role turns (tool results + a user note, say).
  if (last && last.role === role && Array.isArray(last.content)) (last.content as Block[]).push(...blocks);
  else messages.push({ role, content: blocks });
}

function mapToolChoice(choice: unknown, parallel: unknown): Json | undefined {
  let out: Json | undefined;
  if (choice === 'auto') out = { type: 'auto' };
  else if (choice === 'none') out = { type: 'none' };
  else if (choice === 'required') out = { type: 'any' };
  else if (isObject(choice) && isObject(choice.function) && typeof choice.function.name === 'string') out = { type: 'tool', name: choice.function.name };
  if (parallel === false) out = { ...(out ?? { type: 'auto' }), disable_parallel_tool_use: true };
  return out;
}

/**
 * OpenAI Chat Completions request → Anthropic Messages request: system/developer messages → `system`;
 * tool calls → tool_use blocks; tool messages → tool_result blocks; image_url parts → image blocks;
 * `tool_error: true` → `is_error: true`; tools/tool_choice/stop/max tokens mapped. An assistant message that carries `content_blocks` (what this
 * gateway returns for Anthropic upstreams) is replayed verbatim, so thinking blocks and their signatures
 * survive a multi-turn tool loop; unsigned thinking (another provider's reasoning) is left out.
 */
/** `reasoning_effort` → Anthropic thinking budget (`none` turns nothing on). */
const THINKING_BUDGET: Record<string, number> = { minimal: 1024, low: 2048, medium: 8192, high: 24576, xhigh: 32000 };

export function openaiToAnthropicRequest(body: Json, model: string, stream: boolean): Json {
  const system: string[] = [];
  const messages: Json[] = [];
  for (const m of Array.isArray(body.messages) ? body.messages : []) {
    if (!isObject(m)) continue;
    const role = m.role;
    if (role === 'system' || role === 'developer') {
      const t = textOf(m.content);
      if (t) system.push(t);
    } else if (role === 'user') {
      pushMessage(messages, 'user', openaiPartsToBlocks(m.content));
    } else if (role === 'assistant') {
      // Thinking without a signature came from another provider's reasoning (OpenAI-protocol upstreams):
      // Anthropic rejects a thinking block it cannot verify, so only signed thinking goes back.
      const replayable = Array.isArray(m.content_blocks) ? m.content_blocks.filter((b) => isObject(b) && !(b.type === 'thinking' && !b.signature)) : [];
      if (replayable.length > 0) {
        pushMessage(messages, 'assistant', replayable as Json[]);
        continue;
      }
      const blocks = openaiPartsToBlocks(m.content);
      for (const tc of Array.isArray(m.tool_calls) ? m.tool_calls : []) {
        if (!isObject(tc) || !isObject(tc.function)) continue;
        blocks.push({ type: 'tool_use', id: String(tc.id ?? ''), name: String(tc.function.name ?? ''), input: parseArgs(tc.function.arguments) });
      }
      pushMessage(messages, 'assistant', blocks);
    } else if (role === 'tool' || role === 'function') {
      const content = typeof m.content === 'string' ? m.content : Array.isArray(m.content) ? openaiPartsToBlocks(m.content) : textOf(m.content);
      const result: Block = { type: 'tool_result', tool_use_id: String(m.tool_call_id ?? m.name ?? ''), content };
      // Hecate's `tool_error` (docs/api.md §1, a failed or never-run tool call) is Anthropic's `is_error`.
      if (m.tool_error === true) result.is_error = true;
      pushMessage(messages, 'user', [result]);
    }
  }
  const out: Json = { model, messages, max_tokens: numberOr(body.max_completion_tokens, numberOr(body.max_tokens, DEFAULT_MAX_TOKENS)) };
  const rf = body.response_format;
  if (isObject(rf) && (rf.type === 'json_object' || rf.type === 'json_schema')) {
    const schema = isObject(rf.json_schema) ? rf.json_schema.schema : undefined;
    system.push(schema ? `Respond only with a JSON value that matches this JSON schema:\n${JSON.stringify(schema)}` : 'Respond only with a valid JSON object.');
  }
  if (system.length > 0) out.system = system.join('\n\n');
  if (stream) out.stream = true;
  if (typeof body.temperature === 'number') out.temperature = Math.min(1, body.temperature);
  if (typeof body.top_p === 'number') out.top_p = body.top_p;
  if (typeof body.stop === 'string') out.stop_sequences = [body.stop];
  else if (Array.isArray(body.stop)) out.stop_sequences = body.stop;
  if (Array.isArray(body.tools) && body.tools.length > 0) {
    out.tools = body.tools.filter(isObject).map((t) => {
      const f = isObject(t.function) ? t.function : t;
      return {
        name: f.name,
        ...(f.description ? { description: f.description } : {}),
        input_schema: isObject(f.parameters) ? f.parameters : { type: 'object', properties: {} },
      };
    });
  }
  const tc = mapToolChoice(body.tool_choice, body.parallel_tool_calls);
  if (tc && (out.tools || tc.type === 'none')) out.tool_choice = tc;
  if (isObject(body.metadata) && typeof body.metadata.user_id === 'string') out.metadata = { user_id: body.metadata.user_id };
  else if (typeof body.user === 'string') out.metadata = { user_id: body.user };
  // Non-standard passthrough for clients that know they talk to Anthropic through Hecate.
  if (isObject(body.thinking)) out.thinking = body.thinking;
  else if (typeof body.reasoning_effort === 'string' && THINKING_BUDGET[body.reasoning_effort] !== undefined) {
    // OpenAI's reasoning effort as extended thinking: a budget below max_tokens, and no sampling overrides (Anthropic
    // refuses temperature/top_p with thinking on).
    const budget = THINKING_BUDGET[body.reasoning_effort];
    out.thinking = { type: 'enabled', budget_tokens: budget };
    if ((out.max_tokens as number) <= budget) out.max_tokens = budget + (out.max_tokens as number);
    delete out.temperature;
    delete out.top_p;
  }
  return out;
}

/** Does this message carry Hecate's own fields (docs/api.md §1: `content_blocks`, `tool_error`)? Two property reads. */
export const hasHecateMessageFields = (m: Json): boolean => m.content_blocks !== undefined || m.tool_error !== undefined;

/**
 * The messages with Hecate's own fields removed, for OpenAI-protocol upstreams (OpenAI rejects unknown
 * message fields). Other fields, known or not, are kept; messages without Hecate fields are not copied.
 * An assistant message given only as `content_blocks` keeps their text as its content. A tool message's
 * `tool_error` has no OpenAI equivalent: its content (the error text) is what the model sees.
 */
export function withoutHecateMessageFields(messages: unknown[]): unknown[] {
  return messages.map((m) => {
    if (!isObject(m) || !hasHecateMessageFields(m)) return m;
    const { content_blocks: blocks, tool_error: _toolError, ...rest } = m;
    // The text of the blocks stands in for a missing content (with or without tool calls beside it).
    if ((rest.content === undefined || rest.content === null) && Array.isArray(blocks)) {
      const text = blocks.map((b) => (isObject(b) && b.type === 'text' && typeof b.text === 'string' ? b.text : '')).join('');
      if (text !== '') rest.content = text;
    }
    return rest;
  });
}

const numberOr = (v: unknown, fallback: number): number => (typeof v === 'number' && v > 0 ? Math.floor(v) : fallback);

function anthropicBlocksToOpenaiContent(blocks: Json[]): unknown {
  const parts: Json[] = [];
  let allText = true;
  for (const b of blocks) {
    if (b.type === 'text' && typeof b.text === 'string') parts.push({ type: 'text', text: b.text });
    else if (b.type === 'image' && isObject(b.source)) {
      allText = false;
      const s = b.source;
      const url = s.type === 'base64' ? `data:${String(s.media_type)};base64,${String(s.data)}` : String(s.url ?? '');
      parts.push({ type: 'image_url', image_url: { url } });
    } else if (b.type === 'document' && isObject(b.source) && b.source.type === 'text') {
      parts.push({ type: 'text', text: String(b.source.data ?? '') });
    }
  }
  if (allText) return parts.map((p) => p.text as string).join('\n');
  return parts;
}

function toolResultContent(content: unknown): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) {
    return content.map((c) => (isObject(c) && c.type === 'text' ? String(c.text ?? '') : isObject(c) ? JSON.stringify(c) : String(c))).join('\n');
  }
  return content === undefined ? '' : JSON.stringify(content);
}

/**
 * Anthropic Messages request → OpenAI Chat Completions request: `system` (and `system` messages) → system messages; tool_use →
 * tool_calls; tool_result → tool messages (placed before the rest of that user turn; `is_error` → content
 * prefixed with "Error: "); images → image_url
 * parts; thinking blocks are dropped (OpenAI-protocol upstreams cannot take them back).
 */
export function anthropicToOpenaiRequest(
  body: Json,
  model: string,
  stream: boolean,
  opts: { maxTokensField?: 'max_tokens' | 'max_completion_tokens' } = {},
): Json {
  const messages: Json[] = [];
  const sys = body.system;
  const systemText = typeof sys === 'string' ? sys : Array.isArray(sys) ? sys.map((b) => (isObject(b) ? String(b.text ?? '') : '')).join('\n') : '';
  if (systemText) messages.push({ role: 'system', content: systemText });
  for (const m of Array.isArray(body.messages) ? body.messages : []) {
    if (!isObject(m)) continue;
    const blocks: Json[] = typeof m.content === 'string' ? [{ type: 'text', text: m.content }] : Array.isArray(m.content) ? m.content.filter(isObject) : [];
    if (m.role === 'system') {
      const text = blocks
        .filter((b) => b.type === 'text')
        .map((b) => String(b.text ?? ''))
        .join('\n');
      if (text) messages.push({ role: 'system', content: text });
    } else if (m.role === 'assistant') {
      const text = blocks
        .filter((b) => b.type === 'text')
        .map((b) => String(b.text ?? ''))
        .join('');
      const calls = blocks
        .filter((b) => b.type === 'tool_use')
        .map((b) => ({ id: String(b.id ?? ''), type: 'function', function: { name: String(b.name ?? ''), arguments: JSON.stringify(b.input ?? {}) } }));
      const msg: Json = { role: 'assistant', content: text === '' && calls.length > 0 ? null : text };
      if (calls.length > 0) msg.tool_calls = calls;
      messages.push(msg);
    } else {
      for (const b of blocks) {
        if (b.type === 'tool_result') {
          const content = toolResultContent(b.content);
          // OpenAI tool messages have no error flag (and OpenAI rejects Hecate's `tool_error`): a failed result
          // keeps its error text as the content, prefixed with "Error: " so the model still sees that it failed.
          messages.push({ role: 'tool', tool_call_id: String(b.tool_use_id ?? ''), content: b.is_error === true ? `Error: ${content}` : content });
        }
      }
      const rest = blocks.filter((b) => b.type !== 'tool_result');
      if (rest.length > 0) messages.push({ role: 'user', content: anthropicBlocksToOpenaiContent(rest) });
    }
  }
  const out: Json = { model, messages };
  const maxTokens = body.max_tokens;
  if (typeof maxTokens === 'number') out[opts.maxTokensField ?? 'max_tokens'] = maxTokens;
  if (stream) {
    out.stream = true;
    out.stream_options = { include_usage: true };
  }
  if (typeof body.temperature === 'number') out.temperature = body.temperature;
  if (typeof body.top_p === 'number') out.top_p = body.top_p;
  if (Array.isArray(body.stop_sequences) && body.stop_sequences.length > 0) out.stop = body.stop_sequences;
  if (Array.isArray(body.tools) && body.tools.length > 0) {
    out.tools = body.tools
      .filter(isObject)
      .filter((t) => typeof t.name === 'string' && (t.type === undefined || t.type === 'custom'))
      .map((t) => ({
        type: 'function',
        function: { name: t.name, ...(t.description ? { description: t.description } : {}), parameters: t.input_schema ?? { type: 'object', properties: {} } },
      }));
  }
  const tc = body.tool_choice;
  if (isObject(tc)) {
    if (tc.type === 'auto') out.tool_choice = 'auto';
    else if (tc.type === 'any') out.tool_choice = 'required';
    else if (tc.type === 'none') out.tool_choice = 'none';
    else if (tc.type === 'tool' && typeof tc.name === 'string') out.tool_choice = { type: 'function', function: { name: tc.name } };
    if (tc.disable_parallel_tool_use === true && out.tools) out.parallel_tool_calls = false;
  }
  if (isObject(body.metadata) && typeof body.metadata.user_id === 'string') out.user = body.metadata.user_id;
  return out;
}
