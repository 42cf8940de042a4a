import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startFakeUpstream, type FakeUpstream, type RecordedRequest } from '../../support/fake-upstream/fake-upstream';
import { adapterEnv } from '../../support/acp-agents';
import { waitFor } from '../../support/infra';
import { processesMatching } from '../../support/mcp-servers';
import { providerEnv } from '../../support/provider-env';
import { Client, embeddedTasksEnv, Json, Processes } from '../tasks/tasks-harness';

const MODEL = 'claude-3-5-haiku-latest';
const UPSTREAM_KEY = 'sk-ant-upstream-only-the-gateway-knows';
/** The real adapter's processes (its Node script and the `claude` binary it runs). */
const CLAUDE_PROCESS = 'claude-agent-acp/dist/index[.]js|claude-agent-sdk';

/** Claude Code's main requests carry its tool catalog (Bash among them); its side requests (a title) do not. */
const main = (r: RecordedRequest): boolean =>
  r.path === '/v1/messages' && Array.isArray(r.body?.tools) && (r.body!.tools as Json[]).some((t) => t.name === 'Bash');
const lastIsToolResult = (r: RecordedRequest): boolean => JSON.stringify((r.body?.messages as Json[] | undefined)?.at(-1) ?? {}).includes('tool_result');

/**
 * The real Claude Code ACP adapter (`@agentclientprotocol/claude-agent-acp` from npm) as an External Agent session
 * (issue 16), offline: the session has a model, so the worker points the adapter at this gateway's `/v1/messages` with
 * a key minted for the session; the gateway routes to the fake upstream (an Anthropic-protocol provider). Its Bash tool
 * asks permission through the approval coordinator, is approved through the API, and really runs in the workspace.
 */
describe('Claude Code through the gateway (embedded, real claude-agent-acp)', () => {
  const procs = new Processes();
  let upstream: FakeUpstream;
  let c: Client;

  beforeAll(async () => {
    upstream = await startFakeUpstream({});
    const all = await procs.start(
      'all',
      embeddedTasksEnv(
        adapterEnv({
          ...providerEnv('anth', upstream, { key: UPSTREAM_KEY, kind: 'local', protocol: 'anthropic' }),
          GATEWAY_AGENT_ADAPTER_APPROVAL_MODE: 'prompt',
          GATEWAY_AGENT_ADAPTER_APPROVAL_TIMEOUT: '30s',
        }),
      ),
    );
    c = new Client(all.url);
  }, 120_000);
  afterAll(async () => {
    await procs.stopAll();
    await upstream?.close();
  });

  const base = (id: string) => `/hecate/v1/agent-chat/sessions/${id}`;
  const lastAssistant = (s: Json): Json => (s.messages as Json[]).filter((m) => m.role === 'assistant').at(-1)!;
  const settled = (id: string): Promise<Json> =>
    waitFor(
      async () => {
        const m = lastAssistant(await c.ok('GET', base(id)));
        return ['completed', 'failed', 'cancelled'].includes(m.status as string) ? m : undefined;
      },
      { timeoutMs: 60_000, what: 'the Claude Code turn to settle' },
    );
  const pendingOf = (id: string): Promise<Json> =>
    waitFor(async () => ((await c.ok('GET', `${base(id)}/approvals?status=pending`)) as unknown as Json[])[0], {
      timeoutMs: 60_000,
      what: 'a pending approval',
    });

  it('runs a whole turn: Bash asks permission, approved through the API, runs in the workspace; a session grant decides the next one; metered with the session key', async () => {
    upstream.script({
      match: (r) => main(r) && !lastIsToolResult(r),
      toolCalls: [{ name: 'Bash', arguments: { command: 'echo hello > out.txt', description: 'Write out.txt' } }],
    });
    upstream.script({ match: (r) => main(r) && lastIsToolResult(r), content: 'All done.' });
    const ws = mkdtempSync(join(tmpdir(), 'hecate-claude-ws-'));
    execFileSync('git', ['init', '-q', ws]);
    const created = await c.call('POST', '/hecate/v1/agent-chat/sessions', {
      runtime_kind: 'external_agent',
      adapter_id: 'claude_code',
      workspace: ws,
      model: MODEL,
    });
    expect(created.status).toBe(200);
    const s = created.body.data as Json;
    expect(s).toMatchObject({ adapter_id: 'claude_code', adapter_state: 'ready', native_session_id: expect.any(String) });

    expect((await c.call('POST', `${base(s.id)}/messages`, { content: 'create out.txt', wait: false })).status).toBe(202);
    const p = await pendingOf(s.id);
    expect(p).toMatchObject({ tool_kind: 'shell_exec', tool_name: 'echo hello > out.txt', status: 'pending' });
    expect((p.options as Json[]).map((o) => o.kind)).toEqual(expect.arrayContaining(['allow_once', 'reject_once']));
    expect(existsSync(join(ws, 'out.txt'))).toBe(false);
    const ok = await c.call('POST', `${base(s.id)}/approvals/${p.id}/resolve`, { decision: 'approve', scope: 'session' });
    expect(ok.body.data).toMatchObject({ status: 'approved', path: 'operator', selected_option: 'allow-once' });

    const reply = await settled(s.id);
    expect(reply).toMatchObject({
      status: 'completed',
      content: 'All done.',
      adapter_id: 'claude_code',
      cost_mode: 'gateway',
      diff_stat: expect.stringContaining('1 file'),
    });
    expect((reply.usage as Json).input_tokens).toBeGreaterThan(0);
    expect(readFileSync(join(ws, 'out.txt'), 'utf8')).toBe('hello\n');
    expect((reply.activities as Json[]).map((a) => a.type)).toEqual(expect.arrayContaining(['tool_call', 'approval', 'files_changed', 'completed']));

    // The next Bash call is decided by the session grant: nobody is asked.
    upstream.script({
      match: (r) => main(r) && !lastIsToolResult(r),
      toolCalls: [{ name: 'Bash', arguments: { command: 'echo again > two.txt', description: 'Write two.txt' } }],
    });
    upstream.script({ match: (r) => main(r) && lastIsToolResult(r), content: 'Done again.' });
    const again = await c.ok('POST', `${base(s.id)}/messages`, { content: 'and two.txt' });
    expect(lastAssistant(again)).toMatchObject({ status: 'completed', content: 'Done again.' });
    expect(readFileSync(join(ws, 'two.txt'), 'utf8')).toBe('again\n');
    const rows = (await c.ok('GET', `${base(s.id)}/approvals`)) as unknown as Json[];
    expect(rows.map((r) => `${r.status}:${r.path}`)).toEqual(['approved:operator', 'approved:grant']);

    // Every model call went through the gateway with the session's key; the upstream saw only the gateway's own key.
    const usage = (await c.ok('GET', `/hecate/v1/usage/events?agent_chat_session_id=${s.id}`)) as unknown as Json[];
    expect(usage.length).toBeGreaterThanOrEqual(4);
    expect(usage.every((u) => u.model === MODEL && u.status === 'ok')).toBe(true);
    expect(new Set(usage.map((u) => u.api_key_id)).size).toBe(1);
    expect(upstream.requests.filter((r) => r.path === '/v1/messages').every((r) => r.apiKey === UPSTREAM_KEY)).toBe(true);
    const keys = (await c.ok('GET', '/hecate/v1/api-keys')) as unknown as Json[];
    const key = keys.find((k) => k.id === usage[0].api_key_id)!;
    expect(key).toMatchObject({ name: `agent-chat session ${s.id}`, scopes: ['inference'], revoked_at: null });

    // Delete: the process group goes, and so does the key.
    expect(processesMatching(CLAUDE_PROCESS)).toBeGreaterThan(0);
    expect([200, 204]).toContain((await c.call('DELETE', base(s.id))).status);
    await waitFor(() => processesMatching(CLAUDE_PROCESS) === 0, { timeoutMs: 15_000, what: 'no Claude Code process left' });
    const after = ((await c.ok('GET', '/hecate/v1/api-keys')) as unknown as Json[]).find((k) => k.id === key.id)!;
    expect(after.revoked_at).not.toBeNull();
  });

  const session = async (): Promise<{ id: string; ws: string }> => {
    const ws = mkdtempSync(join(tmpdir(), 'hecate-claude-ws-'));
    execFileSync('git', ['init', '-q', ws]);
    const s = await c.ok('POST', '/hecate/v1/agent-chat/sessions', { runtime_kind: 'external_agent', adapter_id: 'claude_code', workspace: ws, model: MODEL });
    return { id: s.id as string, ws };
  };

  it('denied through the API the command never runs; cancel while a request waits ends the turn cancelled (request_cancelled) and the next turn works', async () => {
    const { id, ws } = await session();
    upstream.script({
      match: (r) => main(r) && !lastIsToolResult(r),
      toolCalls: [{ name: 'Bash', arguments: { command: 'echo no > no.txt', description: 'Write no.txt' } }],
    });
    upstream.script({ match: (r) => main(r) && lastIsToolResult(r), content: 'Understood, I will not.' });
    expect((await c.call('POST', `${base(id)}/messages`, { content: 'write no.txt', wait: false })).status).toBe(202);
    const denied = await pendingOf(id);
    await c.ok('POST', `${base(id)}/approvals/${denied.id}/resolve`, { decision: 'deny', note: 'not today' });
    expect(await settled(id)).toMatchObject({ status: 'completed', content: 'Understood, I will not.' });
    expect(existsSync(join(ws, 'no.txt'))).toBe(false);
    // The model heard the refusal as the tool's result.
    const afterDeny = upstream.requests.filter((r) => main(r) && lastIsToolResult(r)).at(-1)!;
    expect(JSON.stringify(afterDeny.body?.messages?.at(-1))).toMatch(/is_error|reject|denied|permission/i);

    upstream.script({
      match: (r) => main(r) && !lastIsToolResult(r),
      toolCalls: [{ name: 'Bash', arguments: { command: 'echo late > late.txt', description: 'Write late.txt' } }],
    });
    expect((await c.call('POST', `${base(id)}/messages`, { content: 'write late.txt', wait: false })).status).toBe(202);
    const waiting = await pendingOf(id);
    expect((await c.call('POST', `${base(id)}/cancel`)).status).toBe(202);
    expect(await settled(id)).toMatchObject({ status: 'cancelled' });
    expect(await c.ok('GET', `${base(id)}/approvals/${waiting.id}`)).toMatchObject({ status: 'cancelled', path: 'request_cancelled' });
    expect(existsSync(join(ws, 'late.txt'))).toBe(false);

    // Claude Code tells the model the earlier tool use was interrupted (with the new prompt in the same user message).
    upstream.script({ match: (r) => main(r) && JSON.stringify(r.body?.messages?.at(-1) ?? {}).includes('are you there?'), content: 'Still here.' });
    expect(lastAssistant(await c.ok('POST', `${base(id)}/messages`, { content: 'are you there?' }))).toMatchObject({
      status: 'completed',
      content: 'Still here.',
    });
    expect([200, 204]).toContain((await c.call('DELETE', base(id))).status);
    await waitFor(() => processesMatching(CLAUDE_PROCESS) === 0, { timeoutMs: 15_000, what: 'no Claude Code process left' });
  });
});
