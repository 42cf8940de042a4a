import { scaledStackEnv } from '../../support/harness';
import { ScratchDatabase, waitFor } from '../../support/infra';
import { call, fakeUpstream, FakeUpstream, Loose, openSse, providerEnv, ServerProcess, startChatServer } from './chat-harness';

const S = '/hecate/v1/chat/sessions';

/**
 * A chat generation is held under the one lease (core/lease): kill -9 of the api process streaming it stops its
 * heartbeats, the lease expires in database time, and the branch is free again on the other process — the dead turn
 * is settled `incomplete` (its partial text kept when a stop reaches it) and nothing is run twice.
 */
describe('chat generation lease across a killed api process (scaled)', () => {
  let db: ScratchDatabase;
  let upstream: FakeUpstream;
  let a: ServerProcess;
  let b: ServerProcess;
  let env: Record<string, string>;

  beforeAll(async () => {
    upstream = await fakeUpstream();
    ({ env, db } = await scaledStackEnv({
      migrateOnBoot: true,
      env: {
        GATEWAY_PROVIDER_MAX_ATTEMPTS: '1',
        GATEWAY_DEFAULT_MODEL: 'gpt-4o-mini',
        GATEWAY_CHAT_GENERATION_HEARTBEAT_INTERVAL: '300ms',
        GATEWAY_CHAT_GENERATION_STALE_AFTER: '2s',
        ...providerEnv('fake', upstream),
      },
    }));
    a = await startChatServer(env, 'api');
    b = await startChatServer(env, 'api');
  });
  afterEach(() => upstream.reset());
  afterAll(async () => {
    await Promise.all([a?.stop('SIGKILL'), b?.stop()]);
    await upstream?.close();
    await db?.drop();
  });

  const messages = async (base: string, id: string) => (await call(base, 'GET', `${S}/${id}`)).body.data.messages as Loose[];

  it('frees the branch once the dead holder stops beating; a stop on the other process keeps the partial text', async () => {
    const id = (await call(a.url, 'POST', S, {})).body.data.id as string;
    upstream.script({ content: 'one two three four five six', chunks: 6, chunkIntervalMs: 10, hangAfterChunks: 3 });
    const sse = await openSse(a.url, `${S}/${id}/messages`, { content: 'count', stream: true });
    const created = await sse.until((e) => e.event === 'message.created');
    await sse.until((e) => e.event === 'delta' && e.data.index === 3);

    // While A lives and beats, its lease holds the branch on every process.
    expect((await call(b.url, 'POST', `${S}/${id}/messages`, { content: 'too soon' })).body.error?.type).toBe('chat_session.branch_busy');
    const killedAt = Date.now();
    await a.stop('SIGKILL');

    // The stop from B finds no live holder to ask: it takes over from the live buffer and keeps the three chunks.
    const stop = await call(b.url, 'POST', `${S}/${id}/stop`, {});
    expect(stop.status).toBe(200);
    expect(stop.body.data.stopped).toEqual([expect.objectContaining({ id: created.data.assistant_message_id, status: 'stopped' })]);
    const partial = stop.body.data.stopped[0].content as string;
    expect(partial.length).toBeGreaterThan(0);
    expect('one two three four five six'.startsWith(partial)).toBe(true);

    // The branch is free again (the lease is released or expired): B generates the next turn, once.
    upstream.script({ content: 'after the crash', chunks: 1 });
    const next = await waitFor(
      async () => {
        const r = await call(b.url, 'POST', `${S}/${id}/messages`, { content: 'again' });
        return r.status === 200 ? r : undefined;
      },
      { timeoutMs: 10_000, intervalMs: 100, what: 'the branch to be free after the holder died' },
    );
    expect(Date.now() - killedAt).toBeLessThan(10_000);
    expect(next.body.data.assistant_message).toMatchObject({ status: 'complete', content: 'after the crash' });
    const path = await messages(b.url, id);
    expect(path.map((m) => [m.role, m.status])).toEqual([
      ['user', 'complete'],
      ['assistant', 'stopped'],
      ['user', 'complete'],
      ['assistant', 'complete'],
    ]);
    // One upstream request per turn, none repeated: the killed one (aborted) and the next, which replays the kept text.
    const calls = upstream.requests.filter((r) => r.path === '/v1/chat/completions');
    expect(calls.map((r) => r.aborted)).toEqual([true, false]);
    expect(calls[1].body!.messages!.map((m) => m.content)).toEqual(['count', partial, 'again']);
  });

  it('without a stop, the expired lease lets the next turn reap the dead generation as incomplete', async () => {
    a = await startChatServer(env, 'api');
    const id = (await call(a.url, 'POST', S, {})).body.data.id as string;
    upstream.script({ content: 'alpha beta gamma delta', chunks: 4, chunkIntervalMs: 10, hangAfterChunks: 2 });
    const sse = await openSse(a.url, `${S}/${id}/messages`, { content: 'go', stream: true });
    const created = await sse.until((e) => e.event === 'message.created');
    await sse.until((e) => e.event === 'delta' && e.data.index === 2);
    await a.stop('SIGKILL');

    // A new turn after the dead reply from B: busy while the lease lives, then the expired generation is reaped.
    upstream.script({ content: 'fresh answer', chunks: 1 });
    let busy = 0;
    const next = await waitFor(
      async () => {
        const r = await call(b.url, 'POST', `${S}/${id}/messages`, { content: 'retry' });
        if (r.body.error?.type === 'chat_session.branch_busy') busy++;
        return r.status === 200 ? r : r.body.error?.type === 'chat_session.branch_busy' ? undefined : r;
      },
      { timeoutMs: 10_000, intervalMs: 100, what: 'the lease of the dead generation to expire' },
    );
    expect(next.status).toBe(200);
    expect(busy).toBeGreaterThan(0);
    const tree = (await call(b.url, 'GET', `${S}/${id}?view=tree`)).body.data.messages as Loose[];
    expect(tree.find((m) => m.id === created.data.assistant_message_id)).toMatchObject({ status: 'incomplete' });
  });
});
