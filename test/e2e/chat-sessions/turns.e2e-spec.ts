import { waitFor } from '../../support/infra';
import { call, fakeUpstream, FakeUpstream, Loose, openSse, parseSse, providerEnv, ServerProcess, startChatServer } from './chat-harness';

const S = '/hecate/v1/chat/sessions';
type Msg = { id: string; role: string; content: unknown; status: string; parent_id: string | null; [k: string]: unknown };

/** docs/api.md §3 server-side conversations through the gateway router, embedded mode (npm start). */
describe('chat session turns (embedded)', () => {
  let upstream: FakeUpstream;
  let server: ServerProcess;
  let base: string;

  beforeAll(async () => {
    upstream = await fakeUpstream();
    server = await startChatServer({ ...providerEnv('fake', upstream), GATEWAY_DEFAULT_MODEL: 'gpt-4o-mini', GATEWAY_PROVIDER_MAX_ATTEMPTS: '1' });
    base = server.url;
  });
  afterEach(() => upstream.reset());
  afterAll(async () => {
    await server?.stop();
    await upstream?.close();
  });

  const newSession = async (body: Record<string, unknown> = {}) => (await call(base, 'POST', S, body)).body.data.id as string;
  const path = async (id: string) => (await call(base, 'GET', `${S}/${id}`)).body.data.messages as Msg[];
  const completions = () => upstream.requests.filter((r) => r.path === '/v1/chat/completions');
  const lastSent = () => completions().pop()!.body!.messages!;
  const tree = async (id: string) => (await call(base, 'GET', `${S}/${id}?view=tree`)).body.data.messages as Msg[];

  it('sends and answers JSON; replays the active path with the session system prompt', async () => {
    const id = await newSession({ system_prompt: 'Be terse.' });
    const first = await call(base, 'POST', `${S}/${id}/messages`, { content: 'hello', model: 'gpt-4o-mini' });
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({
      object: 'chat_session_turn',
      data: {
        session_id: id,
        user_message: { role: 'user', content: 'hello', status: 'complete' },
        assistant_message: { role: 'assistant', content: 'echo: hello', status: 'complete' },
        provider_call: { provider: 'fake', model: 'gpt-4o-mini', status: 'completed' },
      },
    });
    expect(first.body.data.assistant_message.produced_by_call_id).toBe(first.body.data.provider_call.id);
    expect(first.body.data.usage.total_tokens).toBeGreaterThan(0);
    await call(base, 'POST', `${S}/${id}/messages`, { content: 'again' });
    expect(completions()[1].body!.messages).toEqual([
      { role: 'system', content: 'Be terse.' },
      { role: 'user', content: 'hello' },
      // Stored with its content_blocks; an OpenAI-protocol upstream gets only OpenAI fields.
      { role: 'assistant', content: 'echo: hello' },
      { role: 'user', content: 'again' },
    ]);
    const got = await call(base, 'GET', `${S}/${id}`);
    expect(got.body.data).toMatchObject({ message_count: 4, provider_call_count: 2, last_model: 'gpt-4o-mini', last_provider: 'fake' });
  });

  it('streams SSE: message.created, delta frames whose id is their index, then done', async () => {
    const id = await newSession();
    upstream.script({ content: 'one two three', chunks: 3 });
    const res = await call(base, 'POST', `${S}/${id}/messages`, { content: 'count', stream: true });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/text\/event-stream/);
    const events = parseSse(res.text);
    expect(events[0]).toMatchObject({ event: 'message.created', data: { session_id: id } });
    const deltas = events.filter((e) => e.event === 'delta');
    expect(deltas.map((e) => [e.id, e.data.index])).toEqual([
      ['1', 1],
      ['2', 2],
      ['3', 3],
    ]);
    expect(deltas.map((e) => e.data.content).join('')).toBe('one two three');
    const done = events[events.length - 1];
    expect(done).toMatchObject({
      event: 'done',
      data: { assistant_message: { id: events[0].data.assistant_message_id, content: 'one two three', status: 'complete' } },
    });
    expect(done.data.cost_usd).toMatch(/^\d+\.\d{6}$/);
  });

  it('regenerates, edits and switches branches; view=tree shows every branch', async () => {
    const id = await newSession();
    const t1 = (await call(base, 'POST', `${S}/${id}/messages`, { content: 'q1' })).body.data;
    const t2 = (await call(base, 'POST', `${S}/${id}/messages`, { content: 'q2' })).body.data;
    upstream.script({ content: 'another answer' });
    const regen = await call(base, 'POST', `${S}/${id}/messages/${t2.assistant_message.id}/regenerate`, {});
    expect(regen.body.data.assistant_message).toMatchObject({ content: 'another answer', parent_id: t2.user_message.id });
    expect((await path(id)).map((m) => m.content)).toEqual(['q1', 'echo: q1', 'q2', 'another answer']);

    const edit = await call(base, 'POST', `${S}/${id}/messages/${t1.user_message.id}/edit`, { content: 'q1 changed' });
    expect(edit.body.data).toMatchObject({ user_message: { content: 'q1 changed', parent_id: null }, assistant_message: { content: 'echo: q1 changed' } });
    expect((await path(id)).map((m) => m.content)).toEqual(['q1 changed', 'echo: q1 changed']);
    expect(lastSent()).toEqual([{ role: 'user', content: 'q1 changed' }]);

    const switched = await call(base, 'PUT', `${S}/${id}/active-leaf`, { message_id: t1.user_message.id });
    expect(switched.body.data.messages.map((m: Msg) => m.content)).toEqual(['q1', 'echo: q1', 'q2', 'another answer']);
    expect(switched.body.data.active_leaf_id).toBe(regen.body.data.assistant_message.id);

    const all = await tree(id);
    expect(all).toHaveLength(7);
    const q2 = all.find((m) => m.content === 'q2')!;
    expect(q2.children_ids).toEqual([t2.assistant_message.id, regen.body.data.assistant_message.id]);
    expect(all.find((m) => m.id === regen.body.data.assistant_message.id)).toMatchObject({ sibling_index: 1, sibling_count: 2, children_ids: [] });
    expect(all.find((m) => m.content === 'q1 changed')).toMatchObject({ sibling_index: 1, sibling_count: 2, parent_id: null });
    expect((await call(base, 'PUT', `${S}/${id}/active-leaf`, { message_id: 'msg_nope' })).status).toBe(404);
  });

  /** The usage rows recorded under a request id, once there are at least `n`. */
  const usageRows = (requestId: string, n = 1) =>
    waitFor(
      async () => {
        const r = await call(base, 'GET', `/hecate/v1/usage/events?request_id=${requestId}`);
        return r.body.data.length >= n ? (r.body.data as Loose[]) : undefined;
      },
      { what: `${n} usage row(s) of ${requestId}` },
    );

  it("records the request's id on the usage row and trace of a turn's generation and of a compaction", async () => {
    const id = await newSession();
    const turnId = `turn-origin-${Date.now()}`;
    const turn = await call(base, 'POST', `${S}/${id}/messages`, { content: 'remember me' }, { 'x-request-id': turnId });
    expect(turn.status).toBe(200);
    expect(turn.headers.get('x-request-id')).toBe(turnId);
    expect((await usageRows(turnId))[0]).toMatchObject({ request_id: turnId, provider: 'fake', endpoint: `/hecate/v1/chat/sessions/send` });
    expect((await call(base, 'GET', `/hecate/v1/traces?request_id=${turnId}`)).status).toBe(200);
    const regenId = `regen-origin-${Date.now()}`;
    const regen = await call(base, 'POST', `${S}/${id}/messages/${turn.body.data.assistant_message.id}/regenerate`, {}, { 'x-request-id': regenId });
    expect(regen.status).toBe(200);
    expect((await usageRows(regenId))[0]).toMatchObject({ request_id: regenId, endpoint: '/hecate/v1/chat/sessions/regenerate' });
    await call(base, 'POST', `${S}/${id}/messages`, { content: 'and again' });
    const compactId = `compact-origin-${Date.now()}`;
    const compacted = await call(base, 'POST', `${S}/${id}/compact`, { keep_last_messages: 1 }, { 'x-request-id': compactId });
    expect(compacted.status).toBe(200);
    expect((await usageRows(compactId))[0]).toMatchObject({ request_id: compactId, endpoint: '/hecate/v1/chat/sessions/compact' });
  });

  it("records the request's id on the usage row of an edit's and a continue's generation", async () => {
    const id = await newSession();
    const first = (await call(base, 'POST', `${S}/${id}/messages`, { content: 'q1' })).body.data;
    const editId = `edit-origin-${Date.now()}`;
    const edit = await call(base, 'POST', `${S}/${id}/messages/${first.user_message.id}/edit`, { content: 'q1 edited' }, { 'x-request-id': editId });
    expect(edit.status).toBe(200);
    expect(edit.body.data.assistant_message).toMatchObject({ content: 'echo: q1 edited', status: 'complete' });
    expect(await usageRows(editId)).toEqual([expect.objectContaining({ request_id: editId, provider: 'fake', endpoint: '/hecate/v1/chat/sessions/edit' })]);

    // A stopped reply is what continue extends.
    upstream.script({ content: 'alpha beta gamma', chunks: 3, chunkIntervalMs: 10, hangAfterChunks: 1 });
    const sse = await openSse(base, `${S}/${id}/messages`, { content: 'go on', stream: true });
    const created = await sse.until((e) => e.event === 'message.created');
    await sse.until((e) => e.event === 'delta' && e.data.index === 1);
    expect((await call(base, 'POST', `${S}/${id}/stop`, {})).status).toBe(200);
    await sse.until((e) => e.event === 'done');
    upstream.script({ content: 'gamma.' });
    const continueId = `continue-origin-${Date.now()}`;
    const cont = await call(base, 'POST', `${S}/${id}/messages/${created.data.assistant_message_id}/continue`, {}, { 'x-request-id': continueId });
    expect(cont.status).toBe(200);
    expect(cont.body.data.assistant_message).toMatchObject({ id: created.data.assistant_message_id, status: 'complete' });
    expect(await usageRows(continueId)).toEqual([
      expect.objectContaining({ request_id: continueId, provider: 'fake', endpoint: '/hecate/v1/chat/sessions/continue' }),
    ]);
  });

  it("records the id of the request whose turn triggered an automatic compaction on the compaction's usage row", async () => {
    const cap = await call(base, 'PUT', '/hecate/v1/model-capabilities/overrides', {
      provider: 'fake',
      model: 'small-ctx',
      tool_calling: 'none',
      max_context_tokens: 300,
    });
    expect(cap.status).toBe(200);
    const id = await newSession();
    let sessionId = id;
    let trigger: string | undefined;
    for (let i = 0; i < 20 && !trigger; i++) {
      const requestId = `auto-compact-origin-${i}-${Date.now()}`;
      const res = await call(
        base,
        'POST',
        `${S}/${sessionId}/messages`,
        { content: `message number ${i} with some padding words`, model: 'small-ctx' },
        { 'x-request-id': requestId },
      );
      expect(res.status).toBe(200);
      if (res.body.data.compacted_from_session_id) trigger = requestId;
      sessionId = res.body.data.session_id;
    }
    expect(trigger).toBeDefined();
    expect(sessionId).not.toBe(id);
    // One request, two generations: the summary before the turn and the turn itself.
    const rows = await usageRows(trigger!, 2);
    expect(rows.map((r) => [r.request_id, r.endpoint]).sort()).toEqual([
      [trigger, '/hecate/v1/chat/sessions/compact'],
      [trigger, '/hecate/v1/chat/sessions/send'],
    ]);
  });

  it('keeps a failed reply with its error out of replay', async () => {
    const id = await newSession();
    upstream.script({ status: 500 });
    const failed = await call(base, 'POST', `${S}/${id}/messages`, { content: 'boom?' });
    expect(failed.status).toBe(502);
    expect(failed.body.error).toMatchObject({ type: 'upstream_error', session_id: id });
    const [user, assistant] = await tree(id);
    expect(assistant).toMatchObject({ id: failed.body.error.assistant_message_id, status: 'failed', error: { type: 'upstream_error' } });
    const retry = await call(base, 'POST', `${S}/${id}/messages/${assistant.id}/regenerate`, {});
    expect(retry.body.data.assistant_message).toMatchObject({ content: 'echo: boom?', parent_id: user.id });
    await call(base, 'POST', `${S}/${id}/messages`, { content: 'next' });
    expect(lastSent().map((m) => m.content)).toEqual(['boom?', 'echo: boom?', 'next']);
  });

  it('makes client_request_id idempotent: same ids, one generation', async () => {
    const id = await newSession();
    upstream.script({ content: 'slow', latencyMs: 300 });
    const body = { content: 'once', client_request_id: 'req-1' };
    const [a, b] = await Promise.all([call(base, 'POST', `${S}/${id}/messages`, body), call(base, 'POST', `${S}/${id}/messages`, body)]);
    expect(a.status).toBe(200);
    expect(b.status).toBe(200);
    expect(b.body.data.user_message.id).toBe(a.body.data.user_message.id);
    expect(b.body.data.assistant_message).toMatchObject({ id: a.body.data.assistant_message.id, content: 'slow', status: 'complete' });
    const again = await call(base, 'POST', `${S}/${id}/messages`, { ...body, stream: true });
    expect(parseSse(again.text).pop()).toMatchObject({ event: 'done', data: { assistant_message: { id: a.body.data.assistant_message.id } } });
    expect(completions()).toHaveLength(1);
    expect(await tree(id)).toHaveLength(2);
    expect((await call(base, 'POST', `${S}/${id}/messages`, { content: 'different', client_request_id: 'req-1' })).body.error.type).toBe(
      'chat_session.idempotency_mismatch',
    );
  });

  it('answers 409 branch_busy on the same leaf while another leaf may generate; stop keeps the partial text', async () => {
    const id = await newSession();
    const root = (await call(base, 'POST', `${S}/${id}/messages`, { content: 'start' })).body.data;
    upstream.script({ content: 'alpha beta gamma delta', chunks: 4, chunkIntervalMs: 20, hangAfterChunks: 2 });
    const sse = await openSse(base, `${S}/${id}/messages`, { content: 'tell a story', stream: true });
    const created = await sse.until((e) => e.event === 'message.created');
    await sse.until((e) => e.event === 'delta' && e.data.index === 2);
    const busy = await call(base, 'POST', `${S}/${id}/messages`, { content: 'meanwhile' });
    expect(busy.status).toBe(409);
    expect(busy.body.error).toMatchObject({ type: 'chat_session.branch_busy' });
    // Another leaf of the same session is free.
    const other = await call(base, 'POST', `${S}/${id}/messages/${root.assistant_message.id}/regenerate`, {});
    expect(other.status).toBe(200);

    const stop = await call(base, 'POST', `${S}/${id}/stop`, {});
    expect(stop.status).toBe(200);
    expect(stop.body.data.stopped).toEqual([expect.objectContaining({ id: created.data.assistant_message_id, status: 'stopped', content: 'alpha beta ' })]);
    const done = await sse.until((e) => e.event === 'done');
    expect(done.data.assistant_message).toMatchObject({ status: 'stopped', content: 'alpha beta ' });
    await waitFor(() => upstream.requests.some((r) => r.aborted), { what: 'the upstream request to be aborted' });
    expect((await call(base, 'POST', `${S}/${id}/stop`, {})).body.error.type).toBe('chat_session.not_running');

    // Continue: an OpenAI-protocol model answers anew after a trailing assistant message, so the call is made from
    // the start (docs/takeover.md) — a `reset` frame first, and the reply replaces the partial, never follows it.
    upstream.script({ content: 'A whole new story.', chunks: 3 });
    await call(base, 'PUT', `${S}/${id}/active-leaf`, { message_id: created.data.assistant_message_id });
    const cont = await openSse(base, `${S}/${id}/messages/${created.data.assistant_message_id}/continue`, { stream: true });
    const contDone = await cont.until((e) => e.event === 'done');
    expect(contDone.data.assistant_message).toMatchObject({ id: created.data.assistant_message_id, status: 'complete', content: 'A whole new story.' });
    const frames = cont.events.filter((e) => e.event === 'reset' || e.event === 'delta');
    expect(frames[0]).toMatchObject({ event: 'reset', id: '1', data: { index: 1, type: 'reset', from_index: 1, reason: 'restarted' } });
    expect(
      frames
        .slice(1)
        .map((e) => e.data.content)
        .join(''),
    ).toBe('A whole new story.');
    const last = lastSent();
    expect(last[last.length - 1]).toMatchObject({ role: 'user', content: 'tell a story' });
    expect((await path(id)).find((m) => m.id === created.data.assistant_message_id)).toMatchObject({ content: 'A whole new story.' });
  });

  it('continue of a stopped reply on a model that continues prefills (assistant_prefill override): the partial is sent and extended in place, no reset', async () => {
    const id = await newSession();
    upstream.script({ content: 'alpha beta gamma delta.', chunks: 4, chunkIntervalMs: 20, hangAfterChunks: 2 });
    const sse = await openSse(base, `${S}/${id}/messages`, { content: 'tell a story', stream: true });
    const created = await sse.until((e) => e.event === 'message.created');
    await sse.until((e) => e.event === 'delta' && e.data.index === 2);
    await call(base, 'POST', `${S}/${id}/stop`, {});
    await sse.until((e) => e.event === 'done');
    const override = { provider: 'fake', model: 'gpt-4o-mini', tool_calling: 'parallel', assistant_prefill: true };
    expect((await call(base, 'PUT', '/hecate/v1/model-capabilities/overrides', override)).status).toBe(200);
    try {
      upstream.script({ content: 'alpha beta gamma delta.', continuePrefill: true });
      const cont = await openSse(base, `${S}/${id}/messages/${created.data.assistant_message_id}/continue`, { stream: true });
      const done = await cont.until((e) => e.event === 'done');
      expect(done.data.assistant_message).toMatchObject({ status: 'complete', content: 'alpha beta gamma delta.' });
      expect(cont.events.some((e) => e.event === 'reset')).toBe(false);
      const last = lastSent();
      expect(last[last.length - 1]).toMatchObject({ role: 'assistant', content: 'alpha beta ' });
    } finally {
      await call(base, 'DELETE', '/hecate/v1/model-capabilities/overrides?provider=fake&model=gpt-4o-mini');
    }
  });

  it('stop closes a tool call cut mid-stream with a synthetic tool_error result', async () => {
    const id = await newSession();
    upstream.script({
      content: 'Checking now',
      chunks: 2,
      toolCalls: [{ name: 'lookup', arguments: { q: 'weather in Oslo' }, id: 'call_cut' }],
      chunkIntervalMs: 10,
      hangAfterChunks: 4,
    });
    const sse = await openSse(base, `${S}/${id}/messages`, { content: 'weather?', stream: true });
    await sse.until((e) => e.event === 'delta' && e.data.index === 4);
    await call(base, 'POST', `${S}/${id}/stop`, {});
    await sse.until((e) => e.event === 'done');
    const messages = await path(id);
    expect(messages.map((m) => [m.role, m.status])).toEqual([
      ['user', 'complete'],
      ['assistant', 'stopped'],
      ['tool', 'complete'],
    ]);
    expect(messages[1]).toMatchObject({ content: 'Checking now', tool_calls: [{ id: 'call_cut', function: { name: 'lookup' } }] });
    expect(messages[2]).toMatchObject({ tool_call_id: 'call_cut', tool_error: true });
    // The transcript replays: the next turn sends the call and its result.
    await call(base, 'POST', `${S}/${id}/messages`, { content: 'never mind' });
    expect(lastSent().map((m) => m.role)).toEqual(['user', 'assistant', 'tool', 'user']);
  });

  it('a client disconnect does not stop the generation', async () => {
    const id = await newSession();
    upstream.script({ content: 'a b c d e f', chunks: 6, chunkIntervalMs: 30 });
    const sse = await openSse(base, `${S}/${id}/messages`, { content: 'go', stream: true });
    await sse.until((e) => e.event === 'delta');
    sse.close();
    await waitFor(async () => (await path(id))[1]?.status === 'complete', { what: 'the reply to complete without its client' });
    expect((await path(id))[1].content).toBe('a b c d e f');
  });

  it("scopes sessions to the tenant: another tenant's id is 404 everywhere", async () => {
    const key = await call(base, 'POST', '/hecate/v1/api-keys', { name: 'acme', scopes: ['inference', 'operator'], tenant_id: 'acme' });
    expect(key.status).toBe(201);
    const acme = { authorization: `Bearer ${key.body.data.secret}` };
    const mine = await newSession({ title: 'operator chat' });
    const theirs = (await call(base, 'POST', S, { title: 'acme chat' }, acme)).body.data.id as string;
    expect((await call(base, 'GET', S, undefined, acme)).body.data.map((r: Msg) => r.id)).toEqual([theirs]);
    expect((await call(base, 'GET', S)).body.data.map((r: Msg) => r.id)).not.toContain(theirs);
    for (const [method, path, body] of [
      ['GET', `${S}/${mine}`, undefined],
      ['GET', `${S}/${mine}/resolve`, undefined],
      ['PATCH', `${S}/${mine}`, { title: 'x' }],
      ['DELETE', `${S}/${mine}`, undefined],
      ['POST', `${S}/${mine}/messages`, { content: 'x' }],
      ['POST', `${S}/${mine}/stop`, {}],
      ['POST', `${S}/${mine}/compact`, {}],
      ['POST', '/v1/chat/completions', { model: 'gpt-4o-mini', session_id: mine, messages: [{ role: 'user', content: 'x' }] }],
    ] as const) {
      const res = await call(base, method, path, body, acme);
      expect([path, res.status]).toEqual([path, 404]);
    }
    expect((await call(base, 'GET', `${S}/${mine}`)).body.data.title).toBe('operator chat');
    expect(completions()).toHaveLength(0);
  });

  it('rejects bad input and unknown sessions with the seed envelope', async () => {
    const id = await newSession();
    expect((await call(base, 'POST', `${S}/${id}/messages`, { content: '' })).status).toBe(400);
    expect((await call(base, 'POST', `${S}/${id}/messages`, { content: 'x', extra: 1 })).status).toBe(400);
    const missing = await call(base, 'POST', `${S}/chat_missing/messages`, { content: 'x' });
    expect(missing.status).toBe(404);
    expect(missing.body.error).toMatchObject({ type: 'not_found', request_id: expect.any(String) });
    const user = (await path(id))[0];
    expect(user).toBeUndefined();
  });
});
