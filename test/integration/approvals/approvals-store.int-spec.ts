import type { DataSource } from 'typeorm';
import { MIGRATIONS } from '@migrations';
import type { AppConfig } from '@core/config/app-config';
import { MetricsService } from '@core/metrics/metrics.service';
import { InProcessRunQueue } from '@core/queue/in-process-run-queue.adapter';
import { AgentChatRepository } from '@modules/agent-chat/agent-chat.repository';
import { toApprovalView, toGrantView } from '@modules/agent-chat/approvals/approval-views';
import { ApprovalsService, toApprovalResponse, TurnApprovalsService } from '@modules/approvals';
import { ApprovalsRepository } from '@modules/approvals/approvals.repository';
import { GrantsRepository } from '@modules/approvals/grants.repository';
import { openTestDatabase, type TestDatabase } from '../../support/database';

const store = MIGRATIONS.map((M) => new M()).find((m) => m.name === 'OneApprovalsStore1796800000000')!;

async function migrate(ds: DataSource, direction: 'up' | 'down'): Promise<void> {
  const runner = ds.createQueryRunner();
  try {
    await runner.startTransaction();
    await store[direction](runner);
    await runner.commitTransaction();
  } finally {
    await runner.release();
  }
}

const T0 = new Date('2026-11-01T10:00:00.000Z');
const T1 = new Date('2026-11-01T10:05:00.000Z');
const T2 = new Date('2026-11-01T10:06:00.000Z');

/**
 * The one approvals store on both backends: migration 1796800000000 copies the task runs' and the Agent Chat turns'
 * approvals (and the grants) into it with their ids, the services answer what the routes answered before, `down`
 * splits the rows back; and every runtime's decisions go through the one settlement.
 */
describe.each(['postgres', 'pglite'] as const)('approvals store (%s)', (backend) => {
  let db: TestDatabase;
  let chats: AgentChatRepository;
  let metrics: MetricsService;
  let tasks: ApprovalsService;
  let turns: TurnApprovalsService;
  beforeAll(async () => {
    db = await openTestDatabase(backend, { prefix: 'hecate-approvals-' });
    chats = new AgentChatRepository(db.dataSource);
    metrics = new MetricsService(new InProcessRunQueue());
    const repo = new ApprovalsRepository(db.dataSource, metrics);
    tasks = new ApprovalsService(repo, { tasks: { approvalPolicies: [] } } as unknown as AppConfig);
    turns = new TurnApprovalsService(repo, new GrantsRepository(db.dataSource));
  }, 60_000);
  afterAll(() => db?.close());

  let n = 0;
  const session = async (workspace = '/w') => {
    const id = `agent_chat_${backend}_${++n}`;
    await chats.insertSession({
      id,
      tenant_id: 't1',
      title: 'T',
      runtime_kind: 'external_agent',
      provider: '',
      model: '',
      workspace,
      system_prompt: '',
      adapter_id: 'codex',
      capabilities: {},
      status: 'idle',
      session_started_at: null,
    });
    return id;
  };
  const q = (sql: string, params: unknown[] = []) => db.dataSource.query(sql, params) as Promise<Array<Record<string, unknown>>>;

  it('moves both stores into one with their ids: the task and Agent Chat answers are the same after it, and down splits them back', async () => {
    await migrate(db.dataSource, 'down');
    const s = await session();
    await q(
      `INSERT INTO task_approvals (id, tenant_id, task_id, run_id, step_id, kind, status, reason, action_summary, details, action_hash,
         requested_by, resolved_by, resolution_note, created_at, resolved_at)
       VALUES ('approval_old_pending', 't1', 'task_1', 'run_1', 'step_1', 'shell_command', 'pending', 'shell_exec policy', '["$ ls"]',
               '{"argv":["ls"]}', 'hash1', 'user:alice', '', '', $1, NULL),
              ('approval_old_rejected', 't1', 'task_1', 'run_0', NULL, 'agent_loop_tool_call', 'rejected', 'tools', '[]', '{"tool_calls":[]}',
               'hash0', 'user:alice', 'user:bob', 'no thanks', $2, $3)`,
      [T1, T0, T2],
    );
    await q(
      `INSERT INTO agent_chat_approvals (id, tenant_id, session_id, turn_id, adapter_id, workspace, tool_call_id, tool_kind, tool_name, options,
         scope_choices, status, decision, scope, path, selected_option, grant_id, note, waiter, created_at, expires_at, resolved_at)
       VALUES ('appr_old_pending', 't1', $1, 'turn_1', 'codex', '/w', 'call_1', 'shell_exec', 'Run ls',
               '[{"optionId":"allow","name":"Allow","kind":"allow_once"}]', '["once","session"]', 'pending', NULL, NULL, NULL, NULL, NULL, '',
               'worker_1', $2, $3, NULL),
              ('appr_old_approved', 't1', $1, 'turn_0', 'codex', '/w', 'call_0', 'file_write', 'Write a', '[]', '["once","session"]',
               'approved', 'approve', 'session', 'operator', 'allow', 'grant_old', 'ok', NULL, $4, NULL, $5)`,
      [s, T1, T2, T0, T1],
    );
    await q(
      `INSERT INTO agent_chat_grants (id, tenant_id, scope, decision, adapter_id, tool_kind, workspace, session_id, approval_id, note, created_at, expires_at)
       VALUES ('grant_old', 't1', 'session', 'allow', 'codex', 'file_write', NULL, $1, 'appr_old_approved', 'ok', $2, NULL)`,
      [s, T1],
    );

    await migrate(db.dataSource, 'up');
    expect(await q(`SELECT to_regclass('task_approvals') AS a, to_regclass('agent_chat_approvals') AS b, to_regclass('agent_chat_grants') AS c`)).toEqual([
      { a: null, b: null, c: null },
    ]);
    expect((await tasks.listForTask('t1', 'task_1')).map(toApprovalResponse)).toEqual([
      {
        id: 'approval_old_rejected',
        task_id: 'task_1',
        run_id: 'run_0',
        step_id: undefined,
        kind: 'agent_loop_tool_call',
        status: 'rejected',
        reason: 'tools',
        action_summary: [],
        details: { tool_calls: [] },
        requested_by: 'user:alice',
        resolved_by: 'user:bob',
        resolution_note: 'no thanks',
        created_at: T0.toISOString(),
        resolved_at: T2.toISOString(),
      },
      {
        id: 'approval_old_pending',
        task_id: 'task_1',
        run_id: 'run_1',
        step_id: 'step_1',
        kind: 'shell_command',
        status: 'pending',
        reason: 'shell_exec policy',
        action_summary: ['$ ls'],
        details: { argv: ['ls'] },
        requested_by: 'user:alice',
        resolved_by: undefined,
        resolution_note: undefined,
        created_at: T1.toISOString(),
        resolved_at: undefined,
      },
    ]);
    expect((await tasks.get('t1', 'task_1', 'approval_old_pending')).actionHash).toBe('hash1');
    expect((await tasks.listPending('t1', 10)).map((a) => a.id)).toEqual(['approval_old_pending']);
    expect(toApprovalView(await turns.get('t1', s, 'appr_old_pending'))).toEqual({
      id: 'appr_old_pending',
      session_id: s,
      turn_id: 'turn_1',
      adapter_id: 'codex',
      workspace: '/w',
      tool_call_id: 'call_1',
      tool_kind: 'shell_exec',
      tool_name: 'Run ls',
      options: [{ option_id: 'allow', name: 'Allow', kind: 'allow_once' }],
      scope_choices: ['once', 'session'],
      status: 'pending',
      decision: null,
      scope: null,
      path: null,
      selected_option: null,
      grant_id: null,
      note: '',
      created_at: T1.toISOString(),
      expires_at: T2.toISOString(),
      resolved_at: null,
    });
    expect((await turns.list('t1', s)).map((a) => [a.id, a.status, a.grant_id])).toEqual([
      ['appr_old_approved', 'approved', 'grant_old'],
      ['appr_old_pending', 'pending', null],
    ]);
    expect((await turns.listPending('t1', 10)).map((a) => a.id)).toEqual(['appr_old_pending']);
    expect((await turns.listGrants('t1', {})).map(toGrantView)).toEqual([
      {
        id: 'grant_old',
        scope: 'session',
        decision: 'allow',
        adapter_id: 'codex',
        tool_kind: 'file_write',
        workspace: null,
        session_id: s,
        approval_id: 'appr_old_approved',
        note: 'ok',
        created_at: T1.toISOString(),
        expires_at: null,
      },
    ]);

    await migrate(db.dataSource, 'down');
    expect(await q(`SELECT id, task_id, status, resolved_by, resolution_note FROM task_approvals ORDER BY id`)).toEqual([
      { id: 'approval_old_pending', task_id: 'task_1', status: 'pending', resolved_by: '', resolution_note: '' },
      { id: 'approval_old_rejected', task_id: 'task_1', status: 'rejected', resolved_by: 'user:bob', resolution_note: 'no thanks' },
    ]);
    expect(await q(`SELECT id, session_id, status, path, grant_id, note, waiter FROM agent_chat_approvals ORDER BY id`)).toEqual([
      { id: 'appr_old_approved', session_id: s, status: 'approved', path: 'operator', grant_id: 'grant_old', note: 'ok', waiter: null },
      { id: 'appr_old_pending', session_id: s, status: 'pending', path: null, grant_id: null, note: '', waiter: 'worker_1' },
    ]);
    expect(await q(`SELECT id FROM agent_chat_grants`)).toEqual([{ id: 'grant_old' }]);
    await migrate(db.dataSource, 'up');
  });

  it('one settlement for every runtime: a decision wins once, a run cancels its pending gates together, a grant decides the next request', async () => {
    const observed = jest.spyOn(metrics, 'approvalResolved');
    const s = await session('/repo');
    const base = { tenantId: 't2', taskId: 'task_2', runId: 'run_2', reason: 'r', actionSummary: ['x'], details: { a: 1 }, requestedBy: 'u' };
    const [g1, g2, g3] = await db.dataSource.transaction(async (m) => [
      await tasks.create(m, { ...base, kind: 'shell_command' }),
      await tasks.create(m, { ...base, kind: 'network_egress' }),
      await tasks.create(m, { ...base, kind: 'file_write' }),
    ]);
    const decided = await db.dataSource.transaction((m) =>
      tasks.resolve(m, { tenantId: 't2', taskId: 'task_2', id: g1.id, decision: 'reject', note: 'no', resolvedBy: 'op' }),
    );
    expect(decided).toMatchObject({ status: 'rejected', resolvedBy: 'op', resolutionNote: 'no' });
    await expect(
      db.dataSource.transaction((m) => tasks.resolve(m, { tenantId: 't2', taskId: 'task_2', id: g1.id, decision: 'approve', note: '', resolvedBy: 'op' })),
    ).rejects.toMatchObject({ status: 409 });
    const cancelled = await db.dataSource.transaction((m) => tasks.cancelPendingForRun(m, 't2', 'run_2', 'run cancelled'));
    expect(cancelled.map((a) => [a.id, a.status, a.resolvedBy, a.resolutionNote]).sort()).toEqual(
      [
        [g2.id, 'cancelled', 'system', 'run cancelled'],
        [g3.id, 'cancelled', 'system', 'run cancelled'],
      ].sort(),
    );

    const request = (name: string) =>
      turns.open(
        {
          tenant_id: 't1',
          session_id: s,
          turn_id: null,
          adapter_id: 'claude',
          workspace: '/repo',
          tool_call_id: name,
          tool_kind: 'network',
          tool_name: name,
          options: [
            { optionId: 'yes', name: 'Yes', kind: 'allow_once' },
            { optionId: 'no', name: 'No', kind: 'reject_once' },
          ],
          scope_choices: ['once', 'session', 'workspace_tool', 'adapter_tool'],
        },
        { mode: 'prompt', waiter: 'w1', timeoutMs: 60_000 },
      );
    const pending = await request('fetch a');
    expect(pending).toMatchObject({ runtime: 'agent_chat_turn', status: 'pending', waiter: 'w1' });
    const approved = await turns.decide('t1', s, pending.id, { decision: 'approve', scope: 'workspace_tool', note: 'fine' });
    expect(approved).toMatchObject({ status: 'approved', path: 'operator', decision: 'approve', scope: 'workspace_tool', selected_option: 'yes' });
    await expect(turns.decide('t1', s, pending.id, { decision: 'deny', scope: 'once' })).rejects.toMatchObject({ status: 409 });
    await expect(turns.withdraw('t1', s, pending.id)).rejects.toMatchObject({ status: 409 });
    expect(await turns.settle(pending.id, { status: 'timed_out', path: 'timeout' })).toBeNull();
    // The grant the decision left decides the next request of that adapter and tool kind in that workspace at once.
    const next = await request('fetch b');
    expect(next).toMatchObject({ status: 'approved', path: 'grant', grant_id: approved.grant_id, selected_option: 'yes' });

    // Waits are measured once per settled row, labelled by the runtime that asked (a task's `rejected` is `denied`).
    expect(observed.mock.calls.map(([kind, outcome]) => `${kind}:${outcome}`).sort()).toEqual(
      ['task:denied', 'task:cancelled', 'task:cancelled', 'agent_chat:approved'].sort(),
    );
    observed.mockRestore();
  });

  it('the reconcile pass and retention touch only the Agent Chat requests; a deleted session takes its requests along', async () => {
    const s = await session();
    await db.dataSource.transaction((m) =>
      tasks.create(m, { tenantId: 't3', taskId: 'task_3', runId: 'run_3', kind: 'file_write', reason: '', actionSummary: [], details: {}, requestedBy: '' }),
    );
    const orphan = await turns.open(
      {
        tenant_id: 't3',
        session_id: s,
        turn_id: 'turn_gone',
        adapter_id: 'codex',
        workspace: '/w',
        tool_call_id: 'c',
        tool_kind: 'other',
        tool_name: 'n',
        options: [],
        scope_choices: ['once'],
      },
      { mode: 'prompt', waiter: 'w_gone', timeoutMs: 60_000 },
    );
    await q(`UPDATE approvals SET created_at = now() - interval '1 minute' WHERE tenant_id = 't3'`);
    const taskPending = await tasks.countPending();
    expect(await turns.countPending()).toBeGreaterThanOrEqual(1);
    const reconciled = await turns.reconcileOrphans();
    expect(reconciled.map((a) => [a.id, a.status, a.path])).toContainEqual([orphan.id, 'timed_out', 'startup_reconcile']);
    expect(reconciled.every((a) => a.runtime === 'agent_chat_turn')).toBe(true);
    expect(await tasks.countPending()).toBe(taskPending);
    expect((await tasks.listPending('t3', 10)).map((a) => a.taskId)).toEqual(['task_3']);

    await q(`UPDATE approvals SET resolved_at = now() - interval '1 day' WHERE tenant_id = 't3' AND id = $1`, [orphan.id]);
    const pruned = await turns.prune(new Date(Date.now() - 3600_000), 1_000_000);
    expect(pruned.approvals).toBeGreaterThanOrEqual(1);
    expect(await q(`SELECT id FROM approvals WHERE id = $1`, [orphan.id])).toEqual([]);
    expect(await q(`SELECT status FROM approvals WHERE tenant_id = 't3'`)).toEqual([{ status: 'pending' }]);

    const doomed = await turns.open({ ...orphan, tool_call_id: 'd', tool_name: 'd', turn_id: null }, { mode: 'deny', waiter: 'w', timeoutMs: 1 });
    expect(doomed).toMatchObject({ status: 'denied', path: 'default_mode', decision: 'deny', scope: 'once' });
    await q(`DELETE FROM agent_chat_sessions WHERE id = $1`, [s]);
    expect(await q(`SELECT id FROM approvals WHERE session_id = $1`, [s])).toEqual([]);
  });
});
