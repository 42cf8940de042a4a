import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import type { ServerProcess } from '../../support/server-process';
import { fakeUpstream, FakeUpstream, OPERATOR_TOKEN, providerEnv, startGateway } from './gateway-harness';

const OPENAI_KEY = 'sk-e2e-openai-proto-key-0002';
const ANTHROPIC_KEY = 'sk-ant-e2e-anthropic-key-0003';

describe('Anthropic-compatible ingress (/v1/messages) and cross-protocol translation', () => {
  let oai: FakeUpstream;
  let anth: FakeUpstream;
  let server: ServerProcess;
  let anthropic: Anthropic;
  let openai: OpenAI;

  beforeAll(async () => {
    oai = await fakeUpstream({ models: ['gpt-4o-mini'], requireKey: OPENAI_KEY });
    anth = await fakeUpstream({ models: ['claude-sonnet-4-5'], requireKey: ANTHROPIC_KEY });
    server = await startGateway({
      ...providerEnv('oai', oai, { key: OPENAI_KEY, kind: 'local' }),
      ...providerEnv('anth', anth, { key: ANTHROPIC_KEY, kind: 'local', protocol: 'anthropic' }),
    });
    anthropic = new Anthropic({ baseURL: server.url, apiKey: OPERATOR_TOKEN, maxRetries: 0 });
    openai = new OpenAI({ baseURL: `${server.url}/v1`, apiKey: OPERATOR_TOKEN, maxRetries: 0 });
  });
  afterEach(() => {
    oai.reset();
    anth.reset();
  });
  afterAll(async () => {
    await server?.stop();
    await oai?.close();
    await anth?.close();
  });

  const upstreams = [
    { label: 'an OpenAI-protocol upstream (translated)', model: 'gpt-4o-mini', up: () => oai, protocol: 'openai' },
    { label: 'an Anthropic-protocol upstream (native passthrough)', model: 'claude-sonnet-4-5', up: () => anth, protocol: 'anthropic' },
  ];

  describe.each(upstreams)('with the official @anthropic-ai/sdk against $label', ({ model, up, protocol }) => {
    it('creates a message', async () => {
      const { data: msg, response } = await anthropic.messages
        .create({ model, max_tokens: 64, system: 'be kind', messages: [{ role: 'user', content: 'hello there' }] })
        .withResponse();
      expect(msg.type).toBe('message');
      expect(msg.role).toBe('assistant');
      expect(msg.content).toEqual([{ type: 'text', text: 'echo: hello there' }]);
      expect(msg.stop_reason).toBe('end_turn');
      expect(msg.usage.input_tokens).toBeGreaterThan(0);
      expect(msg.usage.output_tokens).toBeGreaterThan(0);
      expect(response.headers.get('x-runtime-model')).toBe(model);
      const sent = up().requests.find((r) => r.method === 'POST')!;
      expect(sent.protocol).toBe(protocol);
      if (protocol === 'openai') expect((sent.body!.messages as Array<{ role: string }>)[0]).toEqual({ role: 'system', content: 'be kind' });
      else expect(sent.body!.system).toBe('be kind');
    });

    it('streams message_start … message_stop and assembles the text', async () => {
      up().script({ content: 'alpha beta gamma', chunks: 3 });
      const stream = anthropic.messages.stream({ model, max_tokens: 64, messages: [{ role: 'user', content: 'go' }] });
      const types: string[] = [];
      stream.on('streamEvent', (e) => types.push(e.type));
      const final = await stream.finalMessage();
      expect(final.content).toEqual([{ type: 'text', text: 'alpha beta gamma' }]);
      expect(final.usage.output_tokens).toBeGreaterThan(0);
      expect(types[0]).toBe('message_start');
      expect(types).toContain('content_block_start');
      expect(types).toContain('content_block_delta');
      expect(types.slice(-2)).toEqual(['message_delta', 'message_stop']);
    });

    it('round-trips tool use', async () => {
      up().script({ toolCalls: [{ name: 'get_weather', arguments: { city: 'Oslo' } }] });
      const tools: Anthropic.Tool[] = [
        { name: 'get_weather', description: 'weather', input_schema: { type: 'object', properties: { city: { type: 'string' } } } },
      ];
      const first = await anthropic.messages.create({ model, max_tokens: 64, tools, messages: [{ role: 'user', content: 'weather in Oslo?' }] });
      expect(first.stop_reason).toBe('tool_use');
      const use = first.content.find((b): b is Anthropic.ToolUseBlock => b.type === 'tool_use')!;
      expect(use).toMatchObject({ name: 'get_weather', input: { city: 'Oslo' } });
      up().script({ content: 'Sunny.' });
      const second = await anthropic.messages.create({
        model,
        max_tokens: 64,
        tools,
        messages: [
          { role: 'user', content: 'weather in Oslo?' },
          { role: 'assistant', content: first.content },
          { role: 'user', content: [{ type: 'tool_result', tool_use_id: use.id, content: '21°C, clear' }] },
        ],
      });
      expect(second.content).toEqual([{ type: 'text', text: 'Sunny.' }]);
      const sent = up().requests[up().requests.length - 1].body!;
      if (protocol === 'openai') {
        const msgs = sent.messages as Array<Record<string, unknown>>;
        expect(msgs[1]).toMatchObject({ role: 'assistant', tool_calls: [{ id: use.id, function: { name: 'get_weather', arguments: '{"city":"Oslo"}' } }] });
        expect(msgs[2]).toEqual({ role: 'tool', tool_call_id: use.id, content: '21°C, clear' });
        expect(sent.tools).toEqual([
          {
            type: 'function',
            function: { name: 'get_weather', description: 'weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } },
          },
        ]);
      } else {
        expect((sent.messages as Array<{ content: unknown }>)[2].content).toEqual([{ type: 'tool_result', tool_use_id: use.id, content: '21°C, clear' }]);
      }
    });

    it('streams tool use as a tool_use block with input_json_delta', async () => {
      up().script({ toolCalls: [{ name: 'lookup', arguments: { q: 'hecate' } }] });
      const stream = anthropic.messages.stream({
        model,
        max_tokens: 64,
        tools: [{ name: 'lookup', input_schema: { type: 'object' } }],
        messages: [{ role: 'user', content: 'find' }],
      });
      const final = await stream.finalMessage();
      expect(final.stop_reason).toBe('tool_use');
      expect(final.content.find((b) => b.type === 'tool_use')).toMatchObject({ name: 'lookup', input: { q: 'hecate' } });
    });

    it('returns thinking as a thinking block', async () => {
      up().script({ thinking: { text: 'Let me think.', signature: 'c2lnbmF0dXJl' }, content: 'Done.' });
      const msg = await anthropic.messages.create({ model, max_tokens: 64, messages: [{ role: 'user', content: 'think' }] });
      const thinking = msg.content.find((b) => b.type === 'thinking') as Anthropic.ThinkingBlock;
      expect(thinking.thinking).toBe('Let me think.');
      if (protocol === 'anthropic') expect(thinking.signature).toBe('c2lnbmF0dXJl');
      expect(msg.content.find((b) => b.type === 'text')).toEqual({ type: 'text', text: 'Done.' });
    });
  });

  describe('POST /v1/messages/count_tokens (the official SDK, as Claude Code calls it)', () => {
    const request = { system: 'you are terse', messages: [{ role: 'user' as const, content: 'count the tokens of this sentence' }] };

    it('returns the provider’s own count when it speaks Anthropic’s protocol (exact, with its key, nothing billed)', async () => {
      const { data, response } = await anthropic.messages.countTokens({ model: 'claude-sonnet-4-5', ...request }).withResponse();
      // The fake upstream counts characters / 4 over system and messages: (13 + 33) / 4 → 12.
      expect(data).toEqual({ input_tokens: 12 });
      expect(response.headers.get('x-runtime-token-count')).toBe('exact');
      expect(response.headers.get('x-runtime-provider')).toBe('anth');
      const sent = anth.requests.filter((r) => r.method === 'POST');
      expect(sent.map((r) => r.path)).toEqual(['/v1/messages/count_tokens']);
      expect(sent[0].headers['x-api-key']).toBe(ANTHROPIC_KEY);
      expect(sent[0].body).toMatchObject({ model: 'claude-sonnet-4-5', system: 'you are terse' });
    });

    it('estimates, and says so, for a model served over the OpenAI protocol (nothing sent upstream)', async () => {
      const { data, response } = await anthropic.messages.countTokens({ model: 'gpt-4o-mini', ...request }).withResponse();
      expect(data.input_tokens).toBeGreaterThan(10);
      expect(data.input_tokens).toBeLessThan(30);
      expect(response.headers.get('x-runtime-token-count')).toBe('estimate');
      expect(oai.requests.filter((r) => r.method === 'POST')).toEqual([]);
    });

    it('answers an unknown model and a request without messages in Anthropic’s error shape', async () => {
      const unknown = (await anthropic.messages.countTokens({ model: 'no-such-model', ...request }).catch((e: unknown) => e)) as InstanceType<
        typeof Anthropic.APIError
      >;
      expect(unknown.status).toBe(422);
      expect((unknown.error as { error: { code: string } }).error.code).toBe('model_not_configured');
      const empty = (await anthropic.messages.countTokens({ model: 'claude-sonnet-4-5', messages: [] }).catch((e: unknown) => e)) as InstanceType<
        typeof Anthropic.APIError
      >;
      expect(empty).toBeInstanceOf(Anthropic.BadRequestError);
      expect((empty.error as { type: string; error: { type: string; message: string } }).error).toMatchObject({
        type: 'invalid_request',
        message: 'messages must be a non-empty array',
      });
    });
  });

  describe('the openai client against the Anthropic-protocol upstream', () => {
    it('completes and streams through the translation', async () => {
      const res = await openai.chat.completions.create({
        model: 'claude-sonnet-4-5',
        messages: [
          { role: 'system', content: 'sys' },
          { role: 'user', content: 'hi' },
        ],
      });
      expect(res.choices[0].message.content).toBe('echo: hi');
      expect(res.choices[0].finish_reason).toBe('stop');
      expect(res.usage?.prompt_tokens).toBeGreaterThan(0);
      expect(anth.requests.find((r) => r.method === 'POST')!.body).toMatchObject({
        model: 'claude-sonnet-4-5',
        system: 'sys',
        max_tokens: 4096,
        messages: [{ role: 'user', content: [{ type: 'text', text: 'hi' }] }],
      });
      expect(anth.requests.find((r) => r.method === 'POST')!.headers['x-api-key']).toBe(ANTHROPIC_KEY);
      expect(anth.requests.find((r) => r.method === 'POST')!.headers['anthropic-version']).toBe('2023-06-01');

      anth.script({ content: 'x y z', chunks: 3 });
      const stream = await openai.chat.completions.create({
        model: 'claude-sonnet-4-5',
        stream: true,
        stream_options: { include_usage: true },
        messages: [{ role: 'user', content: 'go' }],
      });
      let text = '';
      let usage: OpenAI.CompletionUsage | null | undefined;
      for await (const chunk of stream) {
        text += chunk.choices[0]?.delta?.content ?? '';
        usage = chunk.usage ?? usage;
      }
      expect(text).toBe('x y z');
      expect(usage?.completion_tokens).toBeGreaterThan(0);
    });

    it('maps tool_use to tool_calls and keeps thinking blocks (with signatures) as content_blocks for the next turn', async () => {
      anth.script({ thinking: { text: 'plan', signature: 'U0lH' }, toolCalls: [{ name: 'f', arguments: { a: 1 } }] });
      const tools: OpenAI.ChatCompletionTool[] = [{ type: 'function', function: { name: 'f', parameters: { type: 'object' } } }];
      const first = await openai.chat.completions.create({ model: 'claude-sonnet-4-5', tools, messages: [{ role: 'user', content: 'call f' }] });
      const message = first.choices[0].message as OpenAI.ChatCompletionMessage & { content_blocks?: unknown[]; reasoning_content?: string };
      expect(first.choices[0].finish_reason).toBe('tool_calls');
      expect(message.reasoning_content).toBe('plan');
      expect(message.content_blocks?.[0]).toEqual({ type: 'thinking', thinking: 'plan', signature: 'U0lH' });
      const call = message.tool_calls![0] as { id: string; function: { name: string; arguments: string } };
      expect(JSON.parse(call.function.arguments)).toEqual({ a: 1 });
      await openai.chat.completions.create({
        model: 'claude-sonnet-4-5',
        tools,
        messages: [
          { role: 'user', content: 'call f' },
          message as OpenAI.ChatCompletionAssistantMessageParam,
          { role: 'tool', tool_call_id: call.id, content: 'ok' },
        ],
      });
      const sent = anth.requests[anth.requests.length - 1].body!.messages as Array<{ role: string; content: unknown }>;
      expect(sent[1]).toEqual({ role: 'assistant', content: message.content_blocks });
      expect(sent[2]).toEqual({ role: 'user', content: [{ type: 'tool_result', tool_use_id: call.id, content: 'ok' }] });
    });

    it('carries a failed tool result across protocols: tool_error → is_error, is_error → error text', async () => {
      const call = { id: 'call_1', type: 'function' as const, function: { name: 'f', arguments: '{}' } };
      await openai.chat.completions.create({
        model: 'claude-sonnet-4-5',
        messages: [
          { role: 'user', content: 'call f' },
          { role: 'assistant', content: null, tool_calls: [call] },
          {
            role: 'tool',
            tool_call_id: 'call_1',
            content: 'The tool call was not executed: stopped.',
            tool_error: true,
          } as OpenAI.ChatCompletionToolMessageParam,
        ],
      });
      const toAnthropic = anth.requests[anth.requests.length - 1].body!.messages as Array<{ role: string; content: unknown }>;
      expect(toAnthropic[2]).toEqual({
        role: 'user',
        content: [{ type: 'tool_result', tool_use_id: 'call_1', content: 'The tool call was not executed: stopped.', is_error: true }],
      });

      await anthropic.messages.create({
        model: 'gpt-4o-mini',
        max_tokens: 32,
        messages: [
          { role: 'user', content: 'call f' },
          { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_1', name: 'f', input: {} }] },
          { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', is_error: true, content: 'permission denied' }] },
        ],
      });
      const toOpenai = oai.requests[oai.requests.length - 1].body!.messages as Array<Record<string, unknown>>;
      expect(toOpenai[2]).toEqual({ role: 'tool', tool_call_id: 'toolu_1', content: 'Error: permission denied' });
    });

    it('lists models in the Anthropic shape for the Anthropic SDK', async () => {
      const page = await anthropic.models.list();
      expect(page.data.map((m) => m.id)).toEqual(expect.arrayContaining(['gpt-4o-mini', 'claude-sonnet-4-5']));
      expect(page.data[0].type).toBe('model');
    });

    it('answers errors in the Anthropic error shape', async () => {
      const err = (await anthropic.messages
        .create({ model: 'claude-nope', max_tokens: 5, messages: [{ role: 'user', content: 'x' }] })
        .catch((e: unknown) => e)) as InstanceType<typeof Anthropic.APIError>;
      expect(err.status).toBe(422);
      expect(err.error).toMatchObject({
        type: 'error',
        error: { type: 'model_not_configured', suggested_models: expect.any(Array), request_id: expect.any(String) },
      });
    });
  });
});
