import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MCP_SANDBOX_READ_PATHS } from './mcp-servers';

/** The ACP fault agent (test/support/acp/fault-agent.mjs): prompts say what it does (echo, write, crash, garbage, huge, hang…). */
export const FAULT_AGENT = join(__dirname, 'acp/fault-agent.mjs');

/** pgrep -f pattern of fault-agent processes themselves (not the bwrap processes whose argv names them too). */
export const FAULT_AGENT_PROCESS = '^[^ ]*node [^ ]*fault-agent[.]mjs';

/** Operator-defined adapters over the fault agent, as GATEWAY_AGENT_ADAPTERS holds them. */
export const FAULT_ADAPTERS = [
  { id: 'fault', name: 'Fault Agent', command: process.execPath, args: [FAULT_AGENT], supported_range: '>=1.0.0 <2.0.0' },
  { id: 'fault_noload', name: 'Fault Agent (no load)', command: process.execPath, args: [FAULT_AGENT, '--no-load'] },
  { id: 'fault_auth', name: 'Fault Agent (auth)', command: process.execPath, args: [FAULT_AGENT, '--auth-required'], auth_env: ['FAULT_AGENT_KEY'] },
  { id: 'fault_old', name: 'Fault Agent (old)', command: process.execPath, args: [FAULT_AGENT], supported_range: '>=2.0.0' },
  { id: 'fault_banner', name: 'Fault Agent (banner)', command: process.execPath, args: [FAULT_AGENT, '--stdout-banner'] },
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
