import { toChatMessageResponse, toProviderCallResponse } from '@modules/chat-sessions/chat-session-view.dto';
import type { BegunTurn, ReplayedTurn } from '@modules/chat-sessions/chat-turn-ledger.service';
import { call, openStore, StoreHarness, textReply } from './store-harness';

type Msg = Record<string, unknown> & { id: string; role: string; content?: unknown; status: string; parent_id: string | null };

/** Server-side turns (docs/api.md §3) and lineage (docs/api.md §2) at the store level: no provider involved. */
describe.each(['postgres', 'pglite'] as const)('chat trees, stop and lineage (%s)', (backend) => {
  let h: StoreHarness;
  beforeAll(
    async () =>
      (h = await openStore(backend, {
        GATEWAY_CHAT_GENERATION_STALE_AFTER: '2s',
        GATEWAY_CHAT_GENERATION_HEARTBEAT_INTERVAL: '500ms',
        GATEWAY_CHAT_STOP_TIMEOUT: '300ms',
      })),
    60_000,
  );
  afterAll(() => h?.close());

  const tenant = 'tenant-t';
  const owner = 'test-owner';
  const get = async (id: string, view: 'active_path' | 'tree' = 'active_path') =>
    (await h.sessions.get(tenant, id, view)) as unknown as { messages: Msg[]; active_leaf_id: string } & Record<string, unknown>;
  const complete = (turn: BegunTurn, text: string) => h.ledger.finish(turn, { status: 'complete', reply: textReply(text), call: call() }, turn.leaseToken);
  const send = async (sessionId: string, content: string, extra: { parentId?: string; clientRequestId?: string } = {}) =>
    (await h.ledger.beginSend(tenant, sessionId, { content, owner, ...extra })) as BegunTurn;
  const turn = async (sessionId: string, content: string, reply: string, extra: { parentId?: string } = {}) => {
    const t = await send(sessionId, content, extra);
    await complete(t, reply);
    return t;
  };

  it('regenerates as a sibling, edits as a sibling, switches branches, and replays only the active path', async () => {
    const s = await h.sessions.create(tenant, { system_prompt: 'sys' });
    const t1 = await turn(s.id, 'q1', 'a1');
    const t2 = await turn(s.id, 'q2', 'a2');
    expect(t2.replay).toEqual([
      { role: 'system', content: 'sys' },
      { role: 'user', content: 'q1' },
      { role: 'assistant', content: 'a1', content_blocks: [{ type: 'text', text: 'a1' }] },
      { role: 'user', content: 'q2' },
    ]);

    const regen = await h.ledger.beginRegenerate(tenant, s.id, { messageId: t2.assistant.id, owner });
    expect(regen.replay.map((m) => m.content)).toEqual(['sys', 'q1', 'a1', 'q2']);
    await complete(regen, 'a2-bis');
    let path = await get(s.id);
    expect(path.messages.map((m) => m.content)).toEqual(['q1', 'a1', 'q2', 'a2-bis']);
    expect(path.messages[3]).toMatchObject({ sibling_index: 1, sibling_count: 2 });

    const edit = (await h.ledger.beginEdit(tenant, s.id, { messageId: t1.userMessage!.id, content: 'q1 edited', regenerate: true, owner })) as BegunTurn;
    expect(edit.replay.map((m) => m.content)).toEqual(['sys', 'q1 edited']);
    await complete(edit, 'a1-edited');
    path = await get(s.id);
    expect(path.messages.map((m) => m.content)).toEqual(['q1 edited', 'a1-edited']);
    expect(path.messages[0]).toMatchObject({ sibling_index: 1, sibling_count: 2, parent_id: null });

    // Back to the original first message: its most recent path ends at the regenerated reply.
    await h.sessions.setActiveLeaf(tenant, s.id, t1.userMessage!.id);
    path = await get(s.id);
    expect(path.messages.map((m) => m.content)).toEqual(['q1', 'a1', 'q2', 'a2-bis']);
    const next = await send(s.id, 'q3');
    expect(next.replay.map((m) => m.content)).toEqual(['sys', 'q1', 'a1', 'q2', 'a2-bis', 'q3']);
    await complete(next, 'a3');

    const tree = await get(s.id, 'tree');
    expect(tree.messages).toHaveLength(9);
    const byContent = new Map(tree.messages.map((m) => [m.content, m]));
    expect(byContent.get('q2')).toMatchObject({ children_ids: [t2.assistant.id, regen.assistant.id] });
    expect(byContent.get('a2')).toMatchObject({ sibling_index: 0, sibling_count: 2, children_ids: [] });
    expect(byContent.get('q1')).toMatchObject({ sibling_index: 0, sibling_count: 2 });
  });

  it('allows generations on two leaves at once and answers 409 branch_busy on the same leaf', async () => {
    const s = await h.sessions.create(tenant, {});
    const root = await turn(s.id, 'q', 'a');
    const first = await send(s.id, 'x');
    await expect(send(s.id, 'y')).rejects.toMatchObject({ status: 409, type: 'chat_session.branch_busy' });
    await expect(send(s.id, 'y', { parentId: root.assistant.id })).rejects.toMatchObject({ status: 409, type: 'chat_session.branch_busy' });
    // Another leaf of the same session: the first user message gets a second reply meanwhile.
    const other = await h.ledger.beginRegenerate(tenant, s.id, { messageId: root.assistant.id, owner });
    await expect(h.ledger.beginRegenerate(tenant, s.id, { messageId: root.assistant.id, owner })).rejects.toMatchObject({ type: 'chat_session.branch_busy' });
    await complete(first, 'x!');
    await complete(other, 'a-bis');
    const follow = await send(s.id, 'z', { parentId: first.assistant.id });
    await complete(follow, 'z!');
    expect((await get(s.id)).messages.map((m) => m.content)).toEqual(['q', 'a', 'x', 'x!', 'z', 'z!']);
  });

  it('makes client_request_id idempotent: same ids back, content mismatch 409', async () => {
    const s = await h.sessions.create(tenant, {});
    const [a, b] = await Promise.allSettled([send(s.id, 'hi', { clientRequestId: 'r1' }), send(s.id, 'hi', { clientRequestId: 'r1' })]);
    const settled = [a, b] as PromiseSettledResult<BegunTurn | ReplayedTurn>[];
    const begun = settled.find((r) => r.status === 'fulfilled' && !('replayed' in r.value)) as PromiseFulfilledResult<BegunTurn>;
    const replay = settled.find((r) => r.status === 'fulfilled' && 'replayed' in r.value) as PromiseFulfilledResult<ReplayedTurn>;
    expect(begun).toBeDefined();
    expect(replay.value.userMessage.id).toBe(begun.value.userMessage!.id);
    expect(replay.value.assistant!.id).toBe(begun.value.assistant.id);
    await complete(begun.value, 'hello');
    const again = (await h.ledger.beginSend(tenant, s.id, { content: 'hi', clientRequestId: 'r1', owner })) as ReplayedTurn;
    expect(again).toMatchObject({ replayed: true, assistant: { id: begun.value.assistant.id, status: 'complete' } });
    await expect(send(s.id, 'other', { clientRequestId: 'r1' })).rejects.toMatchObject({ status: 409, type: 'chat_session.idempotency_mismatch' });
    expect((await get(s.id, 'tree')).messages).toHaveLength(2);
  });

  it('keeps a failed reply out of replay, and continues a stopped reply in place', async () => {
    const s = await h.sessions.create(tenant, {});
    const t = await send(s.id, 'q');
    await h.ledger.finish(t, { status: 'failed', reply: textReply(''), call: null, error: { type: 'upstream_error', message: 'boom' } }, t.leaseToken);
    let tree = await get(s.id, 'tree');
    expect(tree.messages[1]).toMatchObject({ status: 'failed', error: { type: 'upstream_error', message: 'boom' } });
    const retry = await h.ledger.beginRegenerate(tenant, s.id, { messageId: t.assistant.id, owner });
    expect(retry.replay.map((m) => m.content)).toEqual(['q']);
    await h.ledger.finish(retry, { status: 'stopped', reply: textReply('Once upon'), call: call() }, retry.leaseToken);
    const cont = await h.ledger.beginContinue(tenant, s.id, { messageId: retry.assistant.id, owner });
    expect(cont.replay.map((m) => m.content)).toEqual(['q', 'Once upon']);
    await h.ledger.finish(cont, { status: 'complete', reply: textReply(' a time.'), call: call() }, cont.leaseToken);
    tree = await get(s.id, 'tree');
    expect(tree.messages).toHaveLength(3);
    expect(tree.messages[2]).toMatchObject({ id: retry.assistant.id, status: 'complete', content: 'Once upon a time.' });
    await expect(h.ledger.beginContinue(tenant, s.id, { messageId: retry.assistant.id, owner })).rejects.toMatchObject({
      status: 409,
      type: 'chat_session.not_continuable',
    });
  });

  it('stop: 409 when nothing runs; takes over a silent owner from the live buffer and closes its open tool call', async () => {
    const s = await h.sessions.create(tenant, {});
    await expect(h.inflight.stop(tenant, s.id)).rejects.toMatchObject({ status: 409, type: 'chat_session.not_running' });
    const t = await send(s.id, 'use a tool');
    // What the (silent) owner streamed so far.
    await h.buffer.append(t.generationId, JSON.stringify({ content: 'Let me check' }));
    await h.buffer.append(
      t.generationId,
      JSON.stringify({ tool_calls: [{ index: 0, id: 'call_x', type: 'function', function: { name: 'lookup', arguments: '{"q":' } }] }),
    );
    const out = await h.inflight.stop(tenant, s.id);
    expect(out.stopped).toEqual([expect.objectContaining({ id: t.assistant.id, status: 'stopped', content: 'Let me check' })]);
    const path = await get(s.id);
    expect(path.messages.map((m) => [m.role, m.status])).toEqual([
      ['user', 'complete'],
      ['assistant', 'stopped'],
      ['tool', 'complete'],
    ]);
    expect(path.messages[1].tool_calls).toEqual([{ id: 'call_x', type: 'function', function: { name: 'lookup', arguments: '{}' } }]);
    expect(path.messages[2]).toMatchObject({ tool_call_id: 'call_x', tool_error: true });
    // The owner finishing later changes nothing.
    const late = await complete(t, 'too late');
    expect(late.skipped).toBe(true);
    await expect(h.inflight.stop(tenant, s.id)).rejects.toMatchObject({ type: 'chat_session.not_running' });
  });

  it('stop aborts a generation owned by this process; a dead owner no longer blocks its leaf', async () => {
    const s = await h.sessions.create(tenant, {});
    const t = await (h.ledger.beginSend(tenant, s.id, { content: 'q', owner: h.inflight.owner }) as Promise<BegunTurn>);
    const controller = await h.inflight.track(t.generationId, s.id, t.leaseToken);
    controller.signal.addEventListener('abort', () => {
      // The owner persists its partial text when aborted.
      void h.ledger
        .finish(t, { status: 'stopped', reply: textReply('part'), call: null }, t.leaseToken)
        .then(() => h.inflight.announceStopped(s.id, t.generationId));
    });
    const out = await h.inflight.stop(tenant, s.id, t.assistant.id);
    h.inflight.release(t.generationId);
    expect(controller.signal.reason).toBe('stop');
    expect(out.stopped).toEqual([expect.objectContaining({ id: t.assistant.id, status: 'stopped', content: 'part' })]);

    const dead = await send(s.id, 'again');
    await expect(send(s.id, 'blocked')).rejects.toMatchObject({ type: 'chat_session.branch_busy' });
    await h.rows(`UPDATE chat_session_generations SET lease_expires_at = now() - interval '1 second' WHERE id = $1`, [dead.generationId]);
    const after = await send(s.id, 'unblocked', { parentId: dead.userMessage!.parentId! });
    const tree = await get(s.id, 'tree');
    expect(tree.messages.find((m) => m.id === dead.assistant.id)).toMatchObject({ status: 'incomplete' });
    expect(after.replay.map((m) => m.content)).toEqual(['q', 'part', 'unblocked']);
  });

  it('compacts into a continuation; resolve, list and writes agree on the canonical session', async () => {
    const s = await h.sessions.create(tenant, { title: 'Long chat', system_prompt: 'sys' });
    for (let i = 0; i < 3; i++) await turn(s.id, `q${i}`, `a${i}`);
    const claim = await h.lineage.claim(tenant, s.id, { keepLastMessages: 2, owner });
    expect(claim.head.map((m) => m.messageJson.content)).toEqual(['q0', 'a0', 'q1', 'a1']);
    await expect(send(s.id, 'during compaction')).rejects.toMatchObject({ type: 'chat_session.branch_busy' });
    const { continuation } = await h.lineage.commit(claim, { text: 'They talked about q0 and q1.', call: call('summarizer') });

    const tip = await get(continuation.id);
    expect(tip).toMatchObject({
      parent_session_id: s.id,
      lineage_root_id: s.id,
      lineage_tip_id: continuation.id,
      compression_segment_count: 1,
      pre_compression_snapshot: false,
      title: 'Long chat',
    });
    expect(tip.messages.map((m) => [m.role, m.content])).toEqual([
      ['user', expect.stringContaining('They talked about q0 and q1.')],
      ['user', 'q2'],
      ['assistant', 'a2'],
    ]);
    expect(tip.messages[0]).toMatchObject({ kind: 'compaction_summary' });
    const snapshot = await get(s.id);
    expect(snapshot).toMatchObject({ pre_compression_snapshot: true, continuation_session_id: continuation.id, canonical_visible_session_id: continuation.id });
    expect(snapshot.messages).toHaveLength(6);

    const fromSnapshot = await h.sessions.resolve(tenant, s.id);
    const fromTip = await h.sessions.resolve(tenant, continuation.id);
    expect(fromSnapshot).toMatchObject({ requested_session_id: s.id, canonical_visible_session_id: continuation.id, reason: 'continuation' });
    expect(fromTip).toMatchObject({ requested_session_id: continuation.id, canonical_visible_session_id: continuation.id, reason: 'self' });
    expect(fromSnapshot.lineage).toMatchObject({ root_session_id: s.id, tip_session_id: continuation.id, session_ids: [s.id, continuation.id] });
    const list = await h.sessions.list(tenant, { includeSnapshots: false });
    const lineageRows = list.data.filter((r) => r.lineage_root_id === s.id);
    expect(lineageRows.map((r) => r.id)).toEqual([continuation.id]);
    expect((await h.sessions.list(tenant, { includeSnapshots: true })).data.filter((r) => r.lineage_root_id === s.id)).toHaveLength(2);

    // Every write to the snapshot: 409 superseded with the canonical id.
    const superseded = { status: 409, type: 'chat_session.superseded', details: { canonical_visible_session_id: continuation.id } };
    await expect(send(s.id, 'x')).rejects.toMatchObject(superseded);
    await expect(h.ledger.beginRegenerate(tenant, s.id, { messageId: tip.messages[2].id, owner })).rejects.toMatchObject(superseded);
    await expect(h.recorder.prepare(tenant, s.id, [{ role: 'user', content: 'x' }])).rejects.toMatchObject(superseded);
    await expect(h.lineage.claim(tenant, s.id, { owner })).rejects.toMatchObject(superseded);
    await expect(h.sessions.update(tenant, s.id, { title: 'x' })).rejects.toMatchObject(superseded);

    // A second compaction extends the same lineage; the tip moves for every row.
    await turn(continuation.id, 'q3', 'a3');
    const claim2 = await h.lineage.claim(tenant, continuation.id, { keepLastMessages: 2, owner });
    const second = await h.lineage.commit(claim2, { text: 'more', call: null });
    expect((await h.sessions.resolve(tenant, s.id)).canonical_visible_session_id).toBe(second.continuation.id);
    expect((await h.sessions.resolve(tenant, continuation.id)).canonical_visible_session_id).toBe(second.continuation.id);
    expect(second.continuation.compressionSegmentCount).toBe(2);

    // Deleting the visible row deletes the conversation; its ids are then plain 404s.
    await h.sessions.delete(tenant, second.continuation.id);
    for (const id of [s.id, continuation.id, second.continuation.id])
      await expect(h.sessions.resolve(tenant, id)).rejects.toMatchObject({ status: 404, type: 'not_found' });
  });

  it('renders GET (in SQL) exactly as the turn responses render each message and call', async () => {
    const s = await h.sessions.create(tenant, {});
    const t = await send(s.id, 'tools please', { clientRequestId: 'crid-1' });
    await h.ledger.finish(
      t,
      {
        status: 'stopped',
        reply: {
          text: 'x',
          content_blocks: [
            { type: 'thinking', thinking: 'hm', signature: 'sig' },
            { type: 'text', text: 'x' },
          ],
          tool_calls: [{ id: 'c9', type: 'function', function: { name: 'f', arguments: '{"a":1}' } }],
        },
        call: call(),
      },
      t.leaseToken,
    );
    const again = await h.ledger.beginRegenerate(tenant, s.id, { messageId: t.assistant.id, owner });
    await h.ledger.finish(
      again,
      { status: 'failed', reply: textReply(''), call: null, error: { type: 'upstream_error', message: 'boom', status: 502 } },
      again.leaseToken,
    );
    await h.sessions.setActiveLeaf(tenant, s.id, t.assistant.id);
    await h.lineage
      .commit(await h.lineage.claim(tenant, s.id, { keepLastMessages: 1, owner }), { text: 'sum', call: { ...call(), requestedModel: null, routeReason: '' } })
      .then(async ({ continuation }) => {
        for (const id of [s.id, continuation.id]) {
          const view = (await h.sessions.get(tenant, id, 'tree')) as unknown as { messages: Array<Record<string, unknown>>; provider_calls: unknown[] };
          const rows = await h.repo.messages(id);
          const stripped = view.messages.map(({ sibling_index: _i, sibling_count: _c, children_ids: _k, ...rest }) => rest);
          expect(stripped).toEqual(rows.map((m) => JSON.parse(JSON.stringify(toChatMessageResponse(m)))));
          expect(view.provider_calls).toEqual((await h.repo.calls(id)).map((c) => JSON.parse(JSON.stringify(toProviderCallResponse(c)))));
          expect(view.messages.length).toBeGreaterThan(0);
        }
      });
  });

  it('detects a compaction that won the race under the session lock', async () => {
    const s = await h.sessions.create(tenant, {});
    await turn(s.id, 'q0', 'a0');
    await turn(s.id, 'q1', 'a1');
    const prepared = await h.recorder.prepare(tenant, s.id, [{ role: 'user', content: 'late' }]);
    const claim = await h.lineage.claim(tenant, s.id, { keepLastMessages: 2, owner });
    const { continuation } = await h.lineage.commit(claim, { text: 'sum', call: null });
    await expect(h.recorder.record(prepared, { status: 'complete', reply: textReply('x'), call: call() })).rejects.toMatchObject({
      type: 'chat_session.superseded',
      details: { canonical_visible_session_id: continuation.id },
    });
  });
});
