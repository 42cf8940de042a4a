import OpenAI from 'openai';
import type { GatewayTrace } from '@modules/inference/usage/trace-store.service';
import { waitFor } from '../../support/infra';
import type { ServerProcess } from '../../support/server-process';
import { api, auth, fakeUpstream, FakeUpstream, OPERATOR_TOKEN, post, providerEnv, seenBodies, startGateway } from './gateway-harness';

const PROVIDER_KEY = 'sk-e2e-openai-upstream-secret-0001';

describe('OpenAI-compatible ingress with the official openai client', () => {
  let upstream: FakeUpstream;
  let server: ServerProcess;
  let client: OpenAI;

  beforeAll(async () => {
    upstream = await fakeUpstream({ models: ['gpt-4o-mini', 'gpt-4o', 'llama3.2'], requireKey: PROVIDER_KEY });
    server = await startGateway({
      ...providerEnv('fakeai', upstream, { key: PROVIDER_KEY, kind: 'cloud' }),
      GATEWAY_ALLOW_PRIVATE_PROVIDER_URLS: 'true',
      GATEWAY_BODY_LIMIT_BYTES: '200000',
    });
    client = new OpenAI({ baseURL: `${server.url}/v1`, apiKey: OPERATOR_TOKEN, maxRetries: 0 });
  });
  afterEach(() => upstream.reset());
  afterAll(async () => {
    await server?.stop();
    await upstream?.close();
  });

  it('lists models with Hecate metadata', async () => {
    const page = await client.models.list();
    const row = page.data.find((m) => m.id === 'gpt-4o-mini') as unknown as { owned_by: string; metadata: Record<string, unknown> };
    expect(row).toBeDefined();
    expect(row.owned_by).toBe('fakeai');
    expect(row.metadata).toMatchObject({
      provider: 'fakeai',
      provider_kind: 'cloud',
      discovery_source: 'provider',
      capabilities: { tool_calling: 'parallel', streaming: true, source: 'catalog' },
      readiness: { routing_ready: true },
    });
  });

  it('completes a chat and reports the route and cost in headers', async () => {
    const { data, response } = await client.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hello' }] }).withResponse();
    expect(data.choices[0].message.content).toBe('echo: hello');
    expect(data.usage?.total_tokens).toBeGreaterThan(0);
    expect(response.headers.get('x-runtime-provider')).toBe('fakeai');
    expect(response.headers.get('x-runtime-model')).toBe('gpt-4o-mini');
    expect(response.headers.get('x-runtime-route-reason')).toBe('requested_model');
    expect(response.headers.get('x-runtime-attempts')).toBe('1');
    // gpt-4o-mini has a built-in price: $0.15 / $0.60 per 1M tokens.
    const expectedMicros = Math.ceil((data.usage!.prompt_tokens * 150_000 + data.usage!.completion_tokens * 600_000) / 1e6);
    expect(response.headers.get('x-runtime-cost-usd')).toBe((expectedMicros / 1e6).toFixed(6));
    expect(response.headers.get('x-request-id')).toMatch(/\S+/);
    expect(response.headers.get('x-trace-id')).toMatch(/^[0-9a-f]{32}$/);
    expect(response.headers.get('x-ratelimit-limit')).toBe('0');
    expect(upstream.requests.find((r) => r.method === 'POST')!.apiKey).toBe(PROVIDER_KEY);
  });

  it('streams: content assembles, usage arrives when asked for, [DONE] ends it', async () => {
    upstream.script({ content: 'one two three four', chunks: 4 });
    const stream = await client.chat.completions.create({
      model: 'gpt-4o-mini',
      stream: true,
      stream_options: { include_usage: true },
      messages: [{ role: 'user', content: 'count' }],
    });
    let text = '';
    let usage: OpenAI.CompletionUsage | undefined | null;
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta?.content ?? '';
      if (chunk.usage) usage = chunk.usage;
    }
    expect(text).toBe('one two three four');
    expect(usage?.completion_tokens).toBeGreaterThan(0);
  });

  it('does not send a usage chunk the client did not ask for (the gateway asks upstream for its ledger)', async () => {
    const res = await fetch(`${server.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { ...auth, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'gpt-4o-mini', stream: true, messages: [{ role: 'user', content: 'hi' }] }),
    });
    const body = await res.text();
    expect(res.headers.get('content-type')).toContain('text/event-stream');
    expect(body.trim().endsWith('data: [DONE]')).toBe(true);
    expect(body).not.toContain('"choices":[]');
    expect(upstream.requests.find((r) => r.method === 'POST')!.body?.stream_options).toEqual({ include_usage: true });
  });

  it('records usage and cost for a stream made through the router API (a chat-session completion), still without a usage chunk the client did not ask for', async () => {
    const session = await post<{ data: { id: string } }>(server.url, '/hecate/v1/chat/sessions', {});
    expect(session.status).toBe(201);
    upstream.script({ content: 'one two three', chunks: 3, usage: { input: 11, output: 7 } });
    const res = await fetch(`${server.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { ...auth, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'gpt-4o-mini', stream: true, session_id: session.body.data.id, messages: [{ role: 'user', content: 'hi' }] }),
    });
    const body = await res.text();
    expect(body.trim().endsWith('data: [DONE]')).toBe(true);
    expect(body).not.toContain('"usage"');
    expect(upstream.requests.find((r) => r.method === 'POST')!.body?.stream_options).toEqual({ include_usage: true });
    const requestId = res.headers.get('x-request-id')!;
    const events = await waitFor(
      async () => {
        const r = await api<{ data: Array<Record<string, unknown>> }>(server.url, `/hecate/v1/usage/events?request_id=${requestId}`);
        return r.body.data.length > 0 ? r.body.data : undefined;
      },
      { what: 'ledger row' },
    );
    expect(events[0]).toMatchObject({ input_tokens: 11, output_tokens: 7, cost_micros_usd: Math.ceil((11 * 150_000 + 7 * 600_000) / 1e6) });
  });

  it('round-trips parallel tool calls', async () => {
    upstream.script({
      toolCalls: [
        { name: 'get_weather', arguments: { city: 'Oslo' } },
        { name: 'get_time', arguments: { tz: 'CET' } },
      ],
    });
    const tools: OpenAI.ChatCompletionTool[] = [
      { type: 'function', function: { name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } } },
      { type: 'function', function: { name: 'get_time', parameters: { type: 'object', properties: { tz: { type: 'string' } } } } },
    ];
    const first = await client.chat.completions.create({
      model: 'gpt-4o-mini',
      tools,
      tool_choice: 'auto',
      messages: [{ role: 'user', content: 'weather and time?' }],
    });
    const calls = first.choices[0].message.tool_calls ?? [];
    expect(first.choices[0].finish_reason).toBe('tool_calls');
    expect(calls.map((c) => (c as { function: { name: string } }).function.name)).toEqual(['get_weather', 'get_time']);
    upstream.script({ content: 'It is sunny at noon.' });
    const second = await client.chat.completions.create({
      model: 'gpt-4o-mini',
      tools,
      messages: [
        { role: 'user', content: 'weather and time?' },
        first.choices[0].message,
        ...calls.map((c) => ({ role: 'tool' as const, tool_call_id: c.id, content: c.id.endsWith('0') ? 'sunny' : 'noon' })),
      ],
    });
    expect(second.choices[0].message.content).toBe('It is sunny at noon.');
    const sent = upstream.requests[upstream.requests.length - 1].body!;
    expect(sent.tool_choice).toBeUndefined();
    expect((sent.messages as Array<{ role: string; tool_call_id?: string }>).filter((m) => m.role === 'tool').map((m) => m.tool_call_id)).toEqual(
      calls.map((c) => c.id),
    );
    expect(sent.tools).toHaveLength(2);
  });

  it('streams tool calls', async () => {
    upstream.script({ toolCalls: [{ name: 'lookup', arguments: { q: 'x' } }] });
    const stream = await client.chat.completions.create({
      model: 'gpt-4o-mini',
      stream: true,
      tools: [{ type: 'function', function: { name: 'lookup', parameters: { type: 'object' } } }],
      messages: [{ role: 'user', content: 'find x' }],
    });
    let args = '';
    let name = '';
    let finish: string | null | undefined;
    for await (const chunk of stream) {
      const tc = chunk.choices[0]?.delta?.tool_calls?.[0];
      if (tc?.function?.name) name = tc.function.name;
      args += tc?.function?.arguments ?? '';
      finish = chunk.choices[0]?.finish_reason ?? finish;
    }
    expect(name).toBe('lookup');
    expect(JSON.parse(args)).toEqual({ q: 'x' });
    expect(finish).toBe('tool_calls');
  });

  it('accepts vision content parts and passes unknown fields, response_format and tool_choice through', async () => {
    const image = 'data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8/5+hHgAHggJ/PchI7wAAAABJRU5ErkJggg==';
    const res = await client.chat.completions.create({
      model: 'gpt-4o',
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'describe' },
            { type: 'image_url', image_url: { url: image, detail: 'low' } },
          ],
        },
      ],
      response_format: { type: 'json_object' },
      // @ts-expect-error: an upstream-specific extension field must reach the upstream untouched
      top_k_custom: 7,
    });
    expect(res.choices[0].message.content).toBe('echo: describe');
    const sent = upstream.requests.find((r) => r.method === 'POST')!.body!;
    expect((sent.messages as Array<{ content: unknown }>)[0].content).toEqual([
      { type: 'text', text: 'describe' },
      { type: 'image_url', image_url: { url: image, detail: 'low' } },
    ]);
    expect(sent.response_format).toEqual({ type: 'json_object' });
    expect(sent.top_k_custom).toBe(7);
  });

  it("removes Hecate's message fields (content_blocks, tool_error) before an OpenAI upstream, keeping unknown top-level fields", async () => {
    const call = { id: 'call_1', type: 'function', function: { name: 'lookup', arguments: '{}' } };
    const res = await post<{ choices: Array<{ message: { content: string } }> }>(server.url, '/v1/chat/completions', {
      model: 'gpt-4o-mini',
      top_k_custom: 7,
      messages: [
        { role: 'user', content: 'look it up' },
        {
          role: 'assistant',
          content: null,
          tool_calls: [call],
          content_blocks: [
            { type: 'thinking', thinking: 'hmm', signature: 'c2ln' },
            { type: 'tool_use', id: 'call_1', name: 'lookup', input: {} },
          ],
        },
        { role: 'tool', tool_call_id: 'call_1', content: 'The tool call was not executed: stopped.', tool_error: true },
        { role: 'user', content: 'and now?' },
      ],
    });
    expect(res.status).toBe(200);
    expect(res.body.choices[0].message.content).toBe('echo: and now?');
    const sent = upstream.requests.find((r) => r.method === 'POST')!.body!;
    expect(sent.top_k_custom).toBe(7);
    expect(sent.messages).toEqual([
      { role: 'user', content: 'look it up' },
      { role: 'assistant', content: null, tool_calls: [call] },
      { role: 'tool', tool_call_id: 'call_1', content: 'The tool call was not executed: stopped.' },
      { role: 'user', content: 'and now?' },
    ]);
  });

  it('pins a provider with the extra `provider` field and strips it before the upstream', async () => {
    const { response } = await client.chat.completions
      // @ts-expect-error: Hecate's extra request field
      .create({ model: 'llama3.2', provider: 'fakeai', messages: [{ role: 'user', content: 'hi' }] })
      .withResponse();
    expect(response.headers.get('x-runtime-route-reason')).toBe('pinned_provider_model');
    expect(upstream.requests.find((r) => r.method === 'POST')!.body?.provider).toBeUndefined();
  });

  it('answers an unknown model with 422 model_not_configured and suggestions', async () => {
    const err = await client.chat.completions.create({ model: 'gpt-4o-mni', messages: [{ role: 'user', content: 'x' }] }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.UnprocessableEntityError);
    const e = err as InstanceType<typeof OpenAI.UnprocessableEntityError>;
    expect(e.status).toBe(422);
    const body = e.error as Record<string, unknown>;
    expect(body.type).toBe('model_not_configured');
    expect(body.suggested_models).toEqual(expect.arrayContaining(['gpt-4o-mini']));
    expect((body.suggested_models as string[])[0]).toBe('gpt-4o-mini');
    expect(body).toMatchObject({ user_message: expect.any(String), operator_action: expect.any(String), request_id: expect.any(String) });
    expect(e.headers?.get('x-ratelimit-limit')).toBe('0');
  });

  it('rejects malformed JSON with 400 and an oversized body with 413, in the OpenAI error shape', async () => {
    const bad = await api(server.url, '/v1/chat/completions', { method: 'POST', body: '{"model": "gpt-4o-mini", "messages": [' });
    expect(bad.status).toBe(400);
    expect(bad.body).toMatchObject({ error: { type: 'invalid_request', code: 'invalid_request', request_id: expect.any(String) } });
    const huge = await post(server.url, '/v1/chat/completions', { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'x'.repeat(300_000) }] });
    expect(huge.status).toBe(413);
    expect(huge.body).toMatchObject({ error: { type: 'payload_too_large' } });
    const invalid = await post(server.url, '/v1/chat/completions', { model: 'gpt-4o-mini', messages: [] });
    expect(invalid.status).toBe(400);
    // Like OpenAI, `param` names the offending field when the gateway knows it (null otherwise, as for bad JSON).
    expect(invalid.body).toMatchObject({ error: { type: 'invalid_request', param: 'messages' } });
    expect(bad.body).toMatchObject({ error: { param: null } });
  });

  it('requires a credential when GATEWAY_AUTH_TOKEN is set', async () => {
    const anon = new OpenAI({ baseURL: `${server.url}/v1`, apiKey: 'wrong-token', maxRetries: 0 });
    const err = await anon.models.list().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.AuthenticationError);
  });

  it('maps upstream failures without leaking the upstream URL or key', async () => {
    upstream.script({
      status: 400,
      errorBody: { error: { message: `bad request for key ${PROVIDER_KEY} at ${upstream.url}`, type: 'invalid_request_error' } },
    });
    const err = (await client.chat.completions
      .create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'x' }] })
      .catch((e: unknown) => e)) as InstanceType<typeof OpenAI.APIError>;
    expect(err.status).toBe(400);
    expect(JSON.stringify(err.error)).not.toContain(PROVIDER_KEY);
  });

  it('aborts the upstream request when the client disconnects mid-stream', async () => {
    upstream.script({ content: 'a b c d e f g h i j k l m n o p', chunks: 16, chunkIntervalMs: 150 });
    const controller = new AbortController();
    const res = await fetch(`${server.url}/v1/chat/completions`, {
      method: 'POST',
      signal: controller.signal,
      headers: { ...auth, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'gpt-4o-mini', stream: true, messages: [{ role: 'user', content: 'slow' }] }),
    });
    const reader = res.body!.getReader();
    await reader.read();
    controller.abort();
    await upstream.waitFor((u) => u.requests.find((r) => r.method === 'POST')?.aborted === true, 5000);
    expect(upstream.requests.find((r) => r.method === 'POST')!.aborted).toBe(true);
  });

  it('records one ledger row per upstream call and a trace per request', async () => {
    const { response } = await client.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'ledger' }] }).withResponse();
    const requestId = response.headers.get('x-request-id')!;
    const events = await waitFor(
      async () => {
        const r = await api<{ data: Array<Record<string, unknown>> }>(server.url, `/hecate/v1/usage/events?request_id=${requestId}`);
        return r.body.data.length > 0 ? r.body.data : undefined;
      },
      { what: 'ledger row' },
    );
    expect(events[0]).toMatchObject({
      request_id: requestId,
      provider: 'fakeai',
      model: 'gpt-4o-mini',
      status: 'ok',
      attempt: 1,
      tenant_id: 'default',
      route_reason: 'requested_model',
    });
    expect(events[0].input_tokens).toBeGreaterThan(0);
    expect(events[0].cost_micros_usd).toBeGreaterThan(0);
    const summary = await api<{ data: Record<string, unknown> }>(server.url, '/hecate/v1/usage/summary');
    expect(summary.body.data.requests).toBeGreaterThan(0);
    const trace = await api<{ data: GatewayTrace }>(server.url, `/hecate/v1/traces?request_id=${requestId}`);
    expect(trace.status).toBe(200);
    expect(trace.body.data).toMatchObject({
      request_id: requestId,
      route: { reason: 'requested_model', selected_provider: 'fakeai', failover: false, candidates: [{ provider: 'fakeai', status: 'selected' }] },
      attempts: [{ provider: 'fakeai', attempt: 1, status: 'ok' }],
    });
    const attrs = trace.body.data.spans[0].attributes;
    expect(attrs).toMatchObject({
      'gen_ai.operation.name': 'chat',
      'gen_ai.system': 'fakeai',
      'gen_ai.request.model': 'gpt-4o-mini',
      'gen_ai.response.model': 'gpt-4o-mini',
    });
    expect(attrs['gen_ai.usage.input_tokens']).toBeGreaterThan(0);
  });

  it('never reveals the provider key in responses, traces or logs', async () => {
    await api(server.url, '/hecate/v1/settings/providers');
    await api(server.url, '/hecate/v1/providers/status');
    await api(server.url, '/hecate/v1/traces?limit=50');
    for (const body of seenBodies) expect(body).not.toContain(PROVIDER_KEY);
    expect(server.output()).not.toContain(PROVIDER_KEY);
    expect(server.output()).not.toContain(OPERATOR_TOKEN);
  });
});
