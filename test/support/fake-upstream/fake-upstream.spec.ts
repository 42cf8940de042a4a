import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { DEFAULT_MODELS, startFakeUpstream, type FakeUpstream } from './fake-upstream.js';

const OPENAI_KEY = 'sk-test-openai';
const ANTHROPIC_KEY = 'sk-ant-test';

describe('fake upstream', () => {
  let upstream: FakeUpstream;
  let openai: OpenAI;
  let anthropic: Anthropic;

  beforeAll(async () => {
    upstream = await startFakeUpstream();
    openai = new OpenAI({ apiKey: OPENAI_KEY, baseURL: `${upstream.url}/v1`, maxRetries: 0 });
    // The Anthropic SDK's baseURL is the host root: it requests `/v1/messages` itself.
    anthropic = new Anthropic({ apiKey: ANTHROPIC_KEY, baseURL: upstream.url, maxRetries: 0 });
  });
  afterEach(() => upstream.reset());
  afterAll(() => upstream.close());

  describe('OpenAI protocol', () => {
    it('answers non-streaming chat with an echo and usage, and records the api key', async () => {
      const res = await openai.chat.completions.create({
        model: 'gpt-4o-mini',
        messages: [
          { role: 'system', content: 'be brief' },
          { role: 'user', content: 'ping' },
        ],
      });
      expect(res.object).toBe('chat.completion');
      expect(res.model).toBe('gpt-4o-mini');
      expect(res.choices[0].message).toMatchObject({ role: 'assistant', content: 'echo: ping' });
      expect(res.choices[0].finish_reason).toBe('stop');
      expect(res.usage).toEqual({ prompt_tokens: 3, completion_tokens: 3, total_tokens: 6 });

      expect(upstream.requests).toHaveLength(1);
      const [req] = upstream.requests;
      expect(req).toMatchObject({ method: 'POST', path: '/v1/chat/completions', protocol: 'openai', model: 'gpt-4o-mini', stream: false });
      expect(req.apiKey).toBe(OPENAI_KEY);
      expect(req.headers.authorization).toBe(`Bearer ${OPENAI_KEY}`);
      expect(req.body?.messages).toHaveLength(2);
    });

    it('speaks the Responses API (what Codex uses): text and function calls, non-streaming and streamed', async () => {
      upstream.script({ content: 'one two', chunks: 2, usage: { input: 5, output: 3 } });
      const whole = await openai.responses.create({ model: 'gpt-4o-mini', input: 'hi' });
      expect(whole.output_text).toBe('one two');
      expect(whole.usage).toMatchObject({ input_tokens: 5, output_tokens: 3, total_tokens: 8 });
      upstream.script({ toolCalls: [{ name: 'exec_command', arguments: { cmd: 'ls' } }] });
      const stream = await openai.responses.create({ model: 'gpt-4o-mini', input: [{ role: 'user', content: 'list' }], stream: true });
      const events: OpenAI.Responses.ResponseStreamEvent[] = [];
      for await (const e of stream) events.push(e);
      expect(events[0].type).toBe('response.created');
      const done = events.at(-1) as OpenAI.Responses.ResponseCompletedEvent;
      expect(done.type).toBe('response.completed');
      expect(done.response.output).toEqual([expect.objectContaining({ type: 'function_call', name: 'exec_command', arguments: '{"cmd":"ls"}' })]);
      const args = events.filter((e) => e.type === 'response.function_call_arguments.delta').map((e) => (e as { delta: string }).delta);
      expect(args.join('')).toBe('{"cmd":"ls"}');
      expect(events.map((e) => e.sequence_number)).toEqual(events.map((_, i) => i));
      expect(upstream.requests.at(-1)).toMatchObject({ path: '/v1/responses', protocol: 'openai', stream: true });
    });

    it('streams role, content deltas, finish_reason, usage and [DONE]', async () => {
      upstream.script({ content: 'one two three four', chunks: 4, usage: { input: 11, output: 7 } });
      const stream = await openai.chat.completions.create({
        model: 'gpt-4o-mini',
        messages: [{ role: 'user', content: 'count' }],
        stream: true,
        stream_options: { include_usage: true },
      });
      const chunks: OpenAI.ChatCompletionChunk[] = [];
      for await (const chunk of stream) chunks.push(chunk);

      expect(chunks[0].choices[0].delta.role).toBe('assistant');
      const deltas = chunks.flatMap((c) => (c.choices[0]?.delta.content ? [c.choices[0].delta.content] : []));
      expect(deltas).toHaveLength(4);
      expect(deltas.join('')).toBe('one two three four');
      expect(chunks.find((c) => c.choices[0]?.finish_reason)?.choices[0].finish_reason).toBe('stop');
      const last = chunks[chunks.length - 1];
      expect(last.choices).toEqual([]);
      expect(last.usage).toEqual({ prompt_tokens: 11, completion_tokens: 7, total_tokens: 18 });
      expect(new Set(chunks.map((c) => c.id)).size).toBe(1);
    });

    it('returns tool calls, non-streaming and streamed (assembled by the SDK stream helper)', async () => {
      upstream.script({ match: 'gpt-4o-mini', times: 2, toolCalls: [{ name: 'get_weather', arguments: { city: 'Paris', unit: 'C' } }] });
      const body: OpenAI.ChatCompletionCreateParamsNonStreaming = {
        model: 'gpt-4o-mini',
        messages: [{ role: 'user', content: 'weather?' }],
        tools: [{ type: 'function', function: { name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } } }],
      };

      const res = await openai.chat.completions.create(body);
      expect(res.choices[0].finish_reason).toBe('tool_calls');
      expect(res.choices[0].message.content).toBeNull();
      const call = res.choices[0].message.tool_calls?.[0];
      expect(call?.type).toBe('function');
      if (call?.type !== 'function') throw new Error('expected a function tool call');
      expect(call.id).toMatch(/^call_/);
      expect(call.function.name).toBe('get_weather');
      expect(JSON.parse(call.function.arguments)).toEqual({ city: 'Paris', unit: 'C' });

      const stream = openai.chat.completions.stream({ ...body, stream: true });
      const argDeltas: string[] = [];
      stream.on('tool_calls.function.arguments.delta', (e) => argDeltas.push(e.arguments_delta));
      const final = await stream.finalChatCompletion();
      expect(argDeltas.length).toBeGreaterThan(1);
      const streamed = final.choices[0].message.tool_calls?.[0];
      if (streamed?.type !== 'function') throw new Error('expected a function tool call');
      expect(streamed.id).toMatch(/^call_/);
      expect(streamed.function.name).toBe('get_weather');
      expect(JSON.parse(streamed.function.arguments)).toEqual({ city: 'Paris', unit: 'C' });
      expect(final.choices[0].finish_reason).toBe('tool_calls');
    });

    it('lists models (OpenAI shape) and Ollama tags', async () => {
      const page = await openai.models.list();
      expect(page.data.map((m) => m.id)).toEqual([...DEFAULT_MODELS]);

      upstream.setModels(['llama3.2:latest', 'qwen2.5:0.5b']);
      const tags = (await (await fetch(`${upstream.url}/api/tags`)).json()) as { models: Array<{ name: string; model: string; size: number }> };
      expect(tags.models.map((m) => m.name)).toEqual(['llama3.2:latest', 'qwen2.5:0.5b']);
      expect(tags.models[0]).toMatchObject({ model: 'llama3.2:latest', size: expect.any(Number) });
    });

    it('returns a scripted 500 as an OpenAI-shaped error', async () => {
      upstream.script({ status: 500 });
      const err: unknown = await openai.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'x' }] }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(OpenAI.InternalServerError);
      expect((err as InstanceType<typeof OpenAI.APIError>).status).toBe(500);
      expect((err as InstanceType<typeof OpenAI.APIError>).type).toBe('server_error');
      // The rule was consumed: the next call succeeds.
      await expect(openai.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'x' }] })).resolves.toBeDefined();
    });

    it('returns 429 with retry-after', async () => {
      upstream.script({ status: 429 });
      const res = await fetch(`${upstream.url}/v1/chat/completions`, { method: 'POST', body: JSON.stringify({ model: 'm', messages: [] }) });
      expect(res.status).toBe(429);
      expect(res.headers.get('retry-after')).toBe('1');
      expect(await res.json()).toMatchObject({ error: { type: 'rate_limit_exceeded', code: 'rate_limit_exceeded' } });
    });

    it('lets the client abort a hanging request, and sees the abort server-side', async () => {
      upstream.script({ hang: true });
      const ac = new AbortController();
      const pending = openai.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'x' }] }, { signal: ac.signal });
      await upstream.waitForRequests(1);
      ac.abort();
      await expect(pending).rejects.toBeInstanceOf(OpenAI.APIUserAbortError);
      await upstream.waitFor((u) => u.requests[0].aborted);
      expect(upstream.activeRequests).toBe(0);
    });

    it('times out a hanging request with the client timeout option', async () => {
      upstream.script({ hang: true });
      // Under Jest the openai SDK reports its own timeout as a plain APIConnectionError (the undici AbortError is
      // a cross-realm DOMException, so its name is lost), outside Jest as APIConnectionTimeoutError (a subclass).
      await expect(
        openai.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'x' }] }, { timeout: 50 }),
      ).rejects.toBeInstanceOf(OpenAI.APIConnectionError);
      await upstream.waitFor((u) => u.requests[0].aborted);
    });

    it('drops the connection mid-stream', async () => {
      upstream.script({ content: 'a b c d e', dropAfterChunks: 2 });
      const stream = await openai.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'x' }], stream: true });
      const seen: string[] = [];
      await expect(
        (async () => {
          for await (const chunk of stream) if (chunk.choices[0]?.delta.content) seen.push(chunk.choices[0].delta.content);
        })(),
      ).rejects.toThrow();
      expect(seen).toEqual(['a', ' b']);
      expect(upstream.requests[0].aborted).toBe(false);
    });
  });

  describe('Anthropic protocol', () => {
    it('answers non-streaming messages and records the api key', async () => {
      const msg = await anthropic.messages.create({
        model: 'claude-3-5-haiku-latest',
        max_tokens: 64,
        system: 'terse',
        messages: [{ role: 'user', content: [{ type: 'text', text: 'hello' }] }],
      });
      expect(msg).toMatchObject({
        type: 'message',
        role: 'assistant',
        model: 'claude-3-5-haiku-latest',
        content: [{ type: 'text', text: 'echo: hello' }],
        stop_reason: 'end_turn',
      });
      expect(msg.id).toMatch(/^msg_/);
      expect(msg.usage).toMatchObject({ input_tokens: 3, output_tokens: 3 });

      const [req] = upstream.requests;
      expect(req).toMatchObject({ path: '/v1/messages', protocol: 'anthropic', apiKey: ANTHROPIC_KEY });
      // @anthropic-ai/sdk v1 sends the api key as `Authorization: Bearer`, not `x-api-key`.
      expect(req.headers.authorization).toBe(`Bearer ${ANTHROPIC_KEY}`);
      expect(req.headers['anthropic-version']).toBeDefined();

      // Raw clients (and older SDKs) use x-api-key; it takes precedence.
      await fetch(`${upstream.url}/v1/messages`, {
        method: 'POST',
        headers: { 'x-api-key': 'sk-ant-raw', 'anthropic-version': '2023-06-01', 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'claude-3-5-haiku-latest', max_tokens: 8, messages: [{ role: 'user', content: 'x' }] }),
      });
      expect(upstream.requests[1].apiKey).toBe('sk-ant-raw');
    });

    it('streams a thinking block then text with the real event sequence', async () => {
      upstream.script({
        content: 'The answer is 42.',
        chunks: 3,
        thinking: { text: 'Let me think about it.', signature: 'c2lnbmF0dXJl' },
        usage: { input: 9, output: 21 },
      });
      const stream = anthropic.messages.stream({
        model: 'claude-3-5-haiku-latest',
        max_tokens: 2048,
        thinking: { type: 'enabled', budget_tokens: 1024 },
        messages: [{ role: 'user', content: 'question' }],
      });
      const events: string[] = [];
      const deltaTypes: string[] = [];
      for await (const ev of stream) {
        events.push(ev.type);
        if (ev.type === 'content_block_delta') deltaTypes.push(ev.delta.type);
      }
      const final = await stream.finalMessage();

      expect(events[0]).toBe('message_start');
      expect(events.slice(-2)).toEqual(['message_delta', 'message_stop']);
      expect(events.filter((e) => e === 'content_block_start')).toHaveLength(2);
      expect(deltaTypes).toEqual(['thinking_delta', 'thinking_delta', 'thinking_delta', 'signature_delta', 'text_delta', 'text_delta', 'text_delta']);
      expect(final.content).toEqual([
        { type: 'thinking', thinking: 'Let me think about it.', signature: 'c2lnbmF0dXJl' },
        { type: 'text', text: 'The answer is 42.' },
      ]);
      expect(final.stop_reason).toBe('end_turn');
      expect(final.usage).toMatchObject({ input_tokens: 9, output_tokens: 21 });
    });

    it('returns tool_use blocks, non-streaming and streamed', async () => {
      upstream.script({
        match: { path: '/v1/messages' },
        times: 2,
        content: 'Checking.',
        toolCalls: [{ name: 'get_weather', arguments: { city: 'Oslo' } }],
      });
      const body: Anthropic.MessageCreateParamsNonStreaming = {
        model: 'claude-3-5-haiku-latest',
        max_tokens: 256,
        tools: [{ name: 'get_weather', input_schema: { type: 'object', properties: { city: { type: 'string' } } } }],
        messages: [{ role: 'user', content: 'weather in Oslo?' }],
      };

      const msg = await anthropic.messages.create(body);
      expect(msg.stop_reason).toBe('tool_use');
      expect(msg.content[0]).toEqual({ type: 'text', text: 'Checking.' });
      expect(msg.content[1]).toMatchObject({ type: 'tool_use', name: 'get_weather', input: { city: 'Oslo' } });
      expect((msg.content[1] as Anthropic.ToolUseBlock).id).toMatch(/^toolu_/);

      const final = await anthropic.messages.stream(body).finalMessage();
      expect(final.stop_reason).toBe('tool_use');
      const toolUse = final.content.find((b): b is Anthropic.ToolUseBlock => b.type === 'tool_use');
      expect(toolUse).toMatchObject({ name: 'get_weather', input: { city: 'Oslo' } });
    });

    it('enforces requireKey with an Anthropic-shaped 401', async () => {
      upstream.script({ requireKey: 'sk-ant-other' });
      const err: unknown = await anthropic.messages
        .create({ model: 'claude-3-5-haiku-latest', max_tokens: 8, messages: [{ role: 'user', content: 'x' }] })
        .catch((e: unknown) => e);
      expect(err).toBeInstanceOf(Anthropic.AuthenticationError);
      expect((err as InstanceType<typeof Anthropic.APIError>).error).toMatchObject({ type: 'error', error: { type: 'authentication_error' } });
    });

    it('returns a scripted 500 and supports hang + abort', async () => {
      upstream.script({ status: 529 });
      await expect(
        anthropic.messages.create({ model: 'claude-3-5-haiku-latest', max_tokens: 8, messages: [{ role: 'user', content: 'x' }] }),
      ).rejects.toMatchObject({ status: 529, error: { error: { type: 'overloaded_error' } } });

      upstream.script({ hang: true });
      const ac = new AbortController();
      const pending = anthropic.messages.create(
        { model: 'claude-3-5-haiku-latest', max_tokens: 8, messages: [{ role: 'user', content: 'x' }] },
        { signal: ac.signal },
      );
      await upstream.waitForRequests(2);
      ac.abort();
      await expect(pending).rejects.toBeInstanceOf(Anthropic.APIUserAbortError);
    });

    it('surfaces a mid-stream error event', async () => {
      upstream.script({ content: 'a b c', errorAfterChunks: 1 });
      const stream = anthropic.messages.stream({ model: 'claude-3-5-haiku-latest', max_tokens: 8, messages: [{ role: 'user', content: 'x' }] });
      await expect(stream.finalMessage()).rejects.toMatchObject({ error: { error: { type: 'overloaded_error' } } });
    });
  });

  it('paces chunks and hangs after n chunks until the client aborts', async () => {
    upstream.script({ content: 'a b c d', chunkIntervalMs: 5, hangAfterChunks: 2 });
    const ac = new AbortController();
    const res = await fetch(`${upstream.url}/v1/chat/completions`, {
      method: 'POST',
      body: JSON.stringify({ model: 'm', stream: true, messages: [] }),
      signal: ac.signal,
    });
    expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const reader = res.body!.getReader();
    const decoder = new TextDecoder();
    let text = '';
    while ((text.match(/"content":"[^"]+"/g) ?? []).length < 2) {
      const { value, done } = await reader.read();
      if (done) throw new Error('stream ended early');
      text += decoder.decode(value, { stream: true });
    }
    expect(text).not.toContain('[DONE]');
    ac.abort();
    await upstream.waitFor((u) => u.requests[0].aborted);
  });
});

describe('fake upstream CLI', () => {
  it('prints {"port":N} first and exits on SIGTERM', async () => {
    const child = spawn(process.execPath, [join(__dirname, 'cli.js'), '--port', '0', '--chunks', '4'], { stdio: ['ignore', 'pipe', 'inherit'] });
    try {
      const [line] = (await once(createInterface({ input: child.stdout }), 'line')) as [string];
      const { port } = JSON.parse(line) as { port: number };
      expect(port).toBeGreaterThan(0);
      const res = await fetch(`http://127.0.0.1:${port}/v1/chat/completions`, {
        method: 'POST',
        body: JSON.stringify({ model: 'm', stream: true, messages: [{ role: 'user', content: 'hi' }] }),
      });
      const body = await res.text();
      expect(body.match(/"content":"[^"]+"/g)).toHaveLength(4);
      expect(body.endsWith('data: [DONE]\n\n')).toBe(true);
    } finally {
      child.kill('SIGTERM');
    }
    const [code] = (await once(child, 'exit')) as [number | null];
    expect(code).toBe(0);
  });
});
