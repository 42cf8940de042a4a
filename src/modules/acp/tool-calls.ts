import { isAbsolute, resolve } from 'node:path';
import type { Acp } from './acp-sdk';

/** How an editor shows each built-in tool of the agent loop (ACP `ToolKind`); MCP tools are `other`. */
const KINDS: Record<string, Acp.ToolKind> = {
  read_file: 'read',
  list_dir: 'search',
  glob: 'search',
  grep: 'search',
  file_write: 'edit',
  file_edit: 'edit',
  shell_exec: 'execute',
  git_exec: 'execute',
  git_status: 'read',
  git_diff: 'read',
  http_request: 'fetch',
};

const TITLE_MAX = 200;

export const toolKind = (name: string): Acp.ToolKind => KINDS[name] ?? 'other';

/** A tool call's arguments as the model wrote them (a JSON object), or `{}`. */
export function parseArguments(text: unknown): Record<string, unknown> {
  if (text && typeof text === 'object' && !Array.isArray(text)) return text as Record<string, unknown>;
  if (typeof text !== 'string' || !text) return {};
  try {
    const parsed: unknown = JSON.parse(text);
    return parsed && typeof parsed === 'object' && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

/** A one-line title for the editor's tool-call card ("Read src/a.ts", "Run `npm test`"). */
export function toolTitle(name: string, args: Record<string, unknown>): string {
  const s = (key: string): string => (typeof args[key] === 'string' ? (args[key] as string) : '');
  let title: string;
  switch (name) {
    case 'read_file':
      title = `Read ${s('path')}`;
      break;
    case 'list_dir':
      title = `List ${s('path') || '.'}`;
      break;
    case 'glob':
      title = `Find ${s('pattern')}`;
      break;
    case 'grep':
      title = `Search for ${s('pattern')}${s('path') ? ` in ${s('path')}` : ''}`;
      break;
    case 'file_write':
      title = `Write ${s('path')}`;
      break;
    case 'file_edit':
      title = `Edit ${s('path')}`;
      break;
    case 'shell_exec':
      title = `Run \`${s('command')}\``;
      break;
    case 'git_exec':
      title = `git ${s('command').replace(/^git\s+/, '')}`;
      break;
    case 'git_status':
      title = 'git status';
      break;
    case 'git_diff':
      title = `git diff${s('path') ? ` ${s('path')}` : ''}`;
      break;
    case 'http_request':
      title = `${(s('method') || 'GET').toUpperCase()} ${s('url')}`;
      break;
    default: {
      const mcp = /^mcp__(.+?)__(.+)$/.exec(name);
      title = mcp ? `${mcp[2]} (MCP ${mcp[1]})` : name;
    }
  }
  return title.length > TITLE_MAX ? `${title.slice(0, TITLE_MAX - 1)}…` : title;
}

/** The file a call touches, as an absolute path in the editor's working directory (editors follow it). */
export function toolLocations(args: Record<string, unknown>, cwd: string): Acp.ToolCallLocation[] {
  const path = args.path;
  if (typeof path !== 'string' || !path) return [];
  return [{ path: isAbsolute(path) ? path : resolve(cwd, path) }];
}

export const textContent = (text: string): Acp.ToolCallContent[] => (text ? [{ type: 'content', content: { type: 'text', text } }] : []);

/** The fields of a finished TaskStep its output is read from. */
export interface StepOutcome {
  id: string;
  kind: string;
  status: string;
  /** Agent-loop tool steps: `{"text": …, "is_error": …}`. */
  result?: string;
  exit_code?: number;
  error?: string;
}

/** What a finished tool step returned to the model (its text and whether it was an error). */
export function stepOutput(step: StepOutcome | undefined, fallback: string): { text: string; isError: boolean; exitCode?: number } {
  if (step?.result) {
    try {
      const r = JSON.parse(step.result) as { text?: unknown; is_error?: unknown };
      if (typeof r.text === 'string') return { text: r.text, isError: r.is_error === true, exitCode: step.exit_code };
    } catch {
      // not the agent loop's result shape
    }
  }
  return { text: step?.error || fallback, isError: step?.status !== 'completed', exitCode: step?.exit_code };
}
