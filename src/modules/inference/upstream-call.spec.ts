import { RuntimeProvider } from '@modules/providers/runtime-provider';
import { UpstreamError } from '@modules/providers/upstream-error';
import type { Json, WireProtocol } from './protocol/normalized';
import { hasHecateMessageFields } from './protocol/request-translation';
import { PreparedRequest, UpstreamBody, upstreamBody } from './upstream-call';

/** A PreparedRequest as a /v1 edge's validator builds it (the validator itself lives in gateway/). */
function prepareRequest(protocol: WireProtocol, body: Json, headers: Record<string, string>): PreparedRequest {
  const so = body.stream_options as Json | undefined;
  const forward = protocol === 'anthropic' && headers['anthropic-beta'] ? { 'anthropic-beta': headers['anthropic-beta'] } : undefined;
  return {
    protocol,
    body,
    stream: body.stream === true,
    model: body.model as string | undefined,
    provider: body.provider as string | undefined,
    needsTools: Array.isArray(body.tools) && body.tools.length > 0,
    needsImages: false,
    clientWantsUsage: so?.include_usage === true,
    hecateMessageFields: protocol === 'openai' && (body.messages as Json[]).some(hasHecateMessageFields),
    forwardHeaders: forward,
  };
}

const provider = (protocol: 'openai' | 'anthropic') =>
  new RuntimeProvider(
    {
      id: 'p',
      presetId: null,
      customName: null,
      kind: 'local',
      protocol,
      baseUrl: 'http://127.0.0.1:9/v1',
      defaultModel: undefined,
      apiKey: undefined,
      enabled: true,
      source: 'env',
      envConfigured: true,
      createdAt: new Date(),
      updatedAt: new Date(),
    },
    { allowPrivate: true, selfPort: 1 },
    { connectMs: 1, firstByteMs: 1, idleMs: 1 },
  );

describe('UpstreamBody', () => {
  it('cuts the usage out of the text without a full parse, even when the content mentions "usage"', () => {
    const text = JSON.stringify({
      id: 'x',
      choices: [{ message: { content: 'say "usage": {1} }' } }],
      usage: { prompt_tokens: 3, completion_tokens: 4, prompt_tokens_details: { cached_tokens: 1 } },
      fp: 'x',
    });
    expect(new UpstreamBody(text, provider('openai')).usage()).toEqual({ prompt_tokens: 3, completion_tokens: 4, prompt_tokens_details: { cached_tokens: 1 } });
  });

  it('parses lazily and reports a body that is not JSON as a retryable protocol error', () => {
    const body = new UpstreamBody('{"usage": nope}', provider('openai'));
    expect(() => body.json).toThrow(UpstreamError);
    expect(() => body.usage()).toThrow(UpstreamError);
  });
});

describe('upstreamBody', () => {
  it('passes an OpenAI body through, setting the model, dropping `provider` and asking for usage on streams', () => {
    const req = prepareRequest('openai', { model: 'a', provider: 'p', stream: true, messages: [{ role: 'user', content: 'hi' }], logit_bias: { 1: 2 } }, {});
    expect(JSON.parse(upstreamBody(req, provider('openai'), 'b'))).toEqual({
      model: 'b',
      stream: true,
      stream_options: { include_usage: true },
      messages: [{ role: 'user', content: 'hi' }],
      logit_bias: { 1: 2 },
    });
  });

  it('asks an OpenAI upstream for usage on every stream, whatever the caller says it wants back (the router API)', () => {
    const messages = [{ role: 'user', content: 'hi' }];
    // InferenceService.stream(): the caller's body without stream_options, its consumer reading the usage deltas.
    const req = { ...prepareRequest('openai', { model: 'b', stream: true, messages }, {}), stream: true, clientWantsUsage: true };
    expect(JSON.parse(upstreamBody(req, provider('openai'), 'b'))).toEqual({ model: 'b', stream: true, stream_options: { include_usage: true }, messages });
    const asked = prepareRequest('openai', { model: 'b', stream: true, stream_options: { include_usage: true }, messages }, {});
    expect(upstreamBody(asked, provider('openai'), 'b')).toBe(JSON.stringify(asked.body));
  });

  it("makes the body's `stream` flag match the call (stream() without the flag, complete() with it)", () => {
    const messages = [{ role: 'user', content: 'hi' }];
    const streamed = { ...prepareRequest('anthropic', { model: 'b', max_tokens: 5, messages }, {}), stream: true };
    expect(JSON.parse(upstreamBody(streamed, provider('anthropic'), 'b'))).toEqual({ model: 'b', max_tokens: 5, stream: true, messages });
    const openaiStreamed = { ...prepareRequest('openai', { model: 'b', messages }, {}), stream: true };
    expect(JSON.parse(upstreamBody(openaiStreamed, provider('openai'), 'b'))).toEqual({
      model: 'b',
      stream: true,
      stream_options: { include_usage: true },
      messages,
    });
    const completed = { ...prepareRequest('openai', { model: 'b', stream: true, stream_options: { include_usage: true }, messages }, {}), stream: false };
    expect(JSON.parse(upstreamBody(completed, provider('openai'), 'b'))).toEqual({ model: 'b', stream: false, messages });
  });

  it('removes Hecate message fields before an OpenAI upstream, keeping unknown top-level fields', () => {
    const messages = [
      { role: 'user', content: 'hi' },
      { role: 'assistant', content: 'ok', content_blocks: [{ type: 'text', text: 'ok' }] },
      { role: 'tool', tool_call_id: 'c1', content: 'boom', tool_error: true },
    ];
    const req = prepareRequest('openai', { model: 'b', messages, logit_bias: { 1: 2 }, top_k_custom: 7 }, {});
    expect(req.hecateMessageFields).toBe(true);
    expect(JSON.parse(upstreamBody(req, provider('openai'), 'b'))).toEqual({
      model: 'b',
      messages: [
        { role: 'user', content: 'hi' },
        { role: 'assistant', content: 'ok' },
        { role: 'tool', tool_call_id: 'c1', content: 'boom' },
      ],
      logit_bias: { 1: 2 },
      top_k_custom: 7,
    });
    const plain = prepareRequest('openai', { model: 'b', messages: [messages[0]], top_k_custom: 7 }, {});
    expect(plain.hecateMessageFields).toBe(false);
    expect(upstreamBody(plain, provider('openai'), 'b')).toBe(JSON.stringify(plain.body));
  });

  it('translates across protocols', () => {
    const req = prepareRequest('anthropic', { model: 'a', max_tokens: 5, messages: [{ role: 'user', content: 'hi' }] }, { 'anthropic-beta': 'x' });
    expect(JSON.parse(upstreamBody(req, provider('openai'), 'b'))).toEqual({ model: 'b', max_tokens: 5, messages: [{ role: 'user', content: 'hi' }] });
    expect(req.forwardHeaders).toEqual({ 'anthropic-beta': 'x' });
  });
});
