import type { Dispatcher } from 'undici';
import { LlmClient } from '@modules/providers';
import type { RuntimeProvider } from '@modules/providers';
import { ChunkReader } from './chunk-reader';
import type { CancelSignal } from './client-abort';
import { transportError, UpstreamError } from '@modules/providers';
import { UnsendableRequestError } from './inference.errors';
import { isObject, Json, WireProtocol } from './protocol/normalized';
import { anthropicToOpenaiRequest, openaiToAnthropicRequest, withoutHecateMessageFields } from './protocol/request-translation';

/** A validated inbound request: the body as the client sent it plus the few fields routing needs. */
export interface PreparedRequest {
  protocol: WireProtocol;
  body: Json;
  stream: boolean;
  model: string | undefined;
  provider: string | undefined;
  needsTools: boolean;
  needsImages: boolean;
  /** OpenAI inbound: did the client ask for `stream_options.include_usage`? */
  clientWantsUsage: boolean;
  /** OpenAI inbound: does some message carry Hecate's `content_blocks` / `tool_error` (removed for OpenAI upstreams)? */
  hecateMessageFields: boolean;
  /** Headers to forward (anthropic-version / anthropic-beta from Anthropic clients). */
  forwardHeaders: Record<string, string> | undefined;
  /**
   * A Responses API request (`/v1/responses`): `body` is its Chat Completions translation (sent to every other
   * upstream), `responses` the Responses body itself, sent as it is (model set) to upstreams that speak the API.
   */
  responses?: Json;
  /**
   * The partial reply of an earlier attempt of this call (a turn taken over from a dead worker): sent as a trailing
   * assistant message to a candidate whose model continues prefills, left out for any other (which answers anew).
   */
  continuation?: string;
}

/** Does this attempt go to the provider's Responses API (native passthrough) rather than its chat endpoint? */
export const sendsResponses = (req: PreparedRequest, provider: RuntimeProvider): boolean => req.responses !== undefined && provider.responsesPath !== undefined;

/**
 * Builds the upstream body: passthrough (model set, `provider` removed, `stream` made to match the call) or
 * translated. OpenAI-protocol streams always ask for usage (the ledger needs it): decided from the body
 * itself, not from `clientWantsUsage`, which only says whether the client gets the usage chunk back.
 */
export function upstreamBody(req: PreparedRequest, provider: RuntimeProvider, model: string): string {
  if (req.responses !== undefined && sendsResponses(req, provider)) return JSON.stringify({ ...req.responses, model, stream: req.stream });
  const body = req.body;
  if (req.protocol === provider.protocol) {
    const so = body.stream_options;
    const needsUsageOption = req.protocol === 'openai' && req.stream && !(isObject(so) && so.include_usage === true);
    const streamMismatch = (body.stream === true) !== req.stream;
    const strip = req.protocol === 'openai' && req.hecateMessageFields;
    if (body.model === model && body.provider === undefined && !needsUsageOption && !streamMismatch && !strip) return JSON.stringify(body);
    const copy: Json = { ...body, model };
    delete copy.provider;
    // Unknown top-level fields pass through; only Hecate's message extensions are removed.
    if (strip) copy.messages = withoutHecateMessageFields(body.messages as unknown[]);
    if (streamMismatch) {
      // The in-process router API decides streaming by the method called, not by the body's flag.
      copy.stream = req.stream;
      if (!req.stream) delete copy.stream_options;
    }
    // The extra usage chunk is removed again on the way out when the client did not ask for it.
    if (needsUsageOption) copy.stream_options = { ...(isObject(so) ? so : {}), include_usage: true };
    return JSON.stringify(copy);
  }
  if (req.protocol === 'openai') return JSON.stringify(openaiToAnthropicRequest(body, model, req.stream));
  return JSON.stringify(
    anthropicToOpenaiRequest(body, model, req.stream, { maxTokensField: provider.presetId === 'openai' ? 'max_completion_tokens' : 'max_tokens' }),
  );
}

export interface UpstreamTimeouts {
  firstByteMs: number;
  idleMs: number;
}

function forwardHeaders(req: PreparedRequest, provider: RuntimeProvider): Record<string, string> | undefined {
  if (provider.protocol !== 'anthropic' || req.protocol !== 'anthropic') return undefined;
  return req.forwardHeaders;
}

/** One upstream attempt: where, with what, and how to report progress. */
export interface AttemptTarget {
  req: PreparedRequest;
  provider: RuntimeProvider;
  model: string;
  timeouts: UpstreamTimeouts;
  signal: CancelSignal | undefined;
  onHeaders: () => void;
}

/** The upstream body, or UnsendableRequestError: a body we cannot serialise is the client's fault, not the provider's. */
function serialise(req: PreparedRequest, provider: RuntimeProvider, model: string): string {
  try {
    return upstreamBody(req, provider, model);
  } catch (err) {
    throw new UnsendableRequestError(err instanceof RangeError ? 'it nests too deeply' : err instanceof Error ? err.message : String(err));
  }
}

async function send({ req, provider, model, timeouts, signal, onHeaders }: AttemptTarget) {
  const res = await LlmClient.complete(provider, serialise(req, provider, model), {
    signal,
    headers: forwardHeaders(req, provider),
    firstByteMs: timeouts.firstByteMs,
    idleMs: timeouts.idleMs,
    path: sendsResponses(req, provider) ? provider.responsesPath : undefined,
  });
  onHeaders();
  return res;
}

/**
 * A non-streaming upstream body. Passthrough answers forward `text` untouched and only need the usage, which
 * is cut out of the text; the full parse happens only when something asks for `json` (translation, the
 * router's own callers).
 */
export class UpstreamBody {
  private parsed: Json | undefined;

  constructor(
    readonly text: string,
    private readonly provider: RuntimeProvider,
  ) {}

  get json(): Json {
    if (this.parsed === undefined) {
      let value: unknown;
      try {
        value = JSON.parse(this.text);
      } catch {
        throw new UpstreamError('protocol', `${this.provider.id} returned a body that is not JSON`, { retryable: true });
      }
      if (typeof value !== 'object' || value === null || Array.isArray(value))
        throw new UpstreamError('protocol', `${this.provider.id} returned an unexpected body`, { retryable: true });
      this.parsed = value as Json;
    }
    return this.parsed;
  }

  /** The `usage` object: sliced out of the text when possible (it comes last in both protocols). */
  usage(): unknown {
    if (this.parsed !== undefined) return this.parsed.usage;
    const sliced = sliceObject(this.text, this.text.lastIndexOf('"usage"'));
    if (sliced !== undefined) {
      try {
        return JSON.parse(sliced) as unknown;
      } catch {
        // fall through to the full parse
      }
    }
    return this.json.usage;
  }
}

/** The balanced `{…}` after the key at `keyAt` (string-aware), or undefined. */
function sliceObject(text: string, keyAt: number): string | undefined {
  if (keyAt <= 0 || text.charCodeAt(keyAt - 1) === 92) return undefined;
  const start = text.indexOf('{', keyAt);
  if (start === -1 || !/^"usage"\s*:\s*$/.test(text.slice(keyAt, start))) return undefined;
  let depth = 0;
  let inString = false;
  for (let i = start; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 92) i++;
      else if (c === 34) inString = false;
    } else if (c === 34) inString = true;
    else if (c === 123) depth++;
    else if (c === 125 && --depth === 0) return text.slice(start, i + 1);
  }
  return undefined;
}

const looksLikeObject = (text: string): boolean => /^\s*\{/.test(text) && /\}\s*$/.test(text);

/** Non-streaming call: the whole upstream body (parsed lazily). */
export async function callComplete(target: AttemptTarget): Promise<UpstreamBody> {
  const { provider, signal } = target;
  const res = await send(target);
  let text: string;
  try {
    text = await res.body.text();
  } catch (err) {
    throw transportError(provider, err, signal);
  }
  if (!looksLikeObject(text)) throw new UpstreamError('protocol', `${provider.id} returned a body that is not a JSON object`, { retryable: true });
  return new UpstreamBody(text, provider);
}

export interface UpstreamStream {
  first: Buffer;
  reader: ChunkReader;
  body: Dispatcher.ResponseData['body'];
}

/** Streaming call: resolves once the first body chunk arrived (the commit point for failover). */
export async function callStream(target: AttemptTarget): Promise<UpstreamStream> {
  const { provider, signal } = target;
  const res = await send(target);
  const reader = new ChunkReader(res.body);
  let first: Buffer | undefined;
  try {
    first = await reader.next();
  } catch (err) {
    res.body.destroy();
    throw transportError(provider, err, signal);
  }
  if (!first) throw new UpstreamError('protocol', `${provider.id} ended the stream without data`, { retryable: true });
  return { first, reader, body: res.body };
}
