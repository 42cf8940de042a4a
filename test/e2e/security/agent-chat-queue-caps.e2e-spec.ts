import { request } from '../../support/http';
import { waitFor } from '../../support/infra';
import type { ServerProcess } from '../../support/server-process';
import { createKey, errorType, type FakeUpstream, providerEnv, startFakeUpstream, startSecured, type TenantKey } from './security-harness';

const MAX_ITEMS = 5;
const MAX_BYTES = 64 * 1024;

/**
 * `on_busy: enqueue` and guidance are durable rows a tenant adds while a turn runs: a session holds at most
 * GATEWAY_AGENT_CHAT_MAX_QUEUED_ITEMS waiting items (409 agent_chat.queue_full beyond, exactly the cap under a
 * concurrent burst), and no prompt, queued item or guidance may exceed GATEWAY_AGENT_CHAT_MAX_CONTENT_BYTES (413
 * payload_too_large, nothing stored).
 */
describe('Agent Chat queue caps (embedded)', () => {
  let upstream: FakeUpstream;
  let server: ServerProcess;
  let tenant: TenantKey;

  const sessionPath = (id: string, rest = '') => `/hecate/v1/agent-chat/sessions/${id}${rest}`;
  const call = (method: string, path: string, body?: unknown) => tenant.client.call(method, path, body);

  beforeAll(async () => {
    upstream = await startFakeUpstream({ models: ['gpt-4o-mini'] });
    server = await startSecured({
      ...providerEnv('fake', upstream, { kind: 'local' }),
      GATEWAY_AGENT_CHAT_MAX_QUEUED_ITEMS: String(MAX_ITEMS),
      GATEWAY_AGENT_CHAT_MAX_CONTENT_BYTES: String(MAX_BYTES),
    });
    tenant = await createKey(server.url, ['inference', 'operator'], 'queue-tenant');
  }, 120_000);
  afterAll(async () => {
    await server?.stop();
    await upstream?.close();
  });

  /** A model session whose first turn hangs upstream (the session stays busy until it is cancelled). */
  async function busySession(): Promise<string> {
    const s = await call('POST', '/hecate/v1/agent-chat/sessions', { runtime_kind: 'model', model: 'gpt-4o-mini' });
    expect(s.status).toBe(200);
    const id = s.body.data.id as string;
    // Only this session's first prompt hangs (queued prompts other sessions drain meanwhile are answered).
    const marker = `start ${id}`;
    upstream.script({ hang: true, match: (req) => JSON.stringify(req.body).includes(marker) });
    const first = await call('POST', sessionPath(id, '/messages'), { content: marker, wait: false });
    expect(first.status).toBe(202);
    await upstream.waitFor((u) => u.requests.some((r) => !r.closedAt && JSON.stringify(r.body).includes(marker)));
    return id;
  }

  it('a burst of enqueues while busy: exactly the cap is queued, the rest 409 agent_chat.queue_full', async () => {
    const id = await busySession();
    const burst = await Promise.all(
      Array.from({ length: 12 }, (_, i) => call('POST', sessionPath(id, '/messages'), { content: `queued ${i}`, on_busy: 'enqueue' })),
    );
    const statuses = burst.map((r) => [r.status, r.status === 202 ? 'queued' : errorType(r)]);
    expect(statuses.filter(([s]) => s === 202)).toHaveLength(MAX_ITEMS);
    expect(statuses.filter(([s, t]) => s === 409 && t === 'agent_chat.queue_full')).toHaveLength(12 - MAX_ITEMS);
    const refused = burst.find((r) => r.status === 409)!;
    expect(refused.body.error.max_queued_items).toBe(MAX_ITEMS);
    const queue = await call('GET', sessionPath(id, '/queue'));
    expect(queue.body.data).toHaveLength(MAX_ITEMS);

    // Removing one makes room for one.
    await call('DELETE', sessionPath(id, `/queue/${queue.body.data[0].id}`));
    expect((await call('POST', sessionPath(id, '/messages'), { content: 'again', on_busy: 'enqueue' })).status).toBe(202);
    expect(errorType(await call('POST', sessionPath(id, '/messages'), { content: 'one more', on_busy: 'enqueue' }))).toBe('agent_chat.queue_full');

    // Pending guidance has the same cap.
    const guidance = [];
    for (let i = 0; i < MAX_ITEMS + 3; i++) guidance.push(await call('POST', sessionPath(id, '/guidance'), { content: `steer ${i}` }));
    expect(guidance.map((r) => r.status)).toEqual([...Array(MAX_ITEMS).fill(200), 409, 409, 409]);
    expect(errorType(guidance[MAX_ITEMS])).toBe('agent_chat.queue_full');
    expect((await call('GET', sessionPath(id, '/guidance'))).body.data.items).toHaveLength(MAX_ITEMS);

    // Another session of the same tenant has its own room.
    const other = await busySession();
    expect((await call('POST', sessionPath(other, '/messages'), { content: 'mine', on_busy: 'enqueue' })).status).toBe(202);
    for (const s of [id, other]) await call('POST', sessionPath(s, '/cancel'));
  });

  it('content over the byte limit is 413 payload_too_large on every way in, and nothing is stored', async () => {
    const id = await busySession();
    const queued = await call('POST', sessionPath(id, '/messages'), { content: 'small', on_busy: 'enqueue' });
    expect(queued.status).toBe(202);
    const big = 'é'.repeat(MAX_BYTES / 2 + 1); // MAX_BYTES + 2 bytes in UTF-8, fewer characters than bytes
    const attempts = [
      await call('POST', sessionPath(id, '/messages'), { content: big, on_busy: 'enqueue' }),
      await call('POST', sessionPath(id, '/messages'), { content: big, on_busy: 'interrupt' }),
      await call('POST', sessionPath(id, '/messages'), { content: big, wait: false }),
      await call('PATCH', sessionPath(id, `/queue/${queued.body.data.id}`), { content: big }),
      await call('POST', sessionPath(id, '/guidance'), { content: big }),
      await call('POST', sessionPath(id, '/rerun'), { guidance_content: big }),
    ];
    expect(attempts.map((r) => [r.status, errorType(r)])).toEqual(attempts.map(() => [413, 'payload_too_large']));
    expect(attempts[0].body.error).toMatchObject({ field: 'content', bytes: MAX_BYTES + 2, max_bytes: MAX_BYTES });
    expect(attempts[5].body.error.field).toBe('guidance_content');
    const queue = (await call('GET', sessionPath(id, '/queue'))).body.data;
    expect(queue.map((q: { content: string }) => q.content)).toEqual(['small']);
    expect((await call('GET', sessionPath(id, '/guidance'))).body.data.items).toHaveLength(0);
    // The running turn was not interrupted by the refused prompt.
    const session = await call('GET', sessionPath(id));
    expect(session.body.data.active_turn).toBeTruthy();
    // Exactly the limit is accepted.
    expect((await call('PATCH', sessionPath(id, `/queue/${queued.body.data.id}`), { content: 'a'.repeat(MAX_BYTES) })).status).toBe(200);
    await call('POST', sessionPath(id, '/cancel'));
    await waitFor(async () => ((await call('GET', sessionPath(id))).body.data.active_turn ? undefined : true), { what: 'the cancel' });
    // The edit of the last user message has the same limit.
    const edit = await request(server.url, 'POST', sessionPath(id, '/edit-last-user-message'), { token: tenant.secret, body: { content: big } });
    expect([edit.status, errorType(edit)]).toEqual([413, 'payload_too_large']);
  });
});
