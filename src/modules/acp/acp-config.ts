import type { RawEnv } from '@core/config/config.loader';

/** How `npm run acp` reaches Hecate: read once from the environment the editor launched it with. */
export interface AcpConfig {
  /** The Hecate server, without a trailing slash (`HECATE_BASE_URL`). */
  baseUrl: string;
  /** Bearer credential: an API key with the `operator` scope, or the operator token (`HECATE_API_KEY`). */
  apiKey: string | undefined;
  /** Model and provider of the editor's tasks (`HECATE_MODEL`, `HECATE_PROVIDER`); empty: the gateway's default. */
  model: string | undefined;
  provider: string | undefined;
  /** The saved agent of the editor's tasks (`HECATE_AGENT_ID`; a session's `_meta.agent_id` picks another). */
  agentId: string | undefined;
  logLevel: string;
}

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

export class AcpConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`hecate acp: invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
  }
}

/** Validates the agent's variables, naming every bad one (the server's own variables are none of its business). */
export function acpConfig(env: RawEnv): AcpConfig {
  const problems: string[] = [];
  const value = (name: string): string | undefined => env[name]?.trim() || undefined;
  const base = value('HECATE_BASE_URL');
  let baseUrl = '';
  if (!base) {
    problems.push('HECATE_BASE_URL is required: the URL of the Hecate server (e.g. http://127.0.0.1:8765)');
  } else {
    let url: URL | undefined;
    try {
      url = new URL(base);
    } catch {
      problems.push(`HECATE_BASE_URL is not a URL: ${JSON.stringify(base.slice(0, 200))}`);
    }
    if (url && url.protocol !== 'http:' && url.protocol !== 'https:') problems.push('HECATE_BASE_URL must be an http or https URL');
    else if (url && (url.username || url.password)) problems.push('HECATE_BASE_URL must not embed credentials (set HECATE_API_KEY)');
    else if (url) baseUrl = url.href.replace(/\/+$/, '');
  }
  const logLevel = value('HECATE_ACP_LOG_LEVEL') ?? 'info';
  if (!LOG_LEVELS.includes(logLevel)) problems.push(`HECATE_ACP_LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')}`);
  if (problems.length > 0) throw new AcpConfigError(problems);
  return {
    baseUrl,
    apiKey: value('HECATE_API_KEY'),
    model: value('HECATE_MODEL'),
    provider: value('HECATE_PROVIDER'),
    agentId: value('HECATE_AGENT_ID'),
    logLevel,
  };
}
