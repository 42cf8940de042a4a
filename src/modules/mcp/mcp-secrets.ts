import { envReference, isServerVariable } from './mcp-server-spec';

export type EnvSource = Record<string, string | undefined>;

/** A `$VAR` an MCP server refers to cannot be resolved on this worker. Names the variable, never a value. */
export class McpSecretError extends Error {}

/**
 * Resolves an `env` or `headers` map at spawn: `$NAME` / `${NAME}` from the worker's environment, literals as they
 * are. A missing variable (or one naming a gateway setting) fails with the variable's name. The values returned are
 * secrets: they go to the child process or the HTTP request and nowhere else.
 */
export function resolveSecretMap(
  server: string,
  field: 'env' | 'headers',
  map: Record<string, string> | undefined,
  source: EnvSource,
  allowed: (name: string) => boolean = () => true,
): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [key, value] of Object.entries(map ?? {})) {
    const ref = envReference(value);
    if (ref === null) {
      out[key] = value;
      continue;
    }
    if (isServerVariable(ref))
      throw new McpSecretError(`MCP server "${server}": ${field}.${key} refers to $${ref}, a gateway setting that MCP servers may not read`);
    // A task stored before the allowlist changed is checked again where the value would be read.
    if (!allowed(ref)) throw new McpSecretError(`MCP server "${server}": ${field}.${key} refers to $${ref}, which MCP servers may not read`);
    const resolved = source[ref];
    if (resolved === undefined || resolved === '') {
      throw new McpSecretError(`MCP server "${server}": ${field}.${key} refers to $${ref}, which is not set in the worker's environment`);
    }
    out[key] = resolved;
  }
  return out;
}

/** Replaces every secret value (4+ characters) in `text` by `[redacted]`: diagnostics quote a server's stderr. */
export function scrubSecrets(text: string, secrets: string[]): string {
  let out = text;
  for (const s of secrets) if (s.length >= 4) out = out.split(s).join('[redacted]');
  return out;
}
