import { createHash } from 'node:crypto';
import { MCP_SECRET_PREFIX } from '@core/config/groups/mcp.env';
import { envReference } from './mcp-servers-redaction';
/** Per-server gate on the agent's use of an MCP server's tools (docs/api.md §4 `mcp_servers[].approval_policy`). */
export const MCP_APPROVAL_POLICIES = ['auto', 'require_approval', 'block'] as const;
export type McpApprovalPolicy = (typeof MCP_APPROVAL_POLICIES)[number];

/**
 * One entry of a task's `mcp_servers` (docs/api.md §4): a stdio server (`command`, `args`, `env`) or a Streamable HTTP
 * server (`url`, `headers`). `env` and `headers` values are `$VAR` / `${VAR}` references resolved from the worker's
 * environment at spawn, or literals; either way responses show `[redacted]` and logs, events and job payloads never
 * carry them.
 */
export interface McpServerSpec {
  name: string;
  command?: string;
  args?: string[];
  env?: Record<string, string>;
  url?: string;
  headers?: Record<string, string>;
  approval_policy?: McpApprovalPolicy;
}

export const MCP_SERVER_NAME = /^[a-zA-Z0-9_-]{1,64}$/;
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
const FIELDS = new Set(['name', 'command', 'args', 'env', 'url', 'headers', 'approval_policy']);
const MAX_ARGS = 256;
const MAX_STRING = 8192;
const MAX_MAP_ENTRIES = 64;

/**
 * Server settings a `$VAR` may not name: the gateway's own configuration and credentials (a task's MCP server must
 * not be handed the operator token, the database URL or a provider key).
 */
const SERVER_VARIABLE = /^(GATEWAY_|PROVIDER_|HECATE_|OTEL_|DATABASE_URL|REDIS_URL|WORKER_)|_FILE$/;

/** The variable a value refers to (`$NAME` or `${NAME}`), or null for a literal (mcp-servers-redaction, where literals are sealed). */
export { envReference };

/** A gateway setting (HECATE_MCP_SECRET_* aside: the prefix the operator keeps MCP secrets under). */
export const isServerVariable = (name: string): boolean => !name.startsWith(MCP_SECRET_PREFIX) && SERVER_VARIABLE.test(name);

const isRecord = (v: unknown): v is Record<string, unknown> => Boolean(v) && typeof v === 'object' && !Array.isArray(v);

function mapProblems(at: string, value: unknown, keyPattern: RegExp, what: string): string[] {
  if (!isRecord(value)) return [`${at} must be an object of ${what} names to strings`];
  const problems: string[] = [];
  const entries = Object.entries(value);
  if (entries.length > MAX_MAP_ENTRIES) problems.push(`${at} has more than ${MAX_MAP_ENTRIES} entries`);
  for (const [key, v] of entries) {
    if (!keyPattern.test(key)) problems.push(`${at} has an invalid ${what} name ${JSON.stringify(key.slice(0, 100))}`);
    // The value itself is never quoted back: it may be a secret.
    if (typeof v !== 'string') problems.push(`${at}.${key} must be a string`);
    else if (v.length > MAX_STRING) problems.push(`${at}.${key} is longer than ${MAX_STRING} characters`);
    else {
      const ref = envReference(v);
      if (ref && isServerVariable(ref)) problems.push(`${at}.${key} refers to $${ref}, a gateway setting that MCP servers may not read`);
    }
  }
  return problems;
}

/** Every problem with one server entry, each naming `<at>.<field>` (the probe validates one entry this way). */
export function mcpServerEntryProblems(entry: unknown, at: string): string[] {
  if (!isRecord(entry)) return [`${at} must be an object`];
  const problems = Object.keys(entry)
    .filter((k) => !FIELDS.has(k))
    .map((k) => `${at}.${k} is not a known field (name, command, args, env, url, headers, approval_policy)`);
  const { name, command, args, env, url, headers } = entry;
  if (name === undefined || name === '') problems.push(`${at}.name is required`);
  else if (typeof name !== 'string' || !MCP_SERVER_NAME.test(name)) problems.push(`${at}.name must match ^[a-zA-Z0-9_-]{1,64}$`);
  const stdio = command !== undefined || args !== undefined || env !== undefined;
  const http = url !== undefined || headers !== undefined;
  if (command !== undefined && url !== undefined) problems.push(`${at} must set exactly one of command (stdio) or url (Streamable HTTP), not both`);
  else if (command === undefined && url === undefined) {
    if (stdio) problems.push(`${at}.command is required for a stdio server`);
    else if (http) problems.push(`${at}.url is required for a Streamable HTTP server`);
    else problems.push(`${at} must set command (stdio server) or url (Streamable HTTP server)`);
  } else if (command !== undefined) {
    if (typeof command !== 'string' || command.trim() === '') problems.push(`${at}.command must be a non-empty string`);
    else if (command.length > MAX_STRING) problems.push(`${at}.command is longer than ${MAX_STRING} characters`);
    if (headers !== undefined) problems.push(`${at}.headers is only for a Streamable HTTP server (url)`);
  } else {
    if (typeof url !== 'string') problems.push(`${at}.url must be a string`);
    else {
      let parsed: URL | undefined;
      try {
        parsed = new URL(url);
      } catch {
        problems.push(`${at}.url is not a valid URL`);
      }
      if (parsed && parsed.protocol !== 'http:' && parsed.protocol !== 'https:') problems.push(`${at}.url must be an http or https URL`);
      if (parsed && (parsed.username || parsed.password)) problems.push(`${at}.url must not embed credentials (use headers)`);
    }
    if (args !== undefined) problems.push(`${at}.args is only for a stdio server (command)`);
    if (env !== undefined) problems.push(`${at}.env is only for a stdio server (command)`);
  }
  if (args !== undefined && command !== undefined) {
    if (!Array.isArray(args) || args.some((a) => typeof a !== 'string')) problems.push(`${at}.args must be an array of strings`);
    else if (args.length > MAX_ARGS) problems.push(`${at}.args has more than ${MAX_ARGS} entries`);
    else if (args.some((a: string) => a.length > MAX_STRING)) problems.push(`${at}.args has an argument longer than ${MAX_STRING} characters`);
  }
  if (env !== undefined && command !== undefined) problems.push(...mapProblems(`${at}.env`, env, ENV_NAME, 'variable'));
  if (headers !== undefined && url !== undefined) problems.push(...mapProblems(`${at}.headers`, headers, HEADER_NAME, 'header'));
  if (entry.approval_policy !== undefined && !(MCP_APPROVAL_POLICIES as readonly unknown[]).includes(entry.approval_policy)) {
    problems.push(`${at}.approval_policy must be one of ${MCP_APPROVAL_POLICIES.join(', ')}`);
  }
  return problems;
}

/**
 * Every problem with a task's `mcp_servers` (400 invalid_request), each naming the field: shape of each entry,
 * names (unique, ^[a-zA-Z0-9_-]{1,64}$), one transport per entry, and at most `maxServers` entries (0 = no cap,
 * GATEWAY_TASK_MAX_MCP_SERVERS_PER_TASK). Pure.
 */
export function mcpServerProblems(list: unknown, maxServers: number, field = 'mcp_servers'): string[] {
  if (list === undefined || list === null) return [];
  if (!Array.isArray(list)) return [`${field} must be an array`];
  const problems: string[] = [];
  if (maxServers > 0 && list.length > maxServers) {
    problems.push(`${field} has ${list.length} entries; at most ${maxServers} are allowed (GATEWAY_TASK_MAX_MCP_SERVERS_PER_TASK)`);
  }
  const seen = new Map<string, number>();
  list.forEach((entry: unknown, i) => {
    problems.push(...mcpServerEntryProblems(entry, `${field}[${i}]`));
    const name = isRecord(entry) && typeof entry.name === 'string' ? entry.name : undefined;
    if (name === undefined) return;
    const first = seen.get(name);
    if (first !== undefined) problems.push(`${field}[${i}].name "${name}" repeats ${field}[${first}].name; names must be unique`);
    else seen.set(name, i);
  });
  return problems;
}

/** Function names every provider protocol accepts (OpenAI: `^[a-zA-Z0-9_-]{1,64}$`; Anthropic allows 128). */
export const TOOL_NAME = /^[a-zA-Z0-9_-]{1,64}$/;

/** At most this many tools in one model request (OpenAI's limit): built-in plus MCP tools of a run. */
export const MAX_TOOLS_PER_REQUEST = 128;

/**
 * The tool alias the model sees: `mcp__<server>__<tool>`. An MCP tool name is free text (dots, slashes, spaces, any
 * length); when the alias is not a valid function name it is the sanitised alias cut to 55 characters plus `_` and
 * 8 hex of the original name's SHA-256, so it stays valid, stable and distinct (the pool maps it back to the real name).
 */
export const mcpToolAlias = (server: string, tool: string): string => {
  const plain = `mcp__${server}__${tool}`;
  if (TOOL_NAME.test(plain)) return plain;
  const hash = createHash('sha256').update(`${server}\u0000${tool}`).digest('hex').slice(0, 8);
  return `${plain.replace(/[^a-zA-Z0-9_-]/g, '_').slice(0, 55)}_${hash}`;
};
