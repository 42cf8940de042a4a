import type { McpConfig } from '@core/config/groups/mcp.env';
import { envReference, isServerVariable, type McpServerSpec } from './mcp-server-spec';

/**
 * The operator's walls around MCP servers. A stdio server is a command: API keys may start only one an
 * allowlist entry matches (command exactly, arguments by the entry's anchored pattern); the operator may start any,
 * still sandboxed. Network is granted only by a matching entry that says so. `$VAR` may name only allowlisted
 * variables (`HECATE_MCP_SECRET_*` and GATEWAY_MCP_SECRET_ENV_ALLOW), never a gateway setting.
 */
export function stdioAllowEntry(spec: Pick<McpServerSpec, 'command' | 'args'>, config: McpConfig) {
  if (spec.command === undefined) return undefined;
  const joined = (spec.args ?? []).join(' ');
  return config.stdioAllow.find((e) => e.command === spec.command && e.args.test(joined));
}

/** Whether a stdio server gets network: only when an allowlist entry matching it grants it. */
export const stdioNetwork = (spec: McpServerSpec, config: McpConfig): boolean => stdioAllowEntry(spec, config)?.network === true;

/** Whether `$name` may be referenced by an MCP server's env or headers. */
export function secretReferenceAllowed(name: string, config: McpConfig): boolean {
  const allowed = config.secretEnv.names.includes(name) || config.secretEnv.prefixes.some((p) => name.startsWith(p));
  // The gateway's own settings stay closed whatever the allowlist says; the secret prefix is the one way in.
  return allowed && !isServerVariable(name);
}

export interface SecretRefusal {
  server: string;
  field: 'env' | 'headers';
  key: string;
  variable: string;
}

/** Every `$VAR` of the entries that is not allowlisted (names only, never a value). */
export function secretRefusals(list: unknown, config: McpConfig): SecretRefusal[] {
  if (!Array.isArray(list)) return [];
  const out: SecretRefusal[] = [];
  for (const entry of list as Array<Record<string, unknown>>) {
    if (!entry || typeof entry !== 'object') continue;
    for (const field of ['env', 'headers'] as const) {
      const map = entry[field];
      if (!map || typeof map !== 'object' || Array.isArray(map)) continue;
      for (const [key, value] of Object.entries(map as Record<string, unknown>)) {
        const ref = typeof value === 'string' ? envReference(value) : null;
        if (ref !== null && !secretReferenceAllowed(ref, config)) out.push({ server: String(entry.name ?? ''), field, key, variable: ref });
      }
    }
  }
  return out;
}

/** Stdio entries an API key may not start (not on GATEWAY_MCP_STDIO_ALLOW). */
export function unlistedStdioServers(list: unknown, config: McpConfig): string[] {
  if (!Array.isArray(list)) return [];
  return (list as Array<Record<string, unknown>>)
    .filter((e) => e && typeof e === 'object' && typeof e.command === 'string')
    .filter((e) => !stdioAllowEntry({ command: e.command as string, args: Array.isArray(e.args) ? (e.args as string[]) : undefined }, config))
    .map((e) => String(e.name ?? ''));
}
