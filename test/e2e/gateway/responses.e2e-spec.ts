import OpenAI from 'openai';
import { request } from '../../support/http';
import { waitFor } from '../../support/infra';
import type { ServerProcess } from '../../support/server-process';
import { api, fakeUpstream, FakeUpstream, OPERATOR_TOKEN, providerEnv, sseFrames, startGateway } from './gateway-harness';

const OPENAI_KEY = 'sk-e2e-responses-native-0001';
const CHAT_KEY = 'sk-e2e-responses-chat-0002';
const ANTHROPIC_KEY = 'sk-ant-e2e-responses-0003';

type Body = Record<string, unknown> & { messages?: Array<Record<string, unknown>>; input?: Array<Record<string, unknown>> };
const posts = (u: FakeUpstream) => u.requests.filter((r) => r.method === 'POST');
const lastBody = (u: FakeUpstream): Body => posts(u).at(-1)!.body as Body;

/**
 * `/v1/responses` with the official openai client: translated to chat completions and to Anthropic messages (any
 * provider), native passthrough to the `openai` preset, stored responses and `previous_response_id`, streaming.
 */
describe('the OpenAI Responses API (/v1/responses) with the official openai client', () => {
  let native: FakeUpstream;
  let chat: FakeUpstream;
  let claude: FakeUpstream;
  let server: ServerProcess;
  let client: OpenAI;

  beforeAll(async () => {
    [native, chat, claude] = await Promise.all([
      fakeUpstream({ models: ['gpt-5-mini'], requireKey: OPENAI_KEY }),
      fakeUpstream({ models: ['llama3.2'], requireKey: CHAT_KEY }),
      fakeUpstream({ models: ['claude-sonnet-4-5'], requireKey: ANTHROPIC_KEY }),
    ]);
    server = await startGateway({
      ...providerEnv('openai', native, { key: OPENAI_KEY }),
      ...providerEnv('localchat', chat, { key: CHAT_KEY, kind: 'local' }),
      ...providerEnv('claude', claude, { key: ANTHROPIC_KEY, protocol: 'anthropic', kind: 'cloud' }),
      GATEWAY_ALLOW_PRIVATE_PROVIDER_URLS: 'true',
    });
    client = new OpenAI({ baseURL: `${server.url}/v1`, apiKey: OPERATOR_TOKEN, maxRetries: 0 });
  });
  afterEach(() => [native, chat, claude].forEach((u) => u.reset()));
  afterAll(async () => {
    await server?.stop();
    await Promise.all([native, chat, claude].map((u) => u?.close()));
  });

  it('translates to chat completions: instructions, output_text, usage, route headers, the usage ledger', async () => {
    const { data, response } = await client.responses.create({ model: 'llama3.2', instructions: 'Be brief.', input: 'hello there' }).withResponse();
    expect(data).toMatchObject({
      object: 'response',
      status: 'completed',
      model: 'llama3.2',
      instructions: 'Be brief.',
      store: true,
      previous_response_id: null,
    });
    expect(data.id).toMatch(/^resp_/);
    expect(data.output_text).toBe('echo: hello there');
    expect(data.output).toEqual([expect.objectContaining({ type: 'message', role: 'assistant', status: 'completed' })]);
    expect(data.usage!.input_tokens).toBeGreaterThan(0);
    expect(data.usage!.output_tokens).toBeGreaterThan(0);
    expect(data.usage).toMatchObject({ input_tokens_details: { cached_tokens: 0 }, output_tokens_details: { reasoning_tokens: 0 } });
    expect(data.usage!.total_tokens).toBe(data.usage!.input_tokens + data.usage!.output_tokens);
    expect(response.headers.get('x-runtime-provider')).toBe('localchat');
    expect(response.headers.get('x-runtime-model')).toBe('llama3.2');
    expect(response.headers.get('x-request-id')).toMatch(/\S+/);
    const sent = posts(chat);
    expect(sent.map((r) => r.path)).toEqual(['/v1/chat/completions']);
    expect(sent[0].body).toMatchObject({
      model: 'llama3.2',
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: 'hello there' },
      ],
    });
    expect(sent[0].body).not.toHaveProperty('input');
    // The usage ledger has the call under /v1/responses.
    const requestId = response.headers.get('x-request-id')!;
    const row = await waitFor(
      async () =>
        (await api<{ data: Array<Record<string, unknown>> }>(server.url, '/hecate/v1/usage/events?limit=50')).body.data.find((e) => e.request_id === requestId),
      { intervalMs: 100, what: `the usage event of ${requestId}` },
    );
    expect(row).toMatchObject({ endpoint: '/v1/responses', provider: 'localchat', model: 'llama3.2' });
  });

  it('streams translated events the SDK assembles (typed events in order, sequence numbers increasing)', async () => {
    chat.script({ content: 'one two three four', chunks: 4 });
    const stream = client.responses.stream({ model: 'llama3.2', input: [{ role: 'user', content: 'count' }] });
    const events: Array<{ type: string; sequence_number: number }> = [];
    let deltas = '';
    for await (const ev of stream) {
      events.push(ev);
      if (ev.type === 'response.output_text.delta') deltas += ev.delta;
    }
    const final = await stream.finalResponse();
    expect(deltas).toBe('one two three four');
    expect(final.output_text).toBe('one two three four');
    expect(final.status).toBe('completed');
    expect(final.usage!.output_tokens).toBeGreaterThan(0);
    const types = events.map((e) => e.type);
    expect(types.slice(0, 4)).toEqual(['response.created', 'response.in_progress', 'response.output_item.added', 'response.content_part.added']);
    expect(types.filter((t) => t === 'response.output_text.delta')).toHaveLength(4);
    expect(types.slice(-4)).toEqual(['response.output_text.done', 'response.content_part.done', 'response.output_item.done', 'response.completed']);
    expect(events.map((e) => e.sequence_number)).toEqual(events.map((_, i) => i));
    // Stored like a non-streamed one.
    expect((await client.responses.retrieve(final.id)).output_text).toBe('one two three four');
  });

  it('a function-call round trip through Anthropic, continued with previous_response_id', async () => {
    claude.script({ toolCalls: [{ name: 'get_weather', arguments: { city: 'Oslo' } }] });
    const tools: OpenAI.Responses.Tool[] = [
      {
        type: 'function',
        name: 'get_weather',
        description: 'Weather by city',
        parameters: { type: 'object', properties: { city: { type: 'string' } } },
        strict: false,
      },
    ];
    const stream = client.responses.stream({ model: 'claude-sonnet-4-5', input: 'weather in Oslo?', tools, tool_choice: 'auto' });
    let args = '';
    for await (const ev of stream) if (ev.type === 'response.function_call_arguments.delta') args += ev.delta;
    const first = await stream.finalResponse();
    const call = first.output.find((o) => o.type === 'function_call') as OpenAI.Responses.ResponseFunctionToolCall;
    expect(call).toMatchObject({ name: 'get_weather', status: 'completed' });
    expect(JSON.parse(call.arguments)).toEqual({ city: 'Oslo' });
    expect(args).toBe(call.arguments);
    const firstSent = lastBody(claude);
    expect(posts(claude).at(-1)!.path).toBe('/v1/messages');
    expect(firstSent.tools).toEqual([expect.objectContaining({ name: 'get_weather', input_schema: expect.any(Object) })]);

    claude.script({ content: 'It is sunny in Oslo.' });
    const second = await client.responses.create({
      model: 'claude-sonnet-4-5',
      previous_response_id: first.id,
      input: [{ type: 'function_call_output', call_id: call.call_id, output: '{"sky":"clear"}' }],
      tools,
    });
    expect(second.output_text).toBe('It is sunny in Oslo.');
    expect(second.previous_response_id).toBe(first.id);
    // The chain was replayed to Anthropic: the question, the tool_use, then its tool_result.
    const sent = lastBody(claude).messages!;
    expect(sent[0]).toMatchObject({ role: 'user' });
    expect(JSON.stringify(sent[0].content)).toContain('weather in Oslo?');
    expect(sent[1]).toMatchObject({
      role: 'assistant',
      content: [expect.objectContaining({ type: 'tool_use', id: call.call_id, name: 'get_weather', input: { city: 'Oslo' } })],
    });
    expect(sent[2]).toMatchObject({ role: 'user', content: [expect.objectContaining({ type: 'tool_result', tool_use_id: call.call_id })] });
  });

  it('previous_response_id carries a conversation across providers; get, input_items, delete, store:false', async () => {
    const r1 = await client.responses.create({ model: 'llama3.2', input: 'my name is Ada' });
    const r2 = await client.responses.create({ model: 'claude-sonnet-4-5', previous_response_id: r1.id, input: 'what is my name?' });
    expect(r2.output_text).toBe('echo: what is my name?');
    const sent = lastBody(claude).messages!;
    expect(sent.map((m) => m.role)).toEqual(['user', 'assistant', 'user']);
    expect(JSON.stringify(sent[1].content)).toContain('echo: my name is Ada');

    const got = await client.responses.retrieve(r2.id);
    expect(got).toMatchObject({ id: r2.id, previous_response_id: r1.id, output_text: r2.output_text });
    const items = await client.responses.inputItems.list(r2.id);
    expect(items.data).toEqual([expect.objectContaining({ type: 'message', role: 'user', content: [{ type: 'input_text', text: 'what is my name?' }] })]);

    await client.responses.delete(r2.id);
    const gone = await api<{ error: Record<string, unknown> }>(server.url, `/v1/responses/${r2.id}`);
    expect(gone.status).toBe(404);
    expect(gone.body.error).toMatchObject({ type: 'not_found', request_id: expect.any(String) });

    const unknown = await client.responses.create({ model: 'llama3.2', previous_response_id: 'resp_nope', input: 'x' }).catch((e: unknown) => e);
    expect(unknown).toBeInstanceOf(OpenAI.NotFoundError);
    expect((unknown as InstanceType<typeof OpenAI.NotFoundError>).error).toMatchObject({ type: 'not_found', param: 'previous_response_id' });

    const ephemeral = await client.responses.create({ model: 'llama3.2', input: 'forget me', store: false });
    expect(ephemeral).toMatchObject({ store: false });
    expect((await api(server.url, `/v1/responses/${ephemeral.id}`)).status).toBe(404);
  });

  it('native passthrough to the openai preset: /v1/responses upstream, history inlined, store kept here', async () => {
    const r1 = await client.responses.create({ model: 'gpt-5-mini', input: 'first', max_output_tokens: 50, reasoning: { effort: 'low' } });
    expect(posts(native).at(-1)!.path).toBe('/v1/responses');
    expect(lastBody(native)).toMatchObject({
      model: 'gpt-5-mini',
      input: [{ role: 'user', content: 'first' }],
      store: false,
      max_output_tokens: 50,
      reasoning: { effort: 'low' },
    });
    expect(r1.id).toMatch(/^resp_fake/);
    expect(r1).toMatchObject({ store: true, previous_response_id: null, output_text: 'echo: first' });

    const stream = client.responses.stream({ model: 'gpt-5-mini', previous_response_id: r1.id, input: 'second' });
    const types: string[] = [];
    for await (const ev of stream) types.push(ev.type);
    const r2 = await stream.finalResponse();
    expect(r2).toMatchObject({ store: true, previous_response_id: r1.id, output_text: 'echo: second' });
    expect(types[0]).toBe('response.created');
    expect(types.at(-1)).toBe('response.completed');
    const body = lastBody(native);
    expect(body).not.toHaveProperty('previous_response_id');
    expect(body.store).toBe(false);
    expect(body.input).toEqual([
      { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'first' }] },
      expect.objectContaining({ type: 'message', role: 'assistant', content: [expect.objectContaining({ type: 'output_text', text: 'echo: first' })] }),
      { role: 'user', content: 'second' },
    ]);
    expect(body.input![1]).not.toHaveProperty('id');
    expect((await client.responses.retrieve(r2.id)).previous_response_id).toBe(r1.id);
  });

  it('reasoning effort becomes Anthropic extended thinking; thinking comes back as a reasoning item', async () => {
    claude.script({ thinking: { text: 'let me think' }, content: 'done' });
    const r = await client.responses.create({
      model: 'claude-sonnet-4-5',
      input: 'think',
      reasoning: { effort: 'low' },
      max_output_tokens: 100,
      temperature: 0.2,
    });
    const sent = lastBody(claude);
    expect(sent.thinking).toEqual({ type: 'enabled', budget_tokens: 2048 });
    expect(sent.max_tokens).toBeGreaterThan(2048);
    expect(sent).not.toHaveProperty('temperature');
    expect(r.output[0]).toMatchObject({ type: 'reasoning', content: [{ type: 'reasoning_text', text: 'let me think' }] });
    expect(r.output_text).toBe('done');
  });

  it('session_id records the exchange into a chat session (streamed too), and the response is still stored', async () => {
    const created = await api<{ data: { id: string } }>(server.url, '/hecate/v1/chat/sessions', {
      method: 'POST',
      body: JSON.stringify({ system_prompt: 'You are terse.' }),
      headers: { 'content-type': 'application/json' },
    });
    const id = created.body.data.id;
    const first = await client.responses.create({
      model: 'gpt-5-mini',
      input: 'Say hello.',
      session_id: id,
    } as OpenAI.Responses.ResponseCreateParamsNonStreaming);
    expect(first.output_text).toBe('echo: Say hello.');
    // Recorded exchanges always go through chat completions (the session stores chat messages), even on the openai preset.
    expect(posts(native).at(-1)!.path).toBe('/v1/chat/completions');
    expect(lastBody(native).messages![0]).toEqual({ role: 'system', content: 'You are terse.' });
    const stream = client.responses.stream({ model: 'gpt-5-mini', previous_response_id: first.id, input: 'Again.' }, { headers: { 'X-Session-Id': id } });
    for await (const _ of stream) void _;
    const second = await stream.finalResponse();
    expect(second.output_text).toBe('echo: Again.');
    const got = await api<{ data: { messages: Array<{ role: string; content: string }> } }>(server.url, `/hecate/v1/chat/sessions/${id}`);
    expect(got.body.data.messages.map((m) => [m.role, m.content])).toEqual([
      ['user', 'Say hello.'],
      ['assistant', 'echo: Say hello.'],
      ['user', 'Again.'],
      ['assistant', 'echo: Again.'],
    ]);
    expect((await client.responses.retrieve(second.id)).previous_response_id).toBe(first.id);
  });

  it('rejects bad bodies with the OpenAI error shape and calls no upstream', async () => {
    const cases: Array<[unknown, string]> = [
      [{ model: 'llama3.2' }, 'input'],
      [{ model: 'llama3.2', input: [{ type: 'mystery' }] }, 'input[0].type'],
      [{ model: 'llama3.2', input: 'x', tools: [{ name: 'f' }] }, 'tools[0].type'],
      [{ model: 'llama3.2', input: 'x', max_output_tokens: 0 }, 'max_output_tokens'],
    ];
    for (const [body, param] of cases) {
      const r = await request(server.url, 'POST', '/v1/responses', { token: OPERATOR_TOKEN, body });
      expect(r.status).toBe(400);
      expect((r.body as { error: Record<string, unknown> }).error).toMatchObject({ type: 'invalid_request', param, request_id: expect.any(String) });
    }
    expect(posts(chat)).toHaveLength(0);
    // Hosted tools only a Responses upstream runs: left out of a translation, and said so.
    const { response } = await client.responses
      .create({
        model: 'llama3.2',
        input: 'x',
        tools: [{ type: 'web_search' }, { type: 'function', name: 'f', parameters: { type: 'object' }, strict: false }],
      })
      .withResponse();
    expect(response.headers.get('x-runtime-dropped-tools')).toBe('web_search');
    expect(lastBody(chat).tools).toEqual([{ type: 'function', function: { name: 'f', parameters: { type: 'object' }, strict: false } }]);
  });

  it('stored responses are tenant-scoped', async () => {
    const r = await client.responses.create({ model: 'llama3.2', input: 'mine' });
    const created = await request(server.url, 'POST', '/hecate/v1/api-keys', {
      token: OPERATOR_TOKEN,
      body: { name: 'other', scopes: ['inference'], tenant_id: 'globex' },
    });
    expect(created.status).toBe(201);
    const secret = (created.body as { data: { secret: string } }).data.secret;
    const other = await request(server.url, 'GET', `/v1/responses/${r.id}`, { token: secret });
    expect(other.status).toBe(404);
    const cont = await request(server.url, 'POST', '/v1/responses', { token: secret, body: { model: 'llama3.2', previous_response_id: r.id, input: 'x' } });
    expect(cont.status).toBe(404);
    // A streamed request's frames are Responses events even over a plain SSE reader.
    const raw = await fetch(`${server.url}/v1/responses`, {
      method: 'POST',
      headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'llama3.2', input: 'plain', stream: true }),
    });
    expect(raw.headers.get('content-type')).toMatch(/text\/event-stream/);
    const frames = sseFrames(await raw.text());
    expect(frames[0].event).toBe('response.created');
    expect(frames.at(-1)!.event).toBe('response.completed');
  });
});
