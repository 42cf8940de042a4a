import { chmodSync, existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { adapterEnv, FAULT_AGENT_PROCESS } from '../../support/acp-agents';
import { waitFor } from '../../support/infra';
import { processesMatching } from '../../support/mcp-servers';
import { Client, embeddedTasksEnv, Json, Processes, scaledEnv } from '../tasks/tasks-harness';

/**
 * `/hecate/v1/agent-adapters` (docs/api.md §4): the catalog, health and probe run on a worker, against the real Codex and
 * Claude Code ACP adapters installed from npm and the ACP fault agent (operator-defined adapters).
 */
describe('agent adapters (scaled: api + worker processes)', () => {
  const procs = new Processes();
  let c: Client;
  let env: Record<string, string>;

  beforeAll(async () => {
    ({ env } = await scaledEnv(adapterEnv()));
    const [api] = await Promise.all([procs.start('api', env), procs.start('worker', env)]);
    c = new Client(api.url);
  });
  afterAll(() => procs.stopAll());

  const row = (rows: Json[], id: string): Json => rows.find((r) => r.id === id)!;

  it('lists the built-in and operator-defined adapters with availability, version, range and auth hints', async () => {
    const r = await c.call('GET', '/hecate/v1/agent-adapters');
    expect(r.status).toBe(200);
    expect(r.body.object).toBe('agent_adapters');
    const rows = r.body.data as Json[];
    expect(rows.map((x) => x.id)).toEqual([
      'codex',
      'claude_code',
      'cursor_agent',
      'fault',
      'fault_noload',
      'fault_resume',
      'fault_auth',
      'fault_old',
      'fault_banner',
      'ghost',
    ]);
    // Installed from npm in this checkout: found as managed packages, the platform binary run directly.
    expect(row(rows, 'codex')).toMatchObject({
      name: 'Codex',
      kind: 'acp',
      command: 'codex-acp',
      managed: true,
      managed_package: '@zed-industries/codex-acp',
      available: true,
      status: 'available',
      path: expect.stringMatching(/codex-acp-linux-x64\/bin\/codex-acp$/),
      cost_mode: 'external',
      version: expect.stringMatching(/^0\.\d+\.\d+$/),
      version_outside_range: false,
      auth_status: 'unauthenticated',
      auth_error: expect.stringContaining('OPENAI_API_KEY'),
    });
    expect(row(rows, 'claude_code')).toMatchObject({
      available: true,
      version: '0.101.0',
      managed_package: '@agentclientprotocol/claude-agent-acp',
      version_outside_range: false,
      // It may be logged in through a keychain this cannot see: unknown, with the hint.
      auth_status: 'unknown',
      auth_error: expect.stringContaining('claude login'),
    });
    expect(row(rows, 'cursor_agent')).toMatchObject({
      command: 'cursor-agent',
      args: ['acp'],
      available: false,
      status: 'missing',
      error: expect.stringContaining('executable file not found in $PATH'),
      auth_status: 'unauthenticated',
      auth_error: expect.stringContaining('CURSOR_API_KEY'),
    });
    expect(row(rows, 'cursor_agent').version).toBeUndefined();
    expect(row(rows, 'fault')).toMatchObject({ available: true, version: '1.4.2', supported_range: '>=1.0.0 <2.0.0', version_outside_range: false });
    expect(row(rows, 'fault_old')).toMatchObject({ version: '1.4.2', supported_range: '>=2.0.0', version_outside_range: true });
    expect(row(rows, 'fault_auth')).toMatchObject({ auth_status: 'unauthenticated' });
    expect(row(rows, 'ghost')).toMatchObject({ available: false, status: 'missing' });
  });

  it('probes: ready, auth_required at session/new (codex without credentials, an agent that says so), not_installed, error', async () => {
    const ready = await c.call('POST', '/hecate/v1/agent-adapters/fault/probe');
    expect(ready.status).toBe(200);
    expect(ready.body).toMatchObject({
      object: 'agent_adapter_probe',
      data: { adapter: { id: 'fault', available: true }, health: { adapter_id: 'fault', status: 'ready', stage: 'ready', duration_ms: expect.any(Number) } },
    });

    const codex = await c.call('GET', '/hecate/v1/agent-adapters/codex/health');
    expect(codex.status).toBe(200);
    expect(codex.body.object).toBe('agent_adapter_health');
    expect(codex.body.data).toMatchObject({ adapter_id: 'codex', status: 'auth_required', stage: 'new_session', error: expect.stringMatching(/auth/i) });
    expect(codex.body.data.hint).toMatch(/authentication/);

    const claude = await c.call('GET', '/hecate/v1/agent-adapters/claude_code/health');
    expect(claude.body.data).toMatchObject({ adapter_id: 'claude_code', status: 'ready', stage: 'ready' });

    const auth = await c.call('GET', '/hecate/v1/agent-adapters/fault_auth/health');
    expect(auth.body.data).toMatchObject({ status: 'auth_required', stage: 'new_session' });

    for (const id of ['cursor_agent', 'ghost']) {
      const missing = await c.call('GET', `/hecate/v1/agent-adapters/${id}/health`);
      expect(missing.status).toBe(200);
      expect(missing.body.data).toMatchObject({ adapter_id: id, status: 'not_installed', stage: 'lookup', error: expect.stringContaining('not found') });
    }

    // Something that is not ACP on stdout is an error at initialize, with the offending text.
    const banner = await c.call('GET', '/hecate/v1/agent-adapters/fault_banner/health');
    expect(banner.body.data).toMatchObject({ status: 'error', stage: 'initialize', error: expect.stringContaining('not ACP') });
    expect(banner.body.data.error).toContain('fault agent starting');

    // No probe leaves a process behind.
    expect(processesMatching(FAULT_AGENT_PROCESS)).toBe(0);
    expect(processesMatching('codex-acp')).toBe(0);
    expect(processesMatching('claude-agent-acp')).toBe(0);
  });

  it('answers 404 for an adapter that is not registered', async () => {
    for (const [method, path] of [
      ['GET', '/hecate/v1/agent-adapters/nope/health'],
      ['POST', '/hecate/v1/agent-adapters/nope/probe'],
      ['POST', '/hecate/v1/agent-adapters/nope/refresh-launcher'],
    ] as const) {
      const r = await c.call(method, path);
      expect(r.status).toBe(404);
      expect(r.body.error.type).toBe('not_found');
    }
  });

  it('refresh-launcher recreates the managed launcher (200), refuses an unmanaged adapter (409)', async () => {
    const r = await c.call('POST', '/hecate/v1/agent-adapters/claude_code/refresh-launcher');
    expect(r.status).toBe(200);
    expect(r.body.object).toBe('agent_adapters');
    const launcher = join(env.GATEWAY_AGENT_ADAPTERS_DIR, 'claude-agent-acp');
    expect(r.body.data).toEqual([expect.objectContaining({ id: 'claude_code', managed: true, available: true, path: launcher, version: '0.101.0' })]);
    expect(existsSync(launcher)).toBe(true);
    expect(readFileSync(launcher, 'utf8')).toMatch(/^#!\/bin\/sh\n[\s\S]*exec .*claude-agent-acp\/dist\/index\.js "\$@"\n$/);
    // The launcher is what runs now: a probe through it is ready.
    const probe = await c.call('POST', '/hecate/v1/agent-adapters/claude_code/probe');
    expect(probe.body.data.health).toMatchObject({ status: 'ready', path: launcher });

    const unmanaged = await c.call('POST', '/hecate/v1/agent-adapters/fault/refresh-launcher');
    expect(unmanaged.status).toBe(409);
    expect(unmanaged.body.error.type).toBe('conflict');
  });

  it('repairs by itself a launcher left pointing into a removed checkout: the probe starts Codex through it (issue 33)', async () => {
    // What another installation on the machine wrote, before its checkout was removed: exec of its own codex-acp.
    const gone = join(mkdtempSync(join(tmpdir(), 'hecate-removed-checkout-')), 'node_modules/@zed-industries/codex-acp-linux-x64/bin/codex-acp');
    const launcher = join(env.GATEWAY_AGENT_ADAPTERS_DIR, 'codex-acp');
    writeFileSync(launcher, `#!/bin/sh\n# Hecate-managed launcher for Codex (@zed-industries/codex-acp); recreated by …\nexec '${gone}' "$@"\n`);
    chmodSync(launcher, 0o755);

    const probe = await c.call('POST', '/hecate/v1/agent-adapters/codex/probe');
    expect(probe.status).toBe(200);
    // Started and initialized (it then asks for credentials, as it does without them): no exit 127 at initialize.
    expect(probe.body.data.health).toMatchObject({ status: 'auth_required', stage: 'new_session', path: launcher });
    expect(probe.body.data.adapter).toMatchObject({ id: 'codex', available: true, status: 'available', path: launcher });
    const script = readFileSync(launcher, 'utf8');
    expect(script).not.toContain(gone);
    expect(script).toMatch(/\nexec \S*\/node_modules\/@zed-industries\/codex-acp-linux-x64\/bin\/codex-acp "\$@"\n$/);
    expect(existsSync(script.match(/\nexec (\S+) /)![1])).toBe(true);
  });
});

describe('agent adapters (embedded)', () => {
  const procs = new Processes();
  afterAll(() => procs.stopAll());

  it('serves the catalog and a probe from the in-process worker; deny mode rejects permission requests; retention prunes them; idle and SIGTERM end the adapter', async () => {
    const all = await procs.start(
      'all',
      embeddedTasksEnv(
        adapterEnv({
          GATEWAY_AGENT_ADAPTER_APPROVAL_MODE: 'deny',
          GATEWAY_RETENTION_AGENT_CHAT_APPROVALS_MAX_COUNT: '0',
          GATEWAY_AGENT_ADAPTER_IDLE_TIMEOUT: '2s',
        }),
      ),
    );
    const c = new Client(all.url);
    const list = await c.call('GET', '/hecate/v1/agent-adapters');
    expect(list.status).toBe(200);
    expect((list.body.data as Json[]).find((r) => r.id === 'fault')).toMatchObject({ available: true, version: '1.4.2' });
    const probe = await c.call('POST', '/hecate/v1/agent-adapters/fault_noload/probe');
    expect(probe.body.data.health).toMatchObject({ status: 'ready', stage: 'ready' });

    expect((await c.ok('GET', '/hecate/v1/system/stats')).agent_adapter_approval_mode).toBe('deny');
    const ws = mkdtempSync(join(tmpdir(), 'hecate-deny-ws-'));
    const s = await c.ok('POST', '/hecate/v1/agent-chat/sessions', { runtime_kind: 'external_agent', adapter_id: 'fault', workspace: ws });
    const after = await c.ok('POST', `/hecate/v1/agent-chat/sessions/${s.id}/messages`, { content: 'write secret.txt x' });
    const reply = (after.messages as Json[]).at(-1)!;
    expect(reply).toMatchObject({ status: 'completed', content: 'not allowed to write secret.txt' });
    expect((reply.activities as Json[]).find((a) => a.type === 'approval')).toMatchObject({ status: 'denied', detail: 'default_mode' });
    expect(existsSync(join(ws, 'secret.txt'))).toBe(false);
    const rows = (await c.ok('GET', `/hecate/v1/agent-chat/sessions/${s.id}/approvals`)) as unknown as Json[];
    expect(rows).toEqual([
      expect.objectContaining({ status: 'denied', decision: 'deny', path: 'default_mode', scope: 'once', selected_option: 'reject', tool_kind: 'file_write' }),
    ]);
    // Resolved requests are pruned by retention (max count 0 here); nothing is pending, so nothing else is touched.
    const sweep = await c.ok('POST', '/hecate/v1/system/retention/run');
    expect(sweep.results.agent_chat_approvals).toMatchObject({ approvals: 1, max_count: 0 });
    expect(await c.ok('GET', `/hecate/v1/agent-chat/sessions/${s.id}/approvals`)).toEqual([]);

    // Idle (2 s here): the adapter process ends; the next turn starts it again and restores the native session.
    await waitFor(() => processesMatching(FAULT_AGENT_PROCESS) === 0, { timeoutMs: 15_000, what: 'the idle adapter to end' });
    const back = ((await c.ok('POST', `/hecate/v1/agent-chat/sessions/${s.id}/messages`, { content: 'history' })).messages as Json[]).at(-1)!;
    expect(back).toMatchObject({ status: 'completed', content: 'history: write secret.txt x' });
    expect((back.activities as Json[]).map((a) => a.type)).toContain('native_session_restored');
    expect(processesMatching(FAULT_AGENT_PROCESS)).toBe(1);
    // SIGTERM of the server: its adapter process group ends with it.
    await all.stop('SIGTERM');
    await waitFor(() => processesMatching(FAULT_AGENT_PROCESS) === 0, { timeoutMs: 15_000, what: 'no adapter left after SIGTERM' });
  });
});
