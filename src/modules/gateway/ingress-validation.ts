import { BadGatewayRequestError } from './gateway.errors';
import { hasHecateMessageFields, isObject, Json, PreparedRequest, WireProtocol } from '@modules/inference';

const OPENAI_ROLES = new Set(['system', 'developer', 'user', 'assistant', 'tool', 'function']);
/** Anthropic's `system` role inside `messages` (mid-conversation system text; Claude Code sends it) passes too. */
const ANTHROPIC_ROLES = new Set(['user', 'assistant', 'system']);

function hasImage(messages: unknown[], protocol: WireProtocol): boolean {
  const part = protocol === 'openai' ? 'image_url' : 'image';
  for (const m of messages) {
    const content = (m as Json).content;
    if (!Array.isArray(content)) continue;
    for (const p of content) if (isObject(p) && p.type === part) return true;
  }
  return false;
}

type Headers = Record<string, string | string[] | undefined>;

/**
 * Hand validation of the few fields the gateway needs (the rest of the body passes through untouched):
 * class-validator on multi-megabyte chat bodies would cost more than the whole proxy hop.
 */
export function prepareRequest(protocol: WireProtocol, body: unknown, headers: Headers): PreparedRequest {
  if (!isObject(body)) throw new BadGatewayRequestError('request body must be a JSON object');
  const messages = body.messages;
  if (!Array.isArray(messages) || messages.length === 0) throw new BadGatewayRequestError('messages must be a non-empty array', 'messages');
  const openai = protocol === 'openai';
  const roles = openai ? OPENAI_ROLES : ANTHROPIC_ROLES;
  let hecateFields = false;
  for (let i = 0; i < messages.length; i++) {
    const m = messages[i];
    if (!isObject(m) || typeof m.role !== 'string' || !roles.has(m.role)) {
      throw new BadGatewayRequestError(`messages[${i}].role must be one of ${[...roles].join(', ')}`, `messages[${i}].role`);
    }
    if (openai && !hecateFields) hecateFields = hasHecateMessageFields(m);
  }
  if (body.model !== undefined && (typeof body.model !== 'string' || body.model === ''))
    throw new BadGatewayRequestError('model must be a non-empty string', 'model');
  if (body.stream !== undefined && body.stream !== null && typeof body.stream !== 'boolean')
    throw new BadGatewayRequestError('stream must be a boolean', 'stream');
  if (body.provider !== undefined && (typeof body.provider !== 'string' || body.provider === ''))
    throw new BadGatewayRequestError('provider must be a non-empty string', 'provider');
  if (body.tools !== undefined && body.tools !== null && !Array.isArray(body.tools)) throw new BadGatewayRequestError('tools must be an array', 'tools');
  if (protocol === 'anthropic' && body.max_tokens !== undefined && (typeof body.max_tokens !== 'number' || body.max_tokens < 1)) {
    throw new BadGatewayRequestError('max_tokens must be a positive integer', 'max_tokens');
  }
  const so = body.stream_options;
  let forward: Record<string, string> | undefined;
  if (protocol === 'anthropic') {
    const version = headers['anthropic-version'];
    const beta = headers['anthropic-beta'];
    if (typeof version === 'string' || typeof beta === 'string') {
      forward = {};
      if (typeof version === 'string') forward['anthropic-version'] = version;
      if (typeof beta === 'string') forward['anthropic-beta'] = beta;
    }
  }
  return {
    protocol,
    body,
    stream: body.stream === true,
    model: body.model as string | undefined,
    provider: body.provider as string | undefined,
    needsTools: Array.isArray(body.tools) && body.tools.length > 0,
    needsImages: hasImage(messages, protocol),
    clientWantsUsage: isObject(so) && so.include_usage === true,
    hecateMessageFields: hecateFields,
    forwardHeaders: forward,
  };
}
