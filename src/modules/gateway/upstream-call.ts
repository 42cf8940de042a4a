import type { Dispatcher } from 'undici';
import { LlmClient } from '@modules/providers/llm-client';
import type { RuntimeProvider } from '@modules/providers/runtime-provider';
import type { CancelSignal } from './client-abort';
import { transportError, UpstreamError } from '@modules/providers/upstream-error';
import { Json, WireProtocol } from './protocol/normalized';
import { anthropicToOpenaiRequest, openaiToAnthropicRequest } from './protocol/request-translation';

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
  /** Headers to forward (anthropic-version / anthropic-beta from Anthropic clients). */
  forwardHeaders: Record<string, string> | undefined;
}

/** Builds the upstream body: passthrough (model set, `provider` removed) or translated. */
export function upstreamBody(req: PreparedRequest, provider: RuntimeProvider, model: string): string {
  const body = req.body;
  if (req.protocol === provider.protocol) {
    const needsUsageOption = req.protocol === 'openai' && req.stream && !req.clientWantsUsage;
    if (body.model === model && body.provider === undefined && !needsUsageOption) return JSON.stringify(body);
    const copy: Json = { ...body, model };
    delete copy.provider;
    // Usage is needed for the ledger; the extra usage chunk is removed again if the client did not ask for it.
    if (needsUsageOption) copy.stream_options = { ...(typeof body.stream_options === 'object' && body.stream_options ? body.stream_options : {}), include_usage: true };
    return JSON.stringify(copy);
  }
  if (req.protocol === 'openai') return JSON.stringify(openaiToAnthropicRequest(body, model, req.stream));
  return JSON.stringify(anthropicToOpenaiRequest(body, model, req.stream, { maxTokensField: provider.presetId === 'openai' ? 'max_completion_tokens' : 'max_tokens' }));
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

async function send({ req, provider, model, timeouts, signal, onHeaders }: AttemptTarget) {
  const res = await LlmClient.complete(provider, upstreamBody(req, provider, model), {
    signal,
    headers: forwardHeaders(req, provider),
    firstByteMs: timeouts.firstByteMs,
    idleMs: timeouts.idleMs,
  });
  onHeaders();
  return res;
}

/** Non-streaming call: the whole upstream body, parsed. */
export async function callComplete(target: AttemptTarget): Promise<{ text: string; json: Json }> {
  const { provider, signal } = target;
  const res = await send(target);
  let text: string;
  try {
    text = await res.body.text();
  } catch (err) {
    throw transportError(provider, err, signal);
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw new UpstreamError('protocol', `${provider.id} returned a body that is not JSON`, { retryable: true });
  }
  if (typeof json !== 'object' || json === null) throw new UpstreamError('protocol', `${provider.id} returned an unexpected body`, { retryable: true });
  return { text, json: json as Json };
}

export interface UpstreamStream {
  first: Buffer;
  iterator: AsyncIterator<Buffer>;
  body: Dispatcher.ResponseData['body'];
}

/** Streaming call: resolves once the first body chunk arrived (the commit point for failover). */
export async function callStream(target: AttemptTarget): Promise<UpstreamStream> {
  const { provider, signal } = target;
  const res = await send(target);
  const iterator = res.body[Symbol.asyncIterator]() as AsyncIterator<Buffer>;
  let first: IteratorResult<Buffer>;
  try {
    first = await iterator.next();
  } catch (err) {
    res.body.destroy();
    throw transportError(provider, err, signal);
  }
  if (first.done) throw new UpstreamError('protocol', `${provider.id} ended the stream without data`, { retryable: true });
  return { first: first.value, iterator, body: res.body };
}
