import { randomBytes } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MCP_SANDBOX_READ_PATHS } from './mcp-servers';

/** The ACP fault agent (test/support/acp/fault-agent.mjs): prompts say what it does (echo, write, crash, garbage, huge, hang…). */
export const FAULT_AGENT = join(__dirname, 'acp/fault-agent.mjs');

/**
 * An argument every fault adapter of this suite carries (Jest loads this module once per test file): suites that run at
 * once in two lanes count only their own adapter processes, orphans included.
 */
const SUITE_TAG = `--suite-${randomBytes(4).toString('hex')}`;

/** pgrep -f pattern of this suite's fault-agent processes themselves (not the bwrap processes whose argv names them too). */
export const FAULT_AGENT_PROCESS = `^[^ ]*node [^ ]*fault-agent[.]mjs .*${SUITE_TAG}`;

/** Operator-defined adapters over the fault agent, as GATEWAY_AGENT_ADAPTERS holds them. */
export const FAULT_ADAPTERS = [
  { id: 'fault', name: 'Fault Agent', command: process.execPath, args: [FAULT_AGENT, SUITE_TAG], supported_range: '>=1.0.0 <2.0.0' },
  { id: 'fault_noload', name: 'Fault Agent (no load)', command: process.execPath, args: [FAULT_AGENT, '--no-load', SUITE_TAG] },
  { id: 'fault_resume', name: 'Fault Agent (resume)', command: process.execPath, args: [FAULT_AGENT, '--no-load', '--resume', SUITE_TAG] },
  { id: 'fault_auth', name: 'Fault Agent (auth)', command: process.execPath, args: [FAULT_AGENT, '--auth-required', SUITE_TAG], auth_env: ['FAULT_AGENT_KEY'] },
  { id: 'fault_old', name: 'Fault Agent (old)', command: process.execPath, args: [FAULT_AGENT, SUITE_TAG], supported_range: '>=2.0.0' },
  { id: 'fault_banner', name: 'Fault Agent (banner)', command: process.execPath, args: [FAULT_AGENT, '--stdout-banner', SUITE_TAG] },
  { id: 'ghost', name: 'Ghost', command: 'no-such-acp-agent-binary' },
];

/**
 * What a worker needs to run adapters in tests: the checkout and its node_modules readable in the sandbox (the fault
 * agent, the real adapters' packages), a private adapters dir (launchers, homes), no vendor credentials.
 */
export function adapterEnv(extra: Record<string, string> = {}): Record<string, string> {
  return {
    GATEWAY_TASK_SANDBOX_READ_PATHS: MCP_SANDBOX_READ_PATHS,
    GATEWAY_AGENT_ADAPTERS: JSON.stringify(FAULT_ADAPTERS),
    GATEWAY_AGENT_ADAPTERS_DIR: mkdtempSync(join(tmpdir(), 'hecate-adapters-')),
    OPENAI_API_KEY: '',
    CODEX_API_KEY: '',
    ANTHROPIC_API_KEY: '',
    CLAUDE_CODE_OAUTH_TOKEN: '',
    ...extra,
  };
}
