import { isUniqueViolation } from '@core/database/database.errors';
import { AgentChatRepository } from '@modules/agent-chat/agent-chat.repository';
import { QueueRepository } from '@modules/agent-chat/queue/queue.repository';
import { TurnLeaseRepository } from '@modules/agent-chat/turns/turn-lease.repository';
import { AdapterSessionRepository } from '@modules/external-agents/adapter-session.repository';
import { ApprovalsRepository } from '@modules/approvals/approvals.repository';
import { SessionKeysRepository } from '@modules/external-agents/session-keys.repository';
import type { EventBus } from '@core/bus/event-bus.port';
import { InProcessEventBus } from '@core/bus/in-process-event-bus.adapter';
import { MetricsService } from '@core/metrics/metrics.service';
import { InProcessRunQueue } from '@core/queue/in-process-run-queue.adapter';
import type { NewMessage, TurnRow } from '@modules/agent-chat/agent-chat-rows';
import { openTestDatabase, type TestDatabase } from '../../support/database';

/**
 * The Agent Chat store's SQL on both backends (Postgres and PGlite, as scaled and embedded modes run it): opening a
 * turn (the busy index), the one-statement claim and its lease, and the recovery queries of queued-next items.
 */
describe.each(['postgres', 'pglite'] as const)('agent chat repository (%s)', (backend) => {
  let db: TestDatabase;
  let repo: AgentChatRepository;
  let leases: TurnLeaseRepository;
  let queue: QueueRepository;
  beforeAll(async () => {
    db = await openTestDatabase(backend, { prefix: 'hecate-agent-chat-' });
    repo = new AgentChatRepository(db.dataSource);
    leases = new TurnLeaseRepository(db.dataSource);
    queue = new QueueRepository(db.dataSource);
  }, 60_000);
  afterAll(() => db?.close());

  let n = 0;
  const session = async () => {
    const id = `agent_chat_${backend}_${++n}`;
    await repo.insertSession({
      id,
      tenant_id: 't1',
      title: 'T',
      runtime_kind: 'model',
      provider: '',
      model: 'm',
      workspace: '',
      system_prompt: '',
      adapter_id: '',
      capabilities: {},
      status: 'idle',
      session_started_at: null,
    });
    return id;
  };
  const open = (sessionId: string, turnId: string) => {
    const base = { runtime_kind: 'model' as const, segment_id: 'seg', provider: '', model: 'm', capabilities: {}, turn_id: turnId };
    const messages: NewMessage[] = [
      { ...base, id: `${turnId}_u`, role: 'user', content: 'hi', status: 'completed' },
      { ...base, id: `${turnId}_a`, role: 'assistant', content: '', status: 'queued' },
    ];
    return repo.openTurn(
      {
        id: turnId,
        tenant_id: 't1',
        session_id: sessionId,
        runtime_kind: 'model',
        status: 'queued',
        segment_id: 'seg',
        user_message_id: `${turnId}_u`,
        assistant_message_id: `${turnId}_a`,
        task_id: null,
        run_id: null,
        stream_id: turnId,
        provider: '',
        model: 'm',
        system_prompt: '',
        request_id: 'req_1',
        trace_id: null,
      },
      messages,
      '',
    );
  };

  it('opens a turn with its messages in sequence; a second active turn of the session is refused by the unique index', async () => {
    const id = await session();
    const opened = (await open(id, `turn_${backend}_a`))!;
    expect(opened.session).toMatchObject({ status: 'running', turns_used: 1, message_count: 2, next_sequence: 3 });
    expect(opened.turn).toMatchObject({ status: 'queued', attempts: 0 });
    expect(opened.turn.enqueued_at).not.toBeNull();
    expect((await repo.messages(id)).map((m) => [m.sequence, m.role])).toEqual([
      [1, 'user'],
      [2, 'assistant'],
    ]);
    const second = await open(id, `turn_${backend}_b`).catch((err: unknown) => err);
    expect(isUniqueViolation(second)).toBe(true);
    expect((await repo.findSession('t1', id))!.turns_used).toBe(1);
  });

  it('claims in one statement: a held lease is refused with its remaining time, an expired one is taken over', async () => {
    const id = await session();
    const turnId = `turn_${backend}_c`;
    await open(id, turnId);
    const first = await leases.claimTurn(turnId, 'owner-1', 'token-1', 60_000);
    expect(first).toMatchObject({ previousStatus: 'queued', turn: { status: 'running', attempts: 1, lease_owner: 'owner-1' } });
    const held = await leases.claimTurn(turnId, 'owner-2', 'token-2', 60_000);
    expect(held).toMatchObject({ reason: 'held' });
    expect((held as { remainingMs: number }).remainingMs).toBeGreaterThan(50_000);
    await db.dataSource.query(`UPDATE agent_chat_turns SET lease_expires_at = now() - interval '1 second' WHERE id = $1`, [turnId]);
    const taken = await leases.claimTurn(turnId, 'owner-2', 'token-2', 60_000);
    expect(taken).toMatchObject({ previousStatus: 'running', turn: { attempts: 2, lease_owner: 'owner-2', lease_token: 'token-2' } });
    expect(await leases.heartbeat(turnId, 'token-1', 60_000)).toBe(false);
    expect(await leases.heartbeat(turnId, 'token-2', 60_000)).toBe(true);
    await db.dataSource.query(`UPDATE agent_chat_turns SET status = 'completed' WHERE id = $1`, [turnId]);
    expect(await leases.claimTurn(turnId, 'owner-3', 'token-3', 60_000)).toEqual({ reason: 'gone' });
  });

  it('queued-next recovery: a `starting` item is started when its turn exists, waiting again when not; idle sessions with items are listed', async () => {
    const busy = await session();
    const idle = await session();
    const item = (sid: string, id: string) =>
      queue.insertQueueItem(
        {
          id,
          session_id: sid,
          tenant_id: 't1',
          content: id,
          runtime_kind: 'model',
          provider: '',
          model: 'm',
          workspace: '',
          system_prompt: '',
          host_paths: true,
        },
        0,
      );
    await item(busy, `q_${backend}_1`);
    await item(idle, `q_${backend}_2`);
    await item(idle, `q_${backend}_3`);
    await open(busy, `turn_${backend}_d`);
    expect(await queue.sessionsToDrain(100)).toEqual(expect.arrayContaining([idle]));
    expect(await queue.sessionsToDrain(100)).not.toContain(busy);
    // One drainer wins the oldest item; none while the session is busy.
    expect(await queue.claimQueueItem(busy)).toBeNull();
    const claimed = await queue.claimQueueItem(idle);
    expect(claimed).toMatchObject({ id: `q_${backend}_2`, status: 'starting' });
    expect(await queue.claimQueueItem(idle)).toBeNull();
    // A process died with the item `starting`: no turn was opened for it → waiting again.
    await db.dataSource.query(`UPDATE agent_chat_queue SET updated_at = now() - interval '2 minutes' WHERE id = $1`, [claimed!.id]);
    await queue.recoverStartingItems(60_000);
    expect((await queue.findQueueItem(idle, claimed!.id))!.status).toBe('queued');
    // …and with its turn opened (request id `queue_<id>`) → started, linked to the turn.
    await queue.claimQueueItem(idle);
    const turn = (await open(idle, `turn_${backend}_e`))!.turn as TurnRow;
    await db.dataSource.query(`UPDATE agent_chat_turns SET request_id = $2 WHERE id = $1`, [turn.id, `queue_${claimed!.id}`]);
    await db.dataSource.query(`UPDATE agent_chat_queue SET updated_at = now() - interval '2 minutes' WHERE id = $1`, [claimed!.id]);
    await queue.recoverStartingItems(60_000);
    expect(await queue.findQueueItem(idle, claimed!.id)).toMatchObject({ status: 'started', turn_id: turn.id });
    expect((await queue.queueItems(idle)).map((q) => q.id)).toEqual([`q_${backend}_3`]);
  });

  it('session keys: a key whose session has no live adapter lease is revoked (after the grace); the lease holder keeps its own; approval timeouts of any length', async () => {
    const bus: EventBus = new InProcessEventBus();
    jest.spyOn(bus, 'publish');
    const keys = new SessionKeysRepository(db.dataSource, bus);
    const held = await session();
    const orphan = await session();
    const adapters = new AdapterSessionRepository(db.dataSource);
    await db.dataSource.query(`UPDATE agent_chat_sessions SET runtime_kind = 'external_agent' WHERE id IN ($1, $2)`, [held, orphan]);
    expect(await adapters.claim(held, 'w1', 'tok-held', 60_000)).toBe(true);
    const heldKey = await keys.mint('t1', held);
    const orphanKey = await keys.mint('t1', orphan);
    expect(heldKey.secret).toMatch(/^hk_/);
    const revoked = async (id: string) =>
      ((await db.dataSource.query(`SELECT revoked_at FROM api_keys WHERE id = $1`, [id])) as Array<{ revoked_at: Date | null }>)[0].revoked_at;
    // Within the grace nothing goes; after it only the orphan's key.
    expect(await keys.revokeOrphans(60_000)).toBe(0);
    expect(await keys.revokeOrphans(0)).toBe(1);
    expect(await revoked(orphanKey.id)).not.toBeNull();
    expect(await revoked(heldKey.id)).toBeNull();
    // A new mint replaces the session's earlier key; revoking by id touches only that key.
    const second = await keys.mint('t1', held);
    expect(await revoked(heldKey.id)).not.toBeNull();
    expect(await keys.revoke(heldKey.id)).toBe(0);
    expect(await keys.revoke(second.id)).toBe(1);
    expect((bus.publish as jest.Mock).mock.calls.every(([channel]) => channel === 'auth.api_key.revoked')).toBe(true);

    // A pending approval with a 30-day timeout (beyond a 32-bit millisecond count) is stored with its expiry.
    const approvals = new ApprovalsRepository(db.dataSource, new MetricsService(new InProcessRunQueue()));
    const a = await approvals.insertTurn(
      {
        tenant_id: 't1',
        session_id: held,
        turn_id: null,
        adapter_id: 'x',
        workspace: '',
        tool_call_id: 'c',
        tool_kind: 'other',
        tool_name: 'n',
        options: [],
        scope_choices: ['once'],
      },
      { waiter: 'w1', timeoutMs: 30 * 24 * 3600 * 1000 },
    );
    expect(new Date(a.expires_at!).getTime() - new Date(a.created_at).getTime()).toBeGreaterThan(29 * 24 * 3600 * 1000);
  });

  it("pending approvals of a tenant across its sessions, oldest first: settled ones and another tenant's are not listed", async () => {
    const approvals = new ApprovalsRepository(db.dataSource, new MetricsService(new InProcessRunQueue()));
    const [s1, s2] = [await session(), await session()];
    await db.dataSource.query(`UPDATE agent_chat_sessions SET tenant_id = 't_other' WHERE id = $1`, [s2]);
    const request = (sessionId: string, tenantId: string, name: string) =>
      approvals.insertTurn(
        {
          tenant_id: tenantId,
          session_id: sessionId,
          turn_id: null,
          adapter_id: 'x',
          workspace: '',
          tool_call_id: name,
          tool_kind: 'other',
          tool_name: name,
          options: [],
          scope_choices: ['once'],
        },
        { waiter: 'w1', timeoutMs: 60_000 },
      );
    const before = (await approvals.listPending('agent_chat_turn', 't1', 500)).map((a) => a.id);
    // Apart in time, so created_at orders them.
    const tick = () => new Promise((r) => setTimeout(r, 5));
    const first = await request(s1, 't1', 'first');
    await tick();
    const settled = await request(s1, 't1', 'settled');
    await tick();
    const second = await request(s1, 't1', 'second');
    await request(s2, 't_other', 'foreign');
    await approvals.resolve(settled.id, { status: 'denied', path: 'operator', decision: 'deny', scope: 'once' });
    const listed = (await approvals.listPending('agent_chat_turn', 't1', 500)).filter((a) => !before.includes(a.id));
    expect(listed.map((a) => a.tool_name)).toEqual(['first', 'second']);
    expect(listed.map((a) => a.id)).toEqual([first.id, second.id]);
    expect(await approvals.listPending('agent_chat_turn', 't1', 1)).toHaveLength(1);
    expect((await approvals.listPending('agent_chat_turn', 't_other', 500)).map((a) => a.tool_name)).toEqual(['foreign']);
  });
});
