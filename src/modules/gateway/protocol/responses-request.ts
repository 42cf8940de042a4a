import { randomHex } from '@core/context/random-hex';
import { isObject, Json, PreparedRequest } from '@modules/inference';
import { BadGatewayRequestError } from '../gateway.errors';

/**
 * The OpenAI Responses API on the way in: validation of what the gateway reads, the request's input items
 * normalized (ids given, string content made parts) for storage and replay, and the Chat Completions translation
 * every upstream but a Responses-speaking one receives. Conversation state (`previous_response_id`) is Hecate's:
 * the stored items of the chain are replayed as input, so any provider can continue any response.
 */

const MESSAGE_ROLES = new Set(['user', 'assistant', 'system', 'developer']);
/** The request fields a response object echoes back (with the API's defaults). */
const ECHOED = [
  'instructions',
  'max_output_tokens',
  'metadata',
  'parallel_tool_calls',
  'reasoning',
  'temperature',
  'text',
  'tool_choice',
  'tools',
  'top_p',
  'user',
];
/** Fields Hecate consumes and never forwards upstream. */
const HECATE_FIELDS = ['provider', 'session_id', 'previous_response_id', 'store'];

export type ResponseItem = Json & { type: string; id: string };

export interface PreparedResponsesRequest {
  prepared: PreparedRequest;
  /** This request's own input items, normalized (what `input_items` lists and later responses replay). */
  inputItems: ResponseItem[];
  /** The request's echoed parameters, for the response object. */
  params: Json;
  store: boolean;
  previousResponseId: string | undefined;
  /** Hosted tools the chat translation leaves out (sent only to Responses upstreams). */
  droppedTools: string[];
}

export const itemId = (prefix: string): string => `${prefix}_${randomHex(24)}`;

function bad(message: string, param: string): never {
  throw new BadGatewayRequestError(message, param);
}

function normalizePart(part: unknown, role: string, at: string): Json {
  if (!isObject(part) || typeof part.type !== 'string') bad(`${at} must be an object with a type`, at);
  switch (part.type) {
    case 'input_text':
    case 'output_text':
      if (typeof part.text !== 'string') bad(`${at}.text must be a string`, `${at}.text`);
      return part.type === 'output_text' ? { type: 'output_text', text: part.text, annotations: [] } : { type: 'input_text', text: part.text };
    case 'refusal':
      return { type: 'refusal', refusal: String(part.refusal ?? '') };
    case 'input_image':
      if (role === 'assistant') bad(`${at}: an assistant message cannot hold images`, at);
      if (typeof part.image_url !== 'string' || part.image_url === '')
        bad(`${at}.image_url must be a URL or a data URL (file_id is not supported)`, `${at}.image_url`);
      return { type: 'input_image', image_url: part.image_url, detail: typeof part.detail === 'string' ? part.detail : 'auto' };
    default:
      return bad(`${at}.type ${JSON.stringify(part.type)} is not supported (input_text, output_text, refusal, input_image)`, `${at}.type`);
  }
}

/** One input item, checked and normalized: a message, a function call, its output, or a reasoning item. */
function normalizeItem(item: unknown, at: string): ResponseItem {
  if (!isObject(item)) bad(`${at} must be an object`, at);
  const type = item.type ?? (typeof item.role === 'string' ? 'message' : undefined);
  switch (type) {
    case 'message': {
      const role = item.role;
      if (typeof role !== 'string' || !MESSAGE_ROLES.has(role)) bad(`${at}.role must be one of ${[...MESSAGE_ROLES].join(', ')}`, `${at}.role`);
      const c = item.content;
      let content: Json[];
      if (typeof c === 'string') content = [role === 'assistant' ? { type: 'output_text', text: c, annotations: [] } : { type: 'input_text', text: c }];
      else if (Array.isArray(c)) content = c.map((p, i) => normalizePart(p, role, `${at}.content[${i}]`));
      else bad(`${at}.content must be a string or an array of parts`, `${at}.content`);
      const out: ResponseItem = { id: typeof item.id === 'string' ? item.id : itemId('msg'), type: 'message', role, content };
      if (role === 'assistant') out.status = 'completed';
      return out;
    }
    case 'function_call':
      if (typeof item.call_id !== 'string' || item.call_id === '') bad(`${at}.call_id must be a non-empty string`, `${at}.call_id`);
      if (typeof item.name !== 'string' || item.name === '') bad(`${at}.name must be a non-empty string`, `${at}.name`);
      if (typeof item.arguments !== 'string') bad(`${at}.arguments must be a JSON string`, `${at}.arguments`);
      return {
        id: typeof item.id === 'string' ? item.id : itemId('fc'),
        type: 'function_call',
        status: 'completed',
        call_id: item.call_id,
        name: item.name,
        arguments: item.arguments,
      };
    case 'function_call_output': {
      if (typeof item.call_id !== 'string' || item.call_id === '') bad(`${at}.call_id must be a non-empty string`, `${at}.call_id`);
      const output = item.output;
      if (typeof output !== 'string' && !Array.isArray(output)) bad(`${at}.output must be a string or an array of parts`, `${at}.output`);
      return { id: typeof item.id === 'string' ? item.id : itemId('fco'), type: 'function_call_output', status: 'completed', call_id: item.call_id, output };
    }
    case 'reasoning':
      return { ...item, id: typeof item.id === 'string' ? item.id : itemId('rs'), type: 'reasoning' };
    default:
      return bad(`${at}.type ${JSON.stringify(type)} is not supported (message, function_call, function_call_output, reasoning)`, `${at}.type`);
  }
}

const partsText = (parts: unknown): string =>
  Array.isArray(parts)
    ? parts
        .filter(isObject)
        .map((p) => (typeof p.text === 'string' ? p.text : typeof p.refusal === 'string' ? p.refusal : ''))
        .join('')
    : typeof parts === 'string'
      ? parts
      : '';

/** Items (history, then this request's) → Chat Completions messages. Reasoning items are not replayed. */
export function itemsToMessages(instructions: unknown, items: ResponseItem[]): Json[] {
  const messages: Json[] = [];
  if (typeof instructions === 'string' && instructions !== '') messages.push({ role: 'system', content: instructions });
  for (const item of items) {
    const last = messages.at(-1);
    if (item.type === 'message') {
      const role = item.role === 'developer' ? 'system' : String(item.role);
      const content = item.content as Json[];
      if (role === 'assistant') messages.push({ role, content: partsText(content) });
      else if (content.every((p) => p.type !== 'input_image')) messages.push({ role, content: partsText(content) });
      else
        messages.push({
          role,
          content: content.map((p) =>
            p.type === 'input_image' ? { type: 'image_url', image_url: { url: p.image_url, detail: p.detail } } : { type: 'text', text: partsText([p]) },
          ),
        });
    } else if (item.type === 'function_call') {
      const call = { id: item.call_id, type: 'function', function: { name: item.name, arguments: item.arguments } };
      if (last?.role === 'assistant') {
        last.tool_calls = [...(Array.isArray(last.tool_calls) ? last.tool_calls : []), call];
        if (last.content === '') last.content = null;
      } else messages.push({ role: 'assistant', content: null, tool_calls: [call] });
    } else if (item.type === 'function_call_output') {
      messages.push({ role: 'tool', tool_call_id: item.call_id, content: partsText(item.output) });
    }
  }
  return messages;
}

/**
 * Function tools as chat tools. Hosted tools (web_search, file_search, namespaces, …) only a Responses upstream can run:
 * they go to such an upstream as they are and are left out of the translation (named in `dropped`).
 */
function translateTools(tools: unknown): { tools: Json[]; dropped: string[] } {
  if (tools === undefined || tools === null) return { tools: [], dropped: [] };
  if (!Array.isArray(tools)) bad('tools must be an array', 'tools');
  const out: Json[] = [];
  const dropped: string[] = [];
  tools.forEach((t, i) => {
    if (!isObject(t) || typeof t.type !== 'string') bad(`tools[${i}] must be an object with a type`, `tools[${i}].type`);
    if (t.type !== 'function') {
      dropped.push(typeof t.name === 'string' ? `${t.type}:${t.name}` : t.type);
      return;
    }
    if (typeof t.name !== 'string' || t.name === '') bad(`tools[${i}].name must be a non-empty string`, `tools[${i}].name`);
    const fn: Json = { name: t.name };
    if (typeof t.description === 'string') fn.description = t.description;
    if (isObject(t.parameters)) fn.parameters = t.parameters;
    if (typeof t.strict === 'boolean') fn.strict = t.strict;
    out.push({ type: 'function', function: fn });
  });
  return { tools: out, dropped };
}

function translateToolChoice(tc: unknown): unknown {
  if (tc === undefined || tc === null) return undefined;
  if (tc === 'auto' || tc === 'none' || tc === 'required') return tc;
  if (isObject(tc) && tc.type === 'function' && typeof tc.name === 'string') return { type: 'function', function: { name: tc.name } };
  return bad('tool_choice must be "auto", "none", "required" or {"type":"function","name":…}', 'tool_choice');
}

function translateFormat(text: unknown): Json | undefined {
  const f = isObject(text) && isObject(text.format) ? text.format : undefined;
  if (!f || f.type === 'text') return undefined;
  if (f.type === 'json_object') return { type: 'json_object' };
  if (f.type === 'json_schema') return { type: 'json_schema', json_schema: { name: f.name ?? 'response', schema: f.schema, strict: f.strict === true } };
  return bad('text.format.type must be text, json_object or json_schema', 'text.format.type');
}

const positiveInt = (v: unknown): boolean => typeof v === 'number' && Number.isInteger(v) && v > 0;

/**
 * Validates a `POST /v1/responses` body and builds what the router sends: the Chat Completions translation as the
 * request body (every upstream's common ground; the router translates it on to Anthropic), the Responses body
 * itself for upstreams that speak it (history inlined, `store: false`: the conversation lives here, not there).
 */
export function prepareResponsesRequest(body: unknown, history: ResponseItem[]): PreparedResponsesRequest {
  if (!isObject(body)) throw new BadGatewayRequestError('request body must be a JSON object');
  const input = body.input;
  let inputItems: ResponseItem[];
  if (typeof input === 'string') inputItems = [normalizeItem({ role: 'user', content: input }, 'input')];
  else if (Array.isArray(input) && input.length > 0) inputItems = input.map((it, i) => normalizeItem(it, `input[${i}]`));
  else return bad('input must be a string or a non-empty array of items', 'input');
  if (body.model !== undefined && (typeof body.model !== 'string' || body.model === '')) bad('model must be a non-empty string', 'model');
  if (body.stream !== undefined && body.stream !== null && typeof body.stream !== 'boolean') bad('stream must be a boolean', 'stream');
  if (body.store !== undefined && body.store !== null && typeof body.store !== 'boolean') bad('store must be a boolean', 'store');
  if (body.provider !== undefined && (typeof body.provider !== 'string' || body.provider === '')) bad('provider must be a non-empty string', 'provider');
  if (body.instructions !== undefined && body.instructions !== null && typeof body.instructions !== 'string')
    bad('instructions must be a string', 'instructions');
  if (body.max_output_tokens !== undefined && body.max_output_tokens !== null && !positiveInt(body.max_output_tokens))
    bad('max_output_tokens must be a positive integer', 'max_output_tokens');
  const prev = body.previous_response_id;
  if (prev !== undefined && prev !== null && (typeof prev !== 'string' || prev === ''))
    bad('previous_response_id must be a non-empty string', 'previous_response_id');

  const stream = body.stream === true;
  const { tools, dropped } = translateTools(body.tools);
  const all = [...history, ...inputItems];
  const messages = itemsToMessages(body.instructions, all);
  const chat: Json = { messages, stream };
  if (typeof body.model === 'string') chat.model = body.model;
  if (tools.length > 0) chat.tools = tools;
  const toolChoice = translateToolChoice(body.tool_choice);
  if (toolChoice !== undefined && (tools.length > 0 || toolChoice === 'none')) chat.tool_choice = toolChoice;
  if (typeof body.parallel_tool_calls === 'boolean' && tools.length > 0) chat.parallel_tool_calls = body.parallel_tool_calls;
  if (positiveInt(body.max_output_tokens)) chat.max_tokens = body.max_output_tokens;
  if (typeof body.temperature === 'number') chat.temperature = body.temperature;
  if (typeof body.top_p === 'number') chat.top_p = body.top_p;
  if (isObject(body.reasoning) && typeof body.reasoning.effort === 'string') chat.reasoning_effort = body.reasoning.effort;
  const format = translateFormat(body.text);
  if (format) chat.response_format = format;
  if (typeof body.user === 'string') chat.user = body.user;

  // History replayed without ids (nothing is stored upstream); the client's own items as it sent them.
  const replay = history.filter((i) => i.type !== 'reasoning').map(({ id: _id, ...rest }) => rest);
  const native: Json = { ...body, input: [...replay, ...(typeof input === 'string' ? [{ role: 'user', content: input }] : input)], store: false };
  for (const f of HECATE_FIELDS) if (f !== 'store') delete native[f];
  const params: Json = {};
  for (const f of ECHOED) if (body[f] !== undefined) params[f] = body[f];

  return {
    prepared: {
      protocol: 'openai',
      body: chat,
      stream,
      model: body.model as string | undefined,
      provider: body.provider as string | undefined,
      needsTools: tools.length > 0,
      needsImages: all.some((i) => i.type === 'message' && (i.content as Json[]).some((p) => p.type === 'input_image')),
      clientWantsUsage: false,
      hecateMessageFields: false,
      forwardHeaders: undefined,
      responses: native,
    },
    inputItems,
    params,
    store: body.store !== false,
    previousResponseId: typeof prev === 'string' ? prev : undefined,
    droppedTools: dropped,
  };
}
