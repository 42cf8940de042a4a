import OpenAI from 'openai';
import { waitFor } from '../../support/infra';
import { call, fakeUpstream, FakeUpstream, Loose, OPERATOR_TOKEN, providerEnv, ServerProcess, startChatServer } from './chat-harness';

const S = '/hecate/v1/chat/sessions';
type Params = OpenAI.Chat.ChatCompletionCreateParamsNonStreaming;
type ChatMessage = OpenAI.Chat.ChatCompletionMessageParam;

/**
 * docs/api.md §1 flows through the official openai client: `/v1/chat/completions` with a `session_id` records
 * the exchange (RecordChatExchange). One fake upstream serves two providers: `oai` (OpenAI protocol) and
 * `anth` (Anthropic protocol), so a session can switch provider mid-conversation.
 */
describe('/v1/chat/completions with a chat session (openai client)', () => {
  let upstream: FakeUpstream;
  let server: ServerProcess;
  let client: OpenAI;

  beforeAll(async () => {
    upstream = await fakeUpstream();
    server = await startChatServer({
      ...providerEnv('oai', upstream, 'openai'),
      ...providerEnv('anth', upstream, 'anthropic'),
      GATEWAY_PROVIDER_MAX_ATTEMPTS: '1',
    });
    client = new OpenAI({ baseURL: `${server.url}/v1`, apiKey: OPERATOR_TOKEN, maxRetries: 0 });
  });
  afterEach(() => upstream.reset());
  afterAll(async () => {
    await server?.stop();
    await upstream?.close();
  });

  const newSession = async (body: Record<string, unknown> = {}) => (await call(server.url, 'POST', S, body)).body.data.id as string;
  const session = async (id: string) => (await call(server.url, 'GET', `${S}/${id}`)).body.data as Loose;
  const complete = (body: Params & { session_id?: string; provider?: string }, headers?: Record<string, string>) =>
    client.chat.completions.create(body as Params, { headers });
  const completions = () => upstream.requests.filter((r) => r.path === '/v1/chat/completions' || r.path === '/v1/messages');

  it('records a first turn and a multi-turn replay without duplicating anything', async () => {
    const id = await newSession({ system_prompt: 'You are terse.' });
    const history: ChatMessage[] = [{ role: 'user', content: 'Say hello.' }];
    const first = await complete({ model: 'gpt-4o-mini', messages: history, session_id: id, provider: 'oai' });
    expect(first.choices[0].message.content).toBe('echo: Say hello.');
    // The session prompt was applied upstream.
    expect(completions()[0].body!.messages![0]).toEqual({ role: 'system', content: 'You are terse.' });
    history.push({ role: 'assistant', content: first.choices[0].message.content }, { role: 'user', content: 'Again.' });
    // The second call names the session in the header instead of the body.
    const second = await complete({ model: 'gpt-4o-mini', messages: history, provider: 'oai' }, { 'X-Session-Id': id });
    expect(second.choices[0].message.content).toBe('echo: Again.');

    const got = await session(id);
    expect(got.messages.map((m: Loose) => [m.sequence, m.role, m.content])).toEqual([
      [0, 'user', 'Say hello.'],
      [1, 'assistant', 'echo: Say hello.'],
      [2, 'user', 'Again.'],
      [3, 'assistant', 'echo: Again.'],
    ]);
    expect(got.provider_calls).toHaveLength(2);
    expect(got.messages[1].produced_by_call_id).toBe(got.provider_calls[0].id);
    expect(got.messages[0]).not.toHaveProperty('produced_by_call_id');
    expect(got.provider_calls[0]).toMatchObject({ provider: 'oai', model: 'gpt-4o-mini', total_tokens: expect.any(Number) });
    const list = (await call(server.url, 'GET', S)).body.data.find((r: Loose) => r.id === id);
    expect(list).toMatchObject({
      message_count: 4,
      provider_call_count: 2,
      last_model: 'gpt-4o-mini',
      last_provider: 'oai',
      last_request_id: got.provider_calls[1].request_id,
    });
    expect(list).not.toHaveProperty('messages');
  });

  it('records a tool loop without orphaned tool_call_id, and keeps content_blocks and tool_error across a provider switch', async () => {
    const id = await newSession();
    upstream.script({
      match: { protocol: 'anthropic' },
      thinking: { text: 'I should look it up', signature: 'c2lnLTE=' },
      toolCalls: [{ name: 'get_weather', arguments: { city: 'Oslo' }, id: 'toolu_1' }],
    });
    const tools = [{ type: 'function' as const, function: { name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } } }];
    const history: ChatMessage[] = [{ role: 'user', content: 'Weather in Oslo?' }];
    const first = await complete({ model: 'claude-sonnet-4-5', messages: history, tools, session_id: id, provider: 'anth' });
    const assistant = first.choices[0].message;
    expect(assistant.tool_calls?.[0]).toMatchObject({ id: 'toolu_1', function: { name: 'get_weather' } });
    history.push(assistant as ChatMessage, { role: 'tool', tool_call_id: 'toolu_1', content: 'weather service unavailable', tool_error: true } as ChatMessage);
    // Continuation through the other provider (OpenAI protocol).
    upstream.script({ match: { protocol: 'openai' }, content: 'I could not get the weather.' });
    const second = await complete({ model: 'gpt-4o-mini', messages: history, tools, session_id: id, provider: 'oai' });
    expect(second.choices[0].message.content).toBe('I could not get the weather.');

    const got = await session(id);
    expect(got.messages.map((m: Loose) => m.role)).toEqual(['user', 'assistant', 'tool', 'assistant']);
    expect(got.messages[1].content_blocks).toEqual([
      { type: 'thinking', thinking: 'I should look it up', signature: 'c2lnLTE=' },
      { type: 'tool_use', id: 'toolu_1', name: 'get_weather', input: { city: 'Oslo' } },
    ]);
    expect(got.messages[1].tool_calls).toEqual([{ id: 'toolu_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Oslo"}' } }]);
    expect(got.messages[2]).toMatchObject({ role: 'tool', tool_call_id: 'toolu_1', tool_error: true, content: 'weather service unavailable' });
    expect(got.provider_calls.map((c: Loose) => c.provider)).toEqual(['anth', 'oai']);
    // Every tool call is answered before the next assistant turn.
    const calls = got.messages.flatMap((m: Loose) => (m.tool_calls ?? []).map((c: Loose) => c.id));
    expect(got.messages.filter((m: Loose) => m.role === 'tool').map((m: Loose) => m.tool_call_id)).toEqual(calls);

    // Replaying the stored transcript (as the UI does) through the Anthropic provider keeps the signed thinking.
    upstream.script({ match: { protocol: 'anthropic' }, content: 'ok' });
    const replay = [
      ...got.messages.map(({ role, content, content_blocks, tool_calls, tool_call_id, tool_error }: Loose) => ({
        role,
        content,
        content_blocks,
        tool_calls,
        tool_call_id,
        tool_error,
      })),
      { role: 'user', content: 'thanks' },
    ];
    await complete({ model: 'claude-sonnet-4-5', messages: replay, session_id: id, provider: 'anth' });
    const sent = completions().pop()!.body!.messages as Loose[];
    expect(sent[1].content[0]).toEqual({ type: 'thinking', thinking: 'I should look it up', signature: 'c2lnLTE=' });
    expect((await session(id)).messages.map((m: Loose) => m.role)).toEqual(['user', 'assistant', 'tool', 'assistant', 'user', 'assistant']);
  });

  it('records a streamed completion when it ends, and a stream cut by the client as incomplete', async () => {
    const id = await newSession();
    upstream.script({ content: 'streamed reply here', chunks: 3 });
    const stream = await client.chat.completions.create({
      model: 'gpt-4o-mini',
      messages: [{ role: 'user', content: 'stream please' }],
      stream: true,
      session_id: id,
    } as unknown as OpenAI.Chat.ChatCompletionCreateParamsStreaming);
    let text = '';
    for await (const chunk of stream) text += chunk.choices[0]?.delta?.content ?? '';
    expect(text).toBe('streamed reply here');
    expect((await session(id)).messages.map((m: Loose) => [m.role, m.content, m.status])).toEqual([
      ['user', 'stream please', 'complete'],
      ['assistant', 'streamed reply here', 'complete'],
    ]);

    upstream.script({ content: 'one two three four five six', chunks: 6, chunkIntervalMs: 40 });
    const abort = new AbortController();
    const res = await fetch(`${server.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${OPERATOR_TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        model: 'gpt-4o-mini',
        stream: true,
        session_id: id,
        messages: [
          { role: 'user', content: 'stream please' },
          { role: 'assistant', content: text },
          { role: 'user', content: 'more' },
        ],
      }),
      signal: abort.signal,
    });
    const reader = res.body!.getReader();
    let seen = '';
    while (!seen.includes('two')) seen += new TextDecoder().decode((await reader.read()).value);
    abort.abort();
    const cut = await waitFor(
      async () => {
        const m = (await session(id)).messages;
        return m.length === 4 ? m[3] : undefined;
      },
      { what: 'the cut exchange to be recorded' },
    );
    expect(cut).toMatchObject({ role: 'assistant', status: 'incomplete' });
    expect(cut.content).toMatch(/^one two/);
    expect((cut.content as string).length).toBeLessThan('one two three four five six'.length);
  });

  it('answers 404 for an unknown session and 409 superseded (OpenAI error shape) for a compacted one', async () => {
    const missing = await call(server.url, 'POST', '/v1/chat/completions', {
      model: 'gpt-4o-mini',
      session_id: 'chat_missing',
      messages: [{ role: 'user', content: 'x' }],
    });
    expect(missing.status).toBe(404);
    expect(missing.body.error).toMatchObject({ type: 'not_found', code: 'not_found' });

    const id = await newSession();
    const history: ChatMessage[] = [];
    for (const q of ['a', 'b']) {
      history.push({ role: 'user', content: q });
      const r = await complete({ model: 'gpt-4o-mini', messages: history, session_id: id });
      history.push({ role: 'assistant', content: r.choices[0].message.content });
    }
    const compacted = await call(server.url, 'POST', `${S}/${id}/compact`, { keep_last_messages: 2 });
    expect(compacted.status).toBe(200);
    const tip = compacted.body.data.id;
    const stale = await call(server.url, 'POST', '/v1/chat/completions', {
      model: 'gpt-4o-mini',
      session_id: id,
      messages: [...history, { role: 'user', content: 'c' }],
    });
    expect(stale.status).toBe(409);
    expect(stale.body.error).toMatchObject({ type: 'chat_session.superseded', canonical_visible_session_id: tip });
    // The tip takes the conversation on; a client replaying its whole (pre-compaction) history adds only its new turn.
    history.push({ role: 'user', content: 'c' });
    const ok = await complete({ model: 'gpt-4o-mini', messages: history, session_id: tip });
    expect(ok.choices[0].message.content).toBe('echo: c');
    const msgs = (await session(tip)).messages.map((m: Loose) => [m.role, m.kind ?? 'message', m.content]);
    expect(msgs).toEqual([
      ['user', 'compaction_summary', expect.stringContaining('Summary of the earlier conversation')],
      ['user', 'message', 'b'],
      ['assistant', 'message', 'echo: b'],
      ['user', 'message', 'c'],
      ['assistant', 'message', 'echo: c'],
    ]);
    const resolved = await call(server.url, 'GET', `${S}/${id}/resolve`);
    expect(resolved.body.data).toMatchObject({ requested_session_id: id, canonical_visible_session_id: tip, reason: 'continuation' });
  });
});
