import { readFileSync } from 'node:fs';
import { isAbsolute } from 'node:path';
import { Type } from 'class-transformer';
import { IsInt, IsOptional, IsString, Min } from 'class-validator';
import { csv, duration, IsDuration } from '../config-validators';

/** Walls around MCP servers: which stdio commands tenants may start, which `$VAR`s they may read, limits. */
export class McpEnv {
  /**
   * Stdio MCP servers API keys may start: a JSON array (or the absolute path of a file holding one) of
   * `{command, args?, network?}` — `command` exactly, `args` a regular expression the arguments joined by single
   * spaces must match whole (omitted: no arguments), `network` whether the server gets network. Empty: none.
   */
  @IsOptional() @IsString() GATEWAY_MCP_STDIO_ALLOW?: string;
  /** Variables `$VAR` in MCP `env`/`headers` may name besides `HECATE_MCP_SECRET_*` (comma-separated; `PREFIX_*` for a prefix). */
  @IsOptional() @IsString() GATEWAY_MCP_SECRET_ENV_ALLOW?: string;
  /** A cached MCP server unused this long is closed (0 = only the LRU cap and pings close it). */
  @IsOptional() @IsDuration() GATEWAY_MCP_IDLE_TIMEOUT?: string;
  /** One message (stdout line) from a stdio MCP server larger than this kills that server, never the worker. */
  @IsOptional() @Type(() => Number) @IsInt() @Min(65536) GATEWAY_MCP_MAX_MESSAGE_BYTES?: number;
}

/** One operator-allowlisted stdio MCP server command. */
export interface McpStdioAllowEntry {
  command: string;
  /** Anchored: the whole argument list, joined by single spaces. */
  args: RegExp;
  network: boolean;
}

export interface McpConfig {
  stdioAllow: McpStdioAllowEntry[];
  /** Names `$VAR` may reference (exact) and prefixes (HECATE_MCP_SECRET_ always). */
  secretEnv: { names: string[]; prefixes: string[] };
  idleTimeoutMs: number;
  maxMessageBytes: number;
}

export const MCP_SECRET_PREFIX = 'HECATE_MCP_SECRET_';

function stdioAllowSource(raw: string | undefined): string {
  const text = (raw ?? '').trim();
  if (!text) return '[]';
  return isAbsolute(text) ? readFileSync(text, 'utf8') : text;
}

/** Parses GATEWAY_MCP_STDIO_ALLOW; problems name the entry. */
export function parseStdioAllow(raw: string | undefined): { entries: McpStdioAllowEntry[]; problems: string[] } {
  let list: unknown;
  try {
    list = JSON.parse(stdioAllowSource(raw));
  } catch (err) {
    return { entries: [], problems: [`GATEWAY_MCP_STDIO_ALLOW: not a JSON array or a readable file holding one (${(err as Error).message})`] };
  }
  if (!Array.isArray(list)) return { entries: [], problems: ['GATEWAY_MCP_STDIO_ALLOW: must be a JSON array of {command, args?, network?}'] };
  const entries: McpStdioAllowEntry[] = [];
  const problems: string[] = [];
  list.forEach((e: unknown, i) => {
    const at = `GATEWAY_MCP_STDIO_ALLOW[${i}]`;
    const entry = (e ?? {}) as Record<string, unknown>;
    if (typeof entry.command !== 'string' || !entry.command.trim()) return void problems.push(`${at}.command must be a non-empty string`);
    if (entry.args !== undefined && typeof entry.args !== 'string') return void problems.push(`${at}.args must be a regular expression (string)`);
    if (entry.network !== undefined && typeof entry.network !== 'boolean') return void problems.push(`${at}.network must be true or false`);
    let args: RegExp;
    try {
      args = new RegExp(`^(?:${(entry.args as string | undefined) ?? ''})$`, 'su');
    } catch (err) {
      return void problems.push(`${at}.args is not a valid regular expression: ${(err as Error).message}`);
    }
    entries.push({ command: entry.command, args, network: entry.network === true });
  });
  return { entries, problems };
}

export function checkMcpEnv(env: McpEnv): string[] {
  return parseStdioAllow(env.GATEWAY_MCP_STDIO_ALLOW).problems;
}

export function mcpConfig(env: McpEnv): McpConfig {
  const allow = csv(env.GATEWAY_MCP_SECRET_ENV_ALLOW, []);
  return {
    stdioAllow: parseStdioAllow(env.GATEWAY_MCP_STDIO_ALLOW).entries,
    secretEnv: {
      names: allow.filter((n) => !n.endsWith('*')),
      prefixes: [MCP_SECRET_PREFIX, ...allow.filter((n) => n.endsWith('*')).map((n) => n.slice(0, -1))],
    },
    idleTimeoutMs: duration(env.GATEWAY_MCP_IDLE_TIMEOUT, 60_000),
    maxMessageBytes: env.GATEWAY_MCP_MAX_MESSAGE_BYTES ?? 10 * 1024 * 1024,
  };
}
