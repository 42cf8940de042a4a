/** What responses show instead of an MCP server's env or header value (seed 003 `mcp_servers`). */
export const REDACTED = '[redacted]';

const redactValues = (value: unknown): unknown =>
  value && typeof value === 'object' && !Array.isArray(value) ? Object.fromEntries(Object.keys(value).map((k) => [k, REDACTED])) : value;

/**
 * `mcp_servers` as API responses show it: every `env` and `headers` value replaced by `[redacted]` (a literal
 * secret and a `$VAR` reference alike), keys kept so an operator can see what is set. Pure; the tasks module owns
 * it because task responses need it and tasks must not import the mcp module (which imports tasks); `@modules/mcp`
 * re-exports it.
 */
export function redactMcpServers(list: unknown): unknown[] {
  if (!Array.isArray(list)) return [];
  return list.map((entry: unknown) => {
    if (!entry || typeof entry !== 'object' || Array.isArray(entry)) return entry;
    const out: Record<string, unknown> = { ...(entry as Record<string, unknown>) };
    if ('env' in out) out.env = redactValues(out.env);
    if ('headers' in out) out.headers = redactValues(out.headers);
    return out;
  });
}
