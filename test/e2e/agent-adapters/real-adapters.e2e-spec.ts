import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startFakeUpstream, type FakeUpstream, type RecordedRequest } from '../../support/fake-upstream/fake-upstream';
import { adapterEnv, FAULT_ADAPTERS } from '../../support/acp-agents';
import { waitFor } from '../../support/infra';
import { processesMatching } from '../../support/mcp-servers';
import { providerEnv } from '../../support/provider-env';
import { sandboxOwned } from '../../support/sandbox';
import { SseReader } from '../../support/sse';
import { Client, embeddedTasksEnv, Json, Processes, TOKEN } from '../tasks/tasks-harness';

const MODEL = 'claude-3-5-haiku-latest';
const APPROVAL_TIMEOUT_S = 6;
const UPSTREAM_KEY = 'sk-ant-upstream-only-the-gateway-knows';
/** The real adapters' processes (Claude Code's Node script and the `claude` binary it runs; the codex-acp binary). */
const CLAUDE_PROCESS = 'claude-agent-acp/dist/index[.]js|claude-agent-sdk';
const CODEX_PROCESS = 'codex-acp-linux-x64/bin/codex-acp';
const CODEX_BIN = join(__dirname, '../../../node_modules/@zed-industries/codex-acp-linux-x64/bin/codex-acp');

/** Claude Code's main requests carry its tool catalog (Bash among them); its side requests (a title) do not. */
const main = (r: RecordedRequest): boolean =>
  r.path === '/v1/messages' && Array.isArray(r.body?.tools) && (r.body!.tools as Json[]).some((t) => t.name === 'Bash');
const lastIsToolResult = (r: RecordedRequest): boolean => JSON.stringify((r.body?.messages as Json[] | undefined)?.at(-1) ?? {}).includes('tool_result');
/** Codex's requests (Responses API); after a command ran, its input carries the command's output. */
const codexCall = (r: RecordedRequest): boolean => r.path === '/v1/responses';
const afterCommand = (r: RecordedRequest): boolean => JSON.stringify((r.body?.input as Json[] | undefined)?.at(-1) ?? {}).includes('function_call_output');
/** The text a session stream's `delta` events carried. */
const deltasOf = (sse: SseReader): string =>
  sse.events
    .filter((e) => e.event === 'delta')
    .map((e) => String((e.data as Json).content ?? ''))
    .join('');
/** A command Codex must ask for: unsandboxed (its own bubblewrap helper is not available inside Hecate's sandbox). */
const escalated = (cmd: string) => ({ name: 'exec_command', arguments: { cmd, sandbox_permissions: 'require_escalated', justification: `Run ${cmd}` } });

/**
 * The real ACP adapters from npm as External Agent sessions, offline, one embedded server for both.
 * Claude Code (`@agentclientprotocol/claude-agent-acp`): the session has a model, so the worker points it at this
 * gateway's `/v1/messages` with a key minted for the session, routed to the fake upstream (an Anthropic-protocol
 * provider). Codex (`@zed-industries/codex-acp`, its platform binary): the built-in adapter with a model goes through
 * this gateway's `/v1/responses` the same way (translated to the Anthropic provider); an operator-defined adapter
 * configured with a `responses` model provider on the fake upstream keeps its own credentials (cost `external`).
 * Their commands ask permission through the approval coordinator and really run in the workspace.
 */
describe('real adapters (embedded: claude-agent-acp and codex-acp through the gateway, codex-acp on its own provider)', () => {
  const procs = new Processes();
  let upstream: FakeUpstream;
  let c: Client;
  let url: string;

  /** One embedded server: the Anthropic provider on the fake upstream, Codex as an operator-defined adapter on it. */
  const serverEnv = (mode: 'prompt' | 'deny'): Record<string, string> => {
    const codex = {
      id: 'codex_offline',
      name: 'Codex (offline)',
      command: CODEX_BIN,
      args: [
        '-c',
        'model_provider="fake"',
        '-c',
        `model_providers.fake={name="fake",base_url="${upstream.url}/v1",env_key="FAKE_CODEX_KEY",wire_api="responses"}`,
        '-c',
        'model="gpt-fake"',
      ],
      env: ['FAKE_CODEX_KEY'],
    };
    return embeddedTasksEnv(
      adapterEnv({
        ...providerEnv('anth', upstream, { key: UPSTREAM_KEY, kind: 'local', protocol: 'anthropic' }),
        GATEWAY_AGENT_ADAPTERS: JSON.stringify([...FAULT_ADAPTERS, codex]),
        FAKE_CODEX_KEY: 'sk-codex-fake',
        // The offline Codex's model server is on loopback: the sandbox's egress proxy passes it only with this policy.
        GATEWAY_TASK_HTTP_ALLOW_PRIVATE_IPS: 'true',
        GATEWAY_AGENT_ADAPTER_APPROVAL_MODE: mode,
        GATEWAY_AGENT_ADAPTER_APPROVAL_TIMEOUT: `${APPROVAL_TIMEOUT_S}s`,
      }),
    );
  };

  beforeAll(async () => {
    upstream = await startFakeUpstream({});
    const all = await procs.start('all', serverEnv('prompt'));
    c = new Client(all.url);
    url = all.url;
    // Priced like the real model ($0.80 / $4 per million tokens), so metered turns have a cost.
    await c.ok('PUT', `/hecate/v1/settings/pricing/anth/${MODEL}`, {
      input_micros_usd_per_million_tokens: 800_000,
      output_micros_usd_per_million_tokens: 4_000_000,
    });
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

  /** Starts a turn (202) and waits for the permission request it raises. */
  const askingTurn = async (id: string, content: string): Promise<Json> => {
    expect((await c.call('POST', `${base(id)}/messages`, { content, wait: false })).status).toBe(202);
    return pendingOf(id);
  };
  /** DELETE ends the session's adapter: no process of it is left. */
  const deleteAndGone = async (id: string, processPattern: string): Promise<void> => {
    expect([200, 204]).toContain((await c.call('DELETE', base(id))).status);
    await waitFor(() => processesMatching(processPattern) === 0, { timeoutMs: 15_000, what: `no ${processPattern} process left` });
  };

  it('Claude Code runs a whole turn: Bash asks permission, approved through the API, runs in the workspace; a session grant decides the next one; metered with the session key', async () => {
    upstream.script({
      match: (r) => main(r) && !lastIsToolResult(r),
      toolCalls: [{ name: 'Bash', arguments: { command: 'echo hello > out.txt', description: 'Write out.txt' } }],
    });
    upstream.script({ match: (r) => main(r) && lastIsToolResult(r), content: 'All done.' });
    const ws = mkdtempSync(join(tmpdir(), 'hecate-claude-ws-'));
    execFileSync('git', ['init', '-q', ws]);
    sandboxOwned(ws); // the adapter runs as the sandbox uid: its workspace is that uid's
    const created = await c.call('POST', '/hecate/v1/agent-chat/sessions', {
      runtime_kind: 'external_agent',
      adapter_id: 'claude_code',
      workspace: ws,
      model: MODEL,
    });
    expect(created.status).toBe(200);
    const s = created.body.data as Json;
    expect(s).toMatchObject({ adapter_id: 'claude_code', adapter_state: 'ready', native_session_id: expect.any(String) });

    const sse = new SseReader(`${url}${base(s.id)}/stream`, { token: TOKEN });
    await sse.opened;
    const p = await askingTurn(s.id, 'create out.txt');
    expect(p).toMatchObject({ tool_kind: 'shell_exec', tool_name: 'echo hello > out.txt', status: 'pending' });
    expect((await sse.until((e) => e.event === 'approval.requested')).data).toMatchObject({ approval_id: p.id, adapter_id: 'claude_code' });
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
    // The text streamed live on the session stream: its deltas are the reply.
    await sse.until((e) => e.event === 'message');
    expect(deltasOf(sse)).toBe('All done.');
    expect(sse.events.find((e) => e.event === 'tool_call')?.data).toMatchObject({ type: 'tool_call', kind: 'execute' });
    sse.close();

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
    // The reply's cost is this gateway's own: the session key's usage rows during the turn.
    const first = ((await c.ok('GET', base(s.id))).messages as Json[]).find((m) => m.id === reply.id)!;
    expect(first.gateway_usage).toMatchObject({ requests: expect.any(Number), input_tokens: expect.any(Number) });
    expect((first.gateway_usage as Json).requests).toBeGreaterThanOrEqual(2);
    expect(first.cost_micros_usd).toBeGreaterThan(0);
    const turnRows = usage.filter((u) => u.created_at >= reply.started_at! && u.created_at <= reply.completed_at!);
    expect(first.cost_micros_usd).toBe(turnRows.reduce((sum, u) => sum + (u.cost_micros_usd as number), 0));
    const keys = (await c.ok('GET', '/hecate/v1/api-keys')) as unknown as Json[];
    const key = keys.find((k) => k.id === usage[0].api_key_id)!;
    expect(key).toMatchObject({ name: `agent-chat session ${s.id}`, scopes: ['inference'], revoked_at: null });

    // The first turn's changed files, and its revert (only its paths: two.txt, the second turn's, stays).
    const files = await c.ok('GET', `${base(s.id)}/messages/${reply.id}/files`);
    expect(JSON.stringify(files)).toContain('out.txt');
    const reverted = await c.call('POST', `${base(s.id)}/messages/${reply.id}/revert`, { paths: [] });
    expect(reverted.status).toBe(200);
    expect(reverted.body.data).toMatchObject({ reverted: true });
    expect(existsSync(join(ws, 'out.txt'))).toBe(false);
    expect(readFileSync(join(ws, 'two.txt'), 'utf8')).toBe('again\n');

    // Delete: the process group goes, and so does the key.
    expect(processesMatching(CLAUDE_PROCESS)).toBeGreaterThan(0);
    await deleteAndGone(s.id, CLAUDE_PROCESS);
    const after = ((await c.ok('GET', '/hecate/v1/api-keys')) as unknown as Json[]).find((k) => k.id === key.id)!;
    expect(after.revoked_at).not.toBeNull();
  });

  const session = async (adapterId = 'claude_code', model: string | undefined = MODEL): Promise<{ id: string; ws: string }> => {
    const ws = mkdtempSync(join(tmpdir(), `hecate-${adapterId}-ws-`));
    execFileSync('git', ['init', '-q', ws]);
    sandboxOwned(ws); // the adapter runs as the sandbox uid: its workspace is that uid's
    const s = await c.ok('POST', '/hecate/v1/agent-chat/sessions', { runtime_kind: 'external_agent', adapter_id: adapterId, workspace: ws, model });
    return { id: s.id as string, ws };
  };

  it('Claude Code: denied through the API the command never runs; cancel while a request waits ends the turn cancelled (request_cancelled) and the next turn works', async () => {
    const { id, ws } = await session();
    upstream.script({
      match: (r) => main(r) && !lastIsToolResult(r),
      toolCalls: [{ name: 'Bash', arguments: { command: 'echo no > no.txt', description: 'Write no.txt' } }],
    });
    upstream.script({ match: (r) => main(r) && lastIsToolResult(r), content: 'Understood, I will not.' });
    const denied = await askingTurn(id, 'write no.txt');
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
    const waiting = await askingTurn(id, 'write late.txt');
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
    await deleteAndGone(id, CLAUDE_PROCESS);
  });

  it('Codex runs a whole turn: its command asks permission, approved through the API, runs in the workspace, diff and revert; a session grant decides the next one', async () => {
    const { id, ws } = await session('codex_offline', undefined);
    upstream.script({ match: (r) => codexCall(r) && !afterCommand(r), toolCalls: [escalated('echo hello > out.txt')] });
    upstream.script({ match: (r) => codexCall(r) && afterCommand(r), content: 'All done.' });
    const sse = new SseReader(`${url}${base(id)}/stream`, { token: TOKEN });
    await sse.opened;
    const p = await askingTurn(id, 'create out.txt');
    expect(p).toMatchObject({ adapter_id: 'codex_offline', tool_kind: 'shell_exec', tool_name: 'echo hello > out.txt', status: 'pending' });
    expect((p.options as Json[]).map((o) => `${o.option_id}:${o.kind}`)).toEqual(expect.arrayContaining(['approved:allow_once', 'abort:reject_once']));
    expect(existsSync(join(ws, 'out.txt'))).toBe(false);
    await c.ok('POST', `${base(id)}/approvals/${p.id}/resolve`, { decision: 'approve', scope: 'session' });
    const reply = await settled(id);
    expect(reply).toMatchObject({ status: 'completed', adapter_id: 'codex_offline', cost_mode: 'external', diff_stat: expect.stringContaining('1 file') });
    expect(reply.content).toContain('All done.');
    await sse.until((e) => e.event === 'message');
    expect(deltasOf(sse)).toContain('All done.');
    sse.close();
    expect(JSON.stringify(await c.ok('GET', `${base(id)}/messages/${reply.id}/files`))).toContain('out.txt');
    expect(readFileSync(join(ws, 'out.txt'), 'utf8')).toBe('hello\n');
    expect(JSON.parse(reply.raw_output as string)).toEqual(
      expect.arrayContaining([expect.objectContaining({ sessionUpdate: 'tool_call_update', status: 'completed' })]),
    );

    upstream.script({ match: (r) => codexCall(r) && !afterCommand(r), toolCalls: [escalated('echo again > two.txt')] });
    upstream.script({ match: (r) => codexCall(r) && afterCommand(r), content: 'Done again.' });
    const again = lastAssistant(await c.ok('POST', `${base(id)}/messages`, { content: 'and two.txt' }));
    expect(again.content).toContain('Done again.');
    expect(readFileSync(join(ws, 'two.txt'), 'utf8')).toBe('again\n');
    expect(((await c.ok('GET', `${base(id)}/approvals`)) as unknown as Json[]).map((r) => `${r.status}:${r.path}`)).toEqual([
      'approved:operator',
      'approved:grant',
    ]);

    const reverted = await c.call('POST', `${base(id)}/messages/${reply.id}/revert`, { paths: [] });
    expect(reverted.status).toBe(200);
    expect(existsSync(join(ws, 'out.txt'))).toBe(false);
    expect(existsSync(join(ws, 'two.txt'))).toBe(true);
    expect(processesMatching(CODEX_PROCESS)).toBeGreaterThan(0);
    await deleteAndGone(id, CODEX_PROCESS);
  });

  it('Codex with a model runs through this gateway: its Responses API calls are translated to the Anthropic provider, metered with the session key', async () => {
    /** Codex's calls as they reach the upstream: Anthropic messages carrying its exec_command tool. */
    const codexViaGateway = (r: RecordedRequest): boolean =>
      r.path === '/v1/messages' && Array.isArray(r.body?.tools) && (r.body!.tools as Json[]).some((t) => t.name === 'exec_command');
    upstream.script({ match: (r) => codexViaGateway(r) && !lastIsToolResult(r), toolCalls: [escalated('echo metered > m.txt')] });
    upstream.script({ match: (r) => codexViaGateway(r) && lastIsToolResult(r), content: 'Metered and done.' });
    const seen = upstream.requests.length;
    const { id, ws } = await session('codex', MODEL);
    const p = await askingTurn(id, 'create m.txt');
    expect(p).toMatchObject({ adapter_id: 'codex', tool_kind: 'shell_exec', tool_name: 'echo metered > m.txt', status: 'pending' });
    await c.ok('POST', `${base(id)}/approvals/${p.id}/resolve`, { decision: 'approve', scope: 'once' });
    const reply = await settled(id);
    expect(reply).toMatchObject({ status: 'completed', adapter_id: 'codex', cost_mode: 'gateway' });
    expect(reply.content).toContain('Metered and done.');
    expect(readFileSync(join(ws, 'm.txt'), 'utf8')).toBe('metered\n');
    // Codex spoke the Responses API to this gateway only: the upstream saw Anthropic messages with the gateway's key.
    const mine = upstream.requests.slice(seen);
    expect(mine.filter(codexCall)).toHaveLength(0);
    const calls = mine.filter(codexViaGateway);
    expect(calls.length).toBeGreaterThanOrEqual(2);
    expect(calls.every((r) => r.apiKey === UPSTREAM_KEY)).toBe(true);
    const usage = (await c.ok('GET', `/hecate/v1/usage/events?agent_chat_session_id=${id}`)) as unknown as Json[];
    expect(usage.length).toBeGreaterThanOrEqual(2);
    expect(usage.every((u) => u.endpoint === '/v1/responses' && u.model === MODEL && u.status === 'ok')).toBe(true);
    const view = ((await c.ok('GET', base(id))).messages as Json[]).find((m) => m.id === reply.id)!;
    expect(view.cost_micros_usd).toBeGreaterThan(0);
    await deleteAndGone(id, CODEX_PROCESS);
  });

  it('Codex: denied through the API the command never runs (abort); cancel while a request waits ends the turn cancelled', async () => {
    const { id, ws } = await session('codex_offline', undefined);
    upstream.script({ match: (r) => codexCall(r) && !afterCommand(r), toolCalls: [escalated('echo no > no.txt')] });
    upstream.script({ match: (r) => codexCall(r) && afterCommand(r), content: 'Understood.' });
    const denied = await askingTurn(id, 'write no.txt');
    expect((await c.ok('POST', `${base(id)}/approvals/${denied.id}/resolve`, { decision: 'deny' })).selected_option).toBe('abort');
    const reply = await settled(id);
    // Codex ends its turn on an aborted command (stopReason cancelled): the turn is cancelled, the transcript kept.
    expect(reply.status).toBe('cancelled');
    expect((reply.activities as Json[]).find((a) => a.type === 'approval')).toMatchObject({ status: 'denied', detail: 'operator' });
    expect(existsSync(join(ws, 'no.txt'))).toBe(false);

    // An aborted command ends Codex's turn (no follow-up request): its unused rule goes.
    upstream.reset();
    upstream.script({ match: (r) => codexCall(r) && !afterCommand(r), toolCalls: [escalated('echo late > late.txt')] });
    const waiting = await askingTurn(id, 'write late.txt');
    expect((await c.call('POST', `${base(id)}/cancel`)).status).toBe(202);
    expect(await settled(id)).toMatchObject({ status: 'cancelled' });
    expect(await c.ok('GET', `${base(id)}/approvals/${waiting.id}`)).toMatchObject({ status: 'cancelled', path: 'request_cancelled' });
    expect(existsSync(join(ws, 'late.txt'))).toBe(false);
    await deleteAndGone(id, CODEX_PROCESS);
  });

  it('an unanswered request times out (answered cancelled) for both adapters: the command never runs', async () => {
    const claude = await session();
    upstream.script({
      match: (r) => main(r) && !lastIsToolResult(r),
      toolCalls: [{ name: 'Bash', arguments: { command: 'echo t > t.txt', description: 'Write t.txt' } }],
    });
    upstream.script({ match: (r) => main(r) && lastIsToolResult(r), content: 'No answer, no command.' });
    const a = await askingTurn(claude.id, 'write t.txt');
    const afterClaude = await settled(claude.id);
    expect(await c.ok('GET', `${base(claude.id)}/approvals/${a.id}`)).toMatchObject({ status: 'timed_out', path: 'timeout' });
    // Claude Code hears the refusal as the tool's result and answers; Codex ends its turn (stopReason cancelled).
    expect(afterClaude).toMatchObject({ status: 'completed', content: 'No answer, no command.' });
    expect(existsSync(join(claude.ws, 't.txt'))).toBe(false);
    await deleteAndGone(claude.id, CLAUDE_PROCESS);

    upstream.reset();
    const codex = await session('codex_offline', undefined);
    upstream.script({ match: (r) => codexCall(r) && !afterCommand(r), toolCalls: [escalated('echo t > t.txt')] });
    upstream.script({ match: (r) => codexCall(r) && afterCommand(r), content: 'No answer, no command.' });
    const b = await askingTurn(codex.id, 'write t.txt');
    const afterCodex = await settled(codex.id);
    expect(await c.ok('GET', `${base(codex.id)}/approvals/${b.id}`)).toMatchObject({ status: 'timed_out', path: 'timeout' });
    expect(afterCodex.status).toBe('cancelled');
    expect(existsSync(join(codex.ws, 't.txt'))).toBe(false);
    await deleteAndGone(codex.id, CODEX_PROCESS);
  });

  it('deny mode (a second server): both adapters are refused without anyone asked (path default_mode)', async () => {
    const prompt = c;
    c = new Client((await procs.start('all', serverEnv('deny'))).url);
    try {
      upstream.reset();
      const claude = await session();
      upstream.script({
        match: (r) => main(r) && !lastIsToolResult(r),
        toolCalls: [{ name: 'Bash', arguments: { command: 'echo d > d.txt', description: 'Write d.txt' } }],
      });
      upstream.script({ match: (r) => main(r) && lastIsToolResult(r), content: 'Refused, as configured.' });
      const r1 = lastAssistant(await c.ok('POST', `${base(claude.id)}/messages`, { content: 'write d.txt' }));
      expect(r1).toMatchObject({ status: 'completed', content: 'Refused, as configured.' });
      expect(existsSync(join(claude.ws, 'd.txt'))).toBe(false);
      expect(await c.ok('GET', `${base(claude.id)}/approvals`)).toEqual([
        expect.objectContaining({ status: 'denied', path: 'default_mode', selected_option: 'reject', tool_kind: 'shell_exec' }),
      ]);
      await deleteAndGone(claude.id, CLAUDE_PROCESS);

      upstream.reset();
      const codex = await session('codex_offline', undefined);
      upstream.script({ match: (r) => codexCall(r) && !afterCommand(r), toolCalls: [escalated('echo d > d.txt')] });
      const r2 = lastAssistant(await c.ok('POST', `${base(codex.id)}/messages`, { content: 'write d.txt' }));
      expect(r2.status).toBe('cancelled');
      expect(existsSync(join(codex.ws, 'd.txt'))).toBe(false);
      expect(await c.ok('GET', `${base(codex.id)}/approvals`)).toEqual([
        expect.objectContaining({ status: 'denied', path: 'default_mode', selected_option: 'abort', tool_kind: 'shell_exec' }),
      ]);
      await deleteAndGone(codex.id, CODEX_PROCESS);
    } finally {
      c = prompt;
    }
  });
});
