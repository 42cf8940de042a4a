import { scaledStackEnv } from '../../support/harness';
import { ScratchDatabase, sql, waitFor } from '../../support/infra';
import { call, fakeUpstream, FakeUpstream, Loose, openSse, providerEnv, ServerProcess, startChatServer } from './chat-harness';

const S = '/hecate/v1/chat/sessions';

/**
 * Scaled mode: two api processes on one Postgres and one Redis. Stop reaches the process that streams;
 * concurrent writers through both processes keep one gap-free sequence; lineage resolves the same
 * everywhere.
 */
describe('chat sessions across two api processes (scaled)', () => {
  let db: ScratchDatabase;
  let upstream: FakeUpstream;
  let a: ServerProcess;
  let b: ServerProcess;

  beforeAll(async () => {
    upstream = await fakeUpstream();
    let env: Record<string, string>;
    ({ env, db } = await scaledStackEnv({
      migrateOnBoot: true,
      env: {
        GATEWAY_PROVIDER_MAX_ATTEMPTS: '1',
        GATEWAY_DEFAULT_MODEL: 'gpt-4o-mini',
        GATEWAY_CHAT_COMPACTION_MODEL: 'gpt-4o-mini',
        ...providerEnv('fake', upstream),
      },
    }));
    a = await startChatServer(env, 'api');
    b = await startChatServer(env, 'api');
  });
  afterEach(() => upstream.reset());
  afterAll(async () => {
    await Promise.all([a?.stop(), b?.stop()]);
    await upstream?.close();
    await db?.drop();
  });

  const newSession = async (body: Record<string, unknown> = {}) => (await call(a.url, 'POST', S, body)).body.data.id as string;
  const messages = async (base: string, id: string, view = '') => (await call(base, 'GET', `${S}/${id}${view}`)).body.data.messages as Loose[];

  it('stop from the other api process persists the partial text and closes the open tool call', async () => {
    const id = await newSession();
    upstream.script({
      content: 'Let me check that',
      chunks: 3,
      toolCalls: [{ name: 'search', arguments: { q: 'hecate' }, id: 'call_live' }],
      chunkIntervalMs: 10,
      hangAfterChunks: 5,
    });
    const sse = await openSse(a.url, `${S}/${id}/messages`, { content: 'find hecate', stream: true });
    const created = await sse.until((e) => e.event === 'message.created');
    await sse.until((e) => e.event === 'delta' && e.data.index === 5);

    // Process B sees the leaf busy and stops the generation A owns.
    const busy = await call(b.url, 'POST', `${S}/${id}/messages`, { content: 'hello?' });
    expect(busy.body.error?.type).toBe('chat_session.branch_busy');
    const stop = await call(b.url, 'POST', `${S}/${id}/stop`, {});
    expect(stop.status).toBe(200);
    expect(stop.body.data.stopped).toEqual([
      expect.objectContaining({ id: created.data.assistant_message_id, status: 'stopped', content: 'Let me check that' }),
    ]);
    const done = await sse.until((e) => e.event === 'done');
    expect(done.data.assistant_message.status).toBe('stopped');
    await waitFor(() => upstream.requests.some((r) => r.aborted), { what: 'A to abort its upstream request' });

    const path = await messages(b.url, id);
    expect(path.map((m) => [m.role, m.status])).toEqual([
      ['user', 'complete'],
      ['assistant', 'stopped'],
      ['tool', 'complete'],
    ]);
    expect(path[1].tool_calls).toEqual([{ id: 'call_live', type: 'function', function: { name: 'search', arguments: '{}' } }]);
    expect(path[2]).toMatchObject({ tool_call_id: 'call_live', tool_error: true });
    expect((await call(a.url, 'POST', `${S}/${id}/stop`, {})).body.error.type).toBe('chat_session.not_running');
    // The transcript replays on the other process.
    const next = await call(b.url, 'POST', `${S}/${id}/messages`, { content: 'go on' });
    expect(next.status).toBe(200);
    expect(
      upstream.requests
        .filter((r) => r.path === '/v1/chat/completions')
        .pop()!
        .body!.messages!.map((m) => m.role),
    ).toEqual(['user', 'assistant', 'tool', 'user']);
  });

  it('keeps one gap-free sequence with 50 concurrent writers through both processes', async () => {
    const id = await newSession();
    const results = await Promise.all(
      Array.from({ length: 50 }, (_, i) =>
        call(i % 2 ? a.url : b.url, 'POST', '/v1/chat/completions', {
          model: 'gpt-4o-mini',
          session_id: id,
          messages: [{ role: 'user', content: `writer ${i}` }],
        }),
      ),
    );
    expect(results.map((r) => r.status)).toEqual(Array(50).fill(200));
    const rows = await sql<{ sequence: number }>(db.url, 'SELECT sequence FROM chat_session_messages WHERE session_id = $1 ORDER BY sequence', [id]);
    expect(rows.map((r) => r.sequence)).toEqual(Array.from({ length: 100 }, (_, i) => i));
    const session = (await call(b.url, 'GET', `${S}/${id}`)).body.data;
    expect(session).toMatchObject({ message_count: 100, provider_call_count: 50 });
    expect(session.messages).toHaveLength(100);
  });

  it('compacts: snapshot and tip resolve to the list row; writes to the snapshot answer 409 with the canonical id; deleted ids are 404', async () => {
    const id = await newSession({ title: 'lineage' });
    for (const q of ['one', 'two', 'three']) await call(a.url, 'POST', `${S}/${id}/messages`, { content: q });
    const before = await messages(a.url, id);
    const compacted = await call(b.url, 'POST', `${S}/${id}/compact`, { keep_last_messages: 2 });
    expect(compacted.status).toBe(200);
    const tip = compacted.body.data;
    expect(tip).toMatchObject({
      parent_session_id: id,
      lineage_root_id: id,
      lineage_tip_id: tip.id,
      compression_segment_count: 1,
      pre_compression_snapshot: false,
      title: 'lineage',
    });
    expect(tip.messages.map((m: Loose) => m.content)).toEqual([expect.stringContaining('Summary of the earlier conversation'), 'three', 'echo: three']);
    const summaryCall = upstream.requests.filter((r) => r.path === '/v1/chat/completions').pop()!;
    expect(summaryCall.model).toBe('gpt-4o-mini');
    expect(JSON.stringify(summaryCall.body!.messages)).toContain('echo: two');

    const fromSnapshot = (await call(a.url, 'GET', `${S}/${id}/resolve`)).body.data;
    const fromTip = (await call(b.url, 'GET', `${S}/${tip.id}/resolve`)).body.data;
    expect(fromSnapshot).toMatchObject({
      requested_session_id: id,
      canonical_visible_session_id: tip.id,
      reason: 'continuation',
      lineage: { root_session_id: id, tip_session_id: tip.id, session_ids: [id, tip.id] },
    });
    expect(fromTip).toMatchObject({ requested_session_id: tip.id, canonical_visible_session_id: tip.id, reason: 'self' });
    const list = (await call(a.url, 'GET', S)).body.data.filter((r: Loose) => r.lineage_root_id === id);
    expect(list.map((r: Loose) => r.id)).toEqual([tip.id]);
    const all = (await call(a.url, 'GET', `${S}?include_snapshots=true`)).body.data.filter((r: Loose) => r.lineage_root_id === id);
    expect(all.map((r: Loose) => r.id).sort()).toEqual([id, tip.id].sort());

    // The snapshot stays readable as an archive.
    const snapshot = (await call(b.url, 'GET', `${S}/${id}`)).body.data;
    expect(snapshot).toMatchObject({ pre_compression_snapshot: true, continuation_session_id: tip.id, canonical_visible_session_id: tip.id });
    expect(snapshot.messages.map((m: Loose) => m.id)).toEqual(before.map((m) => m.id));

    const writes: Array<[string, string, unknown]> = [
      ['POST', `${S}/${id}/messages`, { content: 'x' }],
      ['POST', `${S}/${id}/messages/${before[5].id}/regenerate`, {}],
      ['POST', `${S}/${id}/messages/${before[4].id}/edit`, { content: 'y' }],
      ['POST', `${S}/${id}/messages/${before[5].id}/continue`, {}],
      ['POST', `${S}/${id}/compact`, {}],
      ['PUT', `${S}/${id}/active-leaf`, { message_id: before[1].id }],
      ['PATCH', `${S}/${id}`, { title: 'z' }],
    ];
    for (const [method, path, body] of writes) {
      const res = await call(b.url, method, path, body);
      expect([path, res.status, res.body.error?.type, res.body.error?.canonical_visible_session_id]).toEqual([path, 409, 'chat_session.superseded', tip.id]);
    }

    expect((await call(a.url, 'DELETE', `${S}/${tip.id}`)).status).toBe(200);
    for (const gone of [id, tip.id]) {
      const res = await call(b.url, 'GET', `${S}/${gone}/resolve`);
      expect([res.status, res.body.error.type]).toEqual([404, 'not_found']);
    }
  });

  it('compacts automatically before a generation when the context would exceed the ratio of the window', async () => {
    const cap = await call(a.url, 'PUT', '/hecate/v1/model-capabilities/overrides', {
      provider: 'fake',
      model: 'small-ctx',
      tool_calling: 'none',
      max_context_tokens: 300,
    });
    expect(cap.status).toBe(200);
    const id = await newSession();
    let sessionId = id;
    let compactedFrom: string | undefined;
    for (let i = 0; i < 20 && !compactedFrom; i++) {
      const res = await call(a.url, 'POST', `${S}/${sessionId}/messages`, { content: `message number ${i} with some padding words`, model: 'small-ctx' });
      expect(res.status).toBe(200);
      compactedFrom = res.body.data.compacted_from_session_id;
      sessionId = res.body.data.session_id;
    }
    expect(compactedFrom).toBe(id);
    expect(sessionId).not.toBe(id);
    const resolved = (await call(b.url, 'GET', `${S}/${id}/resolve`)).body.data;
    expect(resolved.canonical_visible_session_id).toBe(sessionId);
    const tipMessages = await messages(b.url, sessionId);
    expect(tipMessages[0].kind).toBe('compaction_summary');
    expect(tipMessages[tipMessages.length - 1]).toMatchObject({ role: 'assistant', status: 'complete' });
  });
});
