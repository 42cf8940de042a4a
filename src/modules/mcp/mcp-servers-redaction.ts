/** What responses show instead of an MCP server's env or header value (docs/api.md §4 `mcp_servers`). */
export const REDACTED = '[redacted]';

const redactValues = (value: unknown): unknown =>
  value && typeof value === 'object' && !Array.isArray(value) ? Object.fromEntries(Object.keys(value).map((k) => [k, REDACTED])) : value;

/**
 * `mcp_servers` as API responses show it: every `env` and `headers` value replaced by `[redacted]` (a literal
 * secret and a `$VAR` reference alike), keys kept so an operator can see what is set. Pure; task and saved-agent
 * responses use it too.
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

const REFERENCE = /^\$(?:([A-Za-z_][A-Za-z0-9_]*)|\{([A-Za-z_][A-Za-z0-9_]*)\})$/;

/** The variable an MCP `env`/`headers` value refers to (`$NAME` or `${NAME}`), or null for a literal. */
export function envReference(value: string): string | null {
  const m = REFERENCE.exec(value);
  return m ? (m[1] ?? m[2]) : null;
}

/** How a literal env/header value is stored: this marker, then core/crypto's sealed form. */
export const SEALED_MCP_VALUE = 'hecate-sealed:';

const mapValues = (list: unknown, fn: (value: string, at: string) => string): unknown[] => {
  if (!Array.isArray(list)) return [];
  return list.map((entry: unknown) => {
    if (!entry || typeof entry !== 'object' || Array.isArray(entry)) return entry;
    const out: Record<string, unknown> = { ...(entry as Record<string, unknown>) };
    for (const field of ['env', 'headers'] as const) {
      const map = out[field];
      if (!map || typeof map !== 'object' || Array.isArray(map)) continue;
      out[field] = Object.fromEntries(
        Object.entries(map as Record<string, unknown>).map(([k, v]) => [
          k,
          typeof v === 'string' ? fn(v, `MCP server "${String(out.name)}": ${field}.${k}`) : v,
        ]),
      );
    }
    return out;
  });
};

/** Whether any env/header value of the entries is a literal (a secret to store sealed), not a `$VAR`. */
export const hasLiteralMcpValues = (list: unknown): boolean => {
  let found = false;
  mapValues(list, (v) => ((found ||= envReference(v) === null), v));
  return found;
};

/** `mcp_servers` as stored: every literal env/header value sealed (`$VAR` references are names, kept as they are). */
export const sealMcpServers = (list: unknown, seal: (plain: string) => string): unknown[] =>
  mapValues(list, (v) => (envReference(v) === null ? SEALED_MCP_VALUE + seal(v) : v));

/** `mcp_servers` as a worker uses them: sealed values opened; one that cannot be opened fails naming the field. */
export const unsealMcpServers = (list: unknown, open: (sealed: string) => string | undefined): unknown[] =>
  mapValues(list, (v, at) => {
    if (!v.startsWith(SEALED_MCP_VALUE)) return v;
    const plain = open(v.slice(SEALED_MCP_VALUE.length));
    if (plain === undefined) throw new Error(`${at} cannot be decrypted with this worker's GATEWAY_SECRET_KEY`);
    return plain;
  });

/**
 * `[redacted]` env/header values (a GET's answer edited and sent back) replaced by the previously stored value of the same
 * server and key; one with no stored value is a problem.
 */
export function keepRedactedMcpValues(
  list: Record<string, unknown>[],
  previous: Record<string, unknown>[],
): { list: Record<string, unknown>[]; problems: string[] } {
  const problems: string[] = [];
  const before = new Map(previous.map((e) => [String(e.name), e]));
  const out = list.map((entry, i) => {
    const copy: Record<string, unknown> = { ...entry };
    for (const field of ['env', 'headers'] as const) {
      const map = entry[field];
      if (!map || typeof map !== 'object' || Array.isArray(map)) continue;
      const old = before.get(String(entry.name))?.[field] as Record<string, unknown> | undefined;
      copy[field] = Object.fromEntries(
        Object.entries(map as Record<string, unknown>).map(([k, v]) => {
          if (v !== REDACTED) return [k, v];
          if (typeof old?.[k] !== 'string') problems.push(`mcp_servers[${i}].${field}.${k} is ${REDACTED} but no stored value exists for it`);
          return [k, old?.[k] ?? v];
        }),
      );
    }
    return copy;
  });
  return { list: out, problems };
}
