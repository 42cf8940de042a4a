import type { GeneratedReply } from '@modules/chat-sessions/chat-message';
import { call, openStore, StoreHarness, textReply } from './store-harness';

type Msg = Record<string, unknown> & { id: string; role: string; sequence: number; content?: unknown };

describe.each(['postgres', 'pglite'] as const)('chat session store (%s)', (backend) => {
  let h: StoreHarness;
  beforeAll(async () => (h = await openStore(backend)), 60_000);
  afterAll(() => h?.close());

  const tenant = 'tenant-a';
  const record = async (
    sessionId: string,
    messages: unknown[],
    reply: GeneratedReply = textReply('ok'),
    status: 'complete' | 'incomplete' | 'failed' = 'complete',
  ) => {
    const prepared = await h.recorder.prepare(tenant, sessionId, messages);
    return h.recorder.record(prepared, { status, reply, call: call() });
  };
  const get = async (id: string, view: 'active_path' | 'tree' = 'active_path') =>
    (await h.sessions.get(tenant, id, view)) as unknown as { messages: Msg[]; provider_calls: Record<string, unknown>[] } & Record<string, unknown>;

  describe('sessions', () => {
    it('creates, lists with the summary fields, updates and deletes; another tenant gets 404', async () => {
      const created = await h.sessions.create(tenant, { title: 'T', system_prompt: 'Be brief.', user: 'ann' });
      expect(created).toMatchObject({
        title: 'T',
        system_prompt: 'Be brief.',
        user: 'ann',
        message_count: 0,
        provider_call_count: 0,
        messages: [],
        provider_calls: [],
      });
      await record(created.id, [{ role: 'user', content: 'hi' }], textReply('hello'));
      const list = await h.sessions.list(tenant, { includeSnapshots: false });
      const row = list.data.find((r) => r.id === created.id)!;
      expect(row).toMatchObject({ message_count: 2, provider_call_count: 1, last_model: 'gpt-4o-mini', last_provider: 'openai', last_cost_usd: '0.000012' });
      expect(row.last_request_id).toMatch(/^req_/);
      expect(row).not.toHaveProperty('messages');

      await expect(h.sessions.get('tenant-b', created.id)).rejects.toMatchObject({ status: 404, type: 'not_found' });
      await expect(h.sessions.update('tenant-b', created.id, { title: 'x' })).rejects.toMatchObject({ status: 404 });
      expect((await h.sessions.list('tenant-b', { includeSnapshots: true })).data.map((r) => r.id)).not.toContain(created.id);

      expect(await h.sessions.update(tenant, created.id, { title: 'Renamed' })).toMatchObject({ title: 'Renamed' });
      await h.sessions.delete(tenant, created.id);
      await expect(h.sessions.get(tenant, created.id)).rejects.toMatchObject({ status: 404 });
      expect(await h.rows('SELECT count(*)::int AS n FROM chat_session_messages WHERE session_id = $1', [created.id])).toEqual([{ n: 0 }]);
      expect(await h.rows('SELECT count(*)::int AS n FROM chat_session_provider_calls WHERE session_id = $1', [created.id])).toEqual([{ n: 0 }]);
    });

    it('pages the list with next_cursor', async () => {
      const t = `tenant-page-${backend}`;
      const ids = [];
      for (let i = 0; i < 5; i++) ids.push((await h.sessions.create(t, { title: `s${i}` })).id);
      const first = await h.sessions.list(t, { includeSnapshots: false, limit: 2 });
      expect(first.has_more).toBe(true);
      const second = await h.sessions.list(t, { includeSnapshots: false, limit: 2, cursor: first.next_cursor! });
      const third = await h.sessions.list(t, { includeSnapshots: false, limit: 2, cursor: second.next_cursor! });
      expect(third.has_more).toBe(false);
      expect([...first.data, ...second.data, ...third.data].map((r) => r.id).sort()).toEqual([...ids].sort());
    });
  });

  describe('RecordChatExchange (seed 000)', () => {
    it('records a first turn, a multi-turn replay without duplicates, and a tool loop without orphaned tool_call_id', async () => {
      const s = await h.sessions.create(tenant, { system_prompt: 'You are terse.' });
      // First turn: the client does not send the system prompt; the store applies it upstream but does not store it.
      const prepared = await h.recorder.prepare(tenant, s.id, [{ role: 'user', content: 'weather in Oslo?' }]);
      expect(prepared.messages[0]).toEqual({ role: 'system', content: 'You are terse.' });
      const toolCall = { id: 'call_1', type: 'function' as const, function: { name: 'get_weather', arguments: '{"city":"Oslo"}' } };
      await h.recorder.record(prepared, {
        status: 'complete',
        reply: { text: '', content_blocks: [{ type: 'thinking', thinking: 'need a tool', signature: 'sig==' }], tool_calls: [toolCall] },
        call: call('claude-x', { provider: 'anthropic' }),
      });
      // Tool-loop continuation: the client replays history (with the prompt) and adds the tool result.
      const history = [
        { role: 'system', content: 'You are terse.' },
        { role: 'user', content: 'weather in Oslo?' },
        { role: 'assistant', content: null, tool_calls: [toolCall] },
        { role: 'tool', tool_call_id: 'call_1', content: '{"temp":3}', tool_error: false },
      ];
      await record(s.id, history, textReply('3 degrees.'));
      // Multi-turn replay: the whole history again plus one new user message.
      await record(s.id, [...history, { role: 'assistant', content: '3 degrees.' }, { role: 'user', content: 'thanks' }], textReply('welcome'));

      const got = await get(s.id);
      expect(got.messages.map((m) => [m.sequence, m.role, m.content])).toEqual([
        [0, 'user', 'weather in Oslo?'],
        [1, 'assistant', null],
        [2, 'tool', '{"temp":3}'],
        [3, 'assistant', '3 degrees.'],
        [4, 'user', 'thanks'],
        [5, 'assistant', 'welcome'],
      ]);
      expect(got.messages[1]).toMatchObject({ tool_calls: [toolCall], content_blocks: [{ type: 'thinking', thinking: 'need a tool', signature: 'sig==' }] });
      expect(got.messages[2]).toMatchObject({ tool_call_id: 'call_1', tool_error: false });
      expect(got.messages.filter((m) => m.role === 'user' || m.role === 'tool').every((m) => m.produced_by_call_id === undefined)).toBe(true);
      const callIds = got.provider_calls.map((c) => c.id);
      expect(callIds).toHaveLength(3);
      expect(got.messages.filter((m) => m.role === 'assistant').map((m) => m.produced_by_call_id)).toEqual(callIds);
      expect(got.provider_calls[0]).toMatchObject({
        provider: 'anthropic',
        model: 'claude-x',
        cost_micros_usd: 12,
        cost_usd: '0.000012',
        prompt_tokens: 10,
        completion_tokens: 3,
        total_tokens: 13,
      });
      // Every tool call has its result before the next assistant turn.
      const calls = got.messages.flatMap((m) => ((m.tool_calls as { id: string }[] | undefined) ?? []).map((c) => c.id));
      const results = got.messages.filter((m) => m.role === 'tool').map((m) => m.tool_call_id);
      expect(results).toEqual(calls);
    });

    it('records a cut stream as incomplete without its unfinished tool calls, and puts the retry beside a failed reply', async () => {
      const s = await h.sessions.create(tenant, {});
      await record(
        s.id,
        [{ role: 'user', content: 'a' }],
        {
          text: 'partial',
          content_blocks: [
            { type: 'text', text: 'partial' },
            { type: 'tool_use', id: 't', name: 'x', input: {} },
          ],
          tool_calls: [{ id: 't', type: 'function', function: { name: 'x', arguments: '{"a' } }],
        },
        'incomplete',
      );
      let got = await get(s.id);
      expect(got.messages[1]).toMatchObject({ status: 'incomplete', content: 'partial' });
      expect(got.messages[1]).not.toHaveProperty('tool_calls');

      await record(
        s.id,
        [
          { role: 'user', content: 'a' },
          { role: 'assistant', content: 'partial' },
          { role: 'user', content: 'b' },
        ],
        textReply(''),
        'failed',
      );
      // The client retries the same request: `b` is not duplicated, the new reply is a sibling of the failed one.
      await record(
        s.id,
        [
          { role: 'user', content: 'a' },
          { role: 'assistant', content: 'partial' },
          { role: 'user', content: 'b' },
        ],
        textReply('B!'),
      );
      got = await get(s.id, 'tree');
      expect(got.messages.map((m) => [m.role, m.status, m.content])).toEqual([
        ['user', 'complete', 'a'],
        ['assistant', 'incomplete', 'partial'],
        ['user', 'complete', 'b'],
        ['assistant', 'failed', ''],
        ['assistant', 'complete', 'B!'],
      ]);
      expect(got.messages[3].parent_id).toBe(got.messages[2].id);
      expect(got.messages[4].parent_id).toBe(got.messages[2].id);
      expect((await get(s.id)).messages.map((m) => m.content)).toEqual(['a', 'partial', 'b', 'B!']);
    });

    it('never records against a stale view: a prompt change applies at once, a turn in between is chained after', async () => {
      const s = await h.sessions.create(tenant, { system_prompt: 'old' });
      await record(s.id, [{ role: 'user', content: 'one' }], textReply('1'));
      await h.sessions.update(tenant, s.id, { system_prompt: 'new' });
      expect((await h.recorder.prepare(tenant, s.id, [{ role: 'user', content: 'x' }])).messages[0]).toEqual({ role: 'system', content: 'new' });
      // A server-side turn moves the leaf after this process last recorded.
      const turn = (await h.ledger.beginSend(tenant, s.id, {
        content: 'two',
        owner: 'o',
      })) as import('@modules/chat-sessions/chat-turn-ledger.service').BegunTurn;
      await h.ledger.finish(turn, { status: 'complete', reply: textReply('2'), call: call() }, turn.leaseToken);
      await record(
        s.id,
        [
          { role: 'user', content: 'one' },
          { role: 'assistant', content: '1' },
          { role: 'user', content: 'two' },
          { role: 'assistant', content: '2' },
          { role: 'user', content: 'three' },
        ],
        textReply('3'),
      );
      expect((await get(s.id)).messages.map((m) => m.content)).toEqual(['one', '1', 'two', '2', 'three', '3']);
      await h.sessions.delete(tenant, s.id);
      await expect(h.recorder.prepare(tenant, s.id, [{ role: 'user', content: 'x' }])).rejects.toMatchObject({ status: 404 });
    });

    it('stores an exchange alike whether its rows are bound one value each (up to 4 messages) or sent as one JSON array (more)', async () => {
      for (const k of [1, 3, 4, 6]) {
        const s = await h.sessions.create(tenant, {});
        const sent = Array.from({ length: k }, (_, i) =>
          i % 2
            ? { role: 'tool', tool_call_id: `c${i}`, content: `it's "${i}" \\ ü`, tool_error: true }
            : { role: 'user', content: [{ type: 'text', text: `q${i}` }], name: 'ann' },
        );
        const before = Date.now();
        const prepared = await h.recorder.prepare(tenant, s.id, sent);
        await h.recorder.record(prepared, {
          status: 'failed',
          reply: textReply(''),
          call: call('m', { costMicrosUsd: 9_007_199_254 }),
          error: { type: 'upstream_error', message: 'boom' },
        });
        const rows = await h.rows<Record<string, unknown>>(
          `SELECT sequence, role, status, message_json, error_json, replay_count, replay_chars, created_at, updated_at, produced_by_call_id, client_request_id
             FROM chat_session_messages WHERE session_id = $1 ORDER BY sequence`,
          [s.id],
        );
        const reply = { role: 'assistant', content: '', content_blocks: [{ type: 'text', text: '' }] };
        const chars = sent.map((m) => JSON.stringify(m).length).reduce((acc: number[], n) => [...acc, (acc[acc.length - 1] ?? 0) + n], []);
        expect(rows.map(({ created_at: _c, updated_at: _u, produced_by_call_id: _p, ...r }) => r)).toEqual([
          ...sent.map((m, i) => ({
            sequence: i,
            role: m.role,
            status: 'complete',
            message_json: m,
            error_json: null,
            replay_count: i + 1,
            replay_chars: chars[i],
            client_request_id: null,
          })),
          {
            sequence: k,
            role: 'assistant',
            status: 'failed',
            message_json: reply,
            error_json: { type: 'upstream_error', message: 'boom' },
            replay_count: k,
            replay_chars: chars[k - 1],
            client_request_id: null,
          },
        ]);
        for (const r of rows) {
          expect(r.created_at).toEqual(r.updated_at);
          expect((r.created_at as Date).getTime()).toBeGreaterThanOrEqual(before - 1);
          expect((r.created_at as Date).getTime()).toBeLessThanOrEqual(Date.now());
        }
        const [callRow] = await h.rows<Record<string, unknown>>(
          'SELECT id, status, cost_micros_usd, total_tokens FROM chat_session_provider_calls WHERE session_id = $1',
          [s.id],
        );
        expect(callRow).toMatchObject({ status: 'failed', cost_micros_usd: 9_007_199_254, total_tokens: 13 });
        expect(rows.map((r) => r.produced_by_call_id)).toEqual([...sent.map(() => null), callRow.id]);
        expect(await h.rows('SELECT message_count, provider_call_count, next_sequence FROM chat_sessions WHERE id = $1', [s.id])).toEqual([
          { message_count: k + 1, provider_call_count: 1, next_sequence: k + 1 },
        ]);
      }
    });

    it('assigns sequences 0..N-1 without gaps or duplicates under 50 concurrent writers on one session', async () => {
      const s = await h.sessions.create(tenant, {});
      await record(s.id, [{ role: 'user', content: 'root' }]);
      // Each writer adds its turn (a user message and the reply) after whatever the others committed first.
      await Promise.all(Array.from({ length: 50 }, (_, i) => record(s.id, [{ role: 'user', content: `w${i}` }], textReply(`r${i}`))));
      const rows = await h.rows<{ sequence: number }>('SELECT sequence FROM chat_session_messages WHERE session_id = $1 ORDER BY sequence', [s.id]);
      expect(rows.map((r) => r.sequence)).toEqual(Array.from({ length: rows.length }, (_, i) => i));
      const [session] = await h.rows<{ message_count: number; provider_call_count: number }>(
        'SELECT message_count, provider_call_count FROM chat_sessions WHERE id = $1',
        [s.id],
      );
      expect(session).toEqual({ message_count: 102, provider_call_count: 51 });
      expect(rows.length).toBe(102);
      // Every turn chained onto the previous one: the active path holds all of them.
      expect((await get(s.id)).messages).toHaveLength(102);
    });
  });
});
