import { lstat, readdir } from 'node:fs/promises';
import { StringDecoder } from 'node:string_decoder';
import { join, matchesGlob, relative } from 'node:path';
import {
  commandEnv,
  GIT_ENV,
  gitArgv,
  gitArgvProblem,
  type NewArtifact,
  newId,
  readCurrent,
  relativeInside,
  runProcess,
  storableText,
  unifiedDiff,
  writeCurrent,
} from '@modules/tasks';
import { httpRequest } from './http-tool';
import type { BuiltinTool, ToolContext, ToolResult } from './tool-types';

export type { BuiltinTool, ToolClass, ToolContext, ToolResult } from './tool-types';

const MAX_READ_BYTES = 256 * 1024;
const MAX_LIST = 500;
const MAX_MATCHES = 200;

const str = (v: unknown, name: string, required = true): string => {
  if (v === undefined || v === null || v === '') {
    if (required) throw new ToolInputError(`${name} is required`);
    return '';
  }
  if (typeof v !== 'string') throw new ToolInputError(`${name} must be a string`);
  return v;
};
const object = (properties: Record<string, unknown>, required: string[]) => ({ type: 'object', properties, required, additionalProperties: false });
const S = (description: string) => ({ type: 'string', description });

export class ToolInputError extends Error {}

const fail = (text: string): ToolResult => ({ text, isError: true });

/** Walks the workspace (no symlink following), skipping .git; yields paths relative to it. */
async function* walk(root: string, dir: string): AsyncGenerator<string> {
  let entries;
  try {
    entries = await readdir(dir, { withFileTypes: true });
  } catch {
    return;
  }
  entries.sort((a, b) => a.name.localeCompare(b.name));
  for (const e of entries) {
    if (e.name === '.git') continue;
    const full = join(dir, e.name);
    if (e.isDirectory()) yield* walk(root, full);
    else if (e.isFile()) yield relative(root, full);
  }
}

/** A file change as the runtime records it: a patch artifact (applied, or proposed for `…/patches/{id}/apply`). */
function patchArtifact(path: string, operation: 'write' | 'edit', before: string | null, after: string, status: 'applied' | 'proposed'): NewArtifact {
  // PatchMetadata of the tasks module: what …/patches/{id}/apply and revert need.
  const metadata = {
    path,
    operation: 'write',
    before_existed: before !== null,
    before_content: before ?? '',
    after_exists: true,
    after_content: after,
  };
  return {
    id: newId('artifact'),
    kind: 'patch',
    name: path,
    path,
    mimeType: 'text/x-diff',
    content: unifiedDiff(path, before, after),
    status,
    metadata,
  };
}

async function runCommand(argv: string[], ctx: ToolContext, extraEnv: Record<string, string> = {}, network = ctx.workspace.network): Promise<ToolResult> {
  const refusal = ctx.sandbox.refusal();
  if (refusal) return fail(refusal);
  const ws = ctx.workspace;
  const decoders = { stdout: new StringDecoder('utf8'), stderr: new StringDecoder('utf8') };
  const r = await runProcess({
    argv: ctx.sandbox.wrap(argv, { workspace: ws.path, cwd: ws.path, readOnly: ws.readOnly, network }),
    cwd: ws.path,
    env: commandEnv(ctx.config.tasks, ws.path, extraEnv),
    timeoutMs: ctx.timeoutMs,
    maxOutputBytes: ctx.config.tasks.maxOutputBytes,
    signal: ctx.signal,
    onOutput: ctx.progress ? (stream, chunk) => ctx.progress!(stream, decoders[stream].write(chunk)) : undefined,
  });
  const out = storableText(r.stdout.toString('utf8'));
  const err = storableText(r.stderr.toString('utf8'));
  const status = r.spawnError
    ? `could not start: ${r.spawnError}`
    : r.timedOut
      ? `timed out after ${ctx.timeoutMs} ms`
      : r.truncated
        ? `output exceeded ${ctx.config.tasks.maxOutputBytes} bytes; stopped`
        : `exit code ${r.exitCode ?? r.signal}`;
  const text = [`[${status}]`, out && `stdout:\n${out}`, err && `stderr:\n${err}`].filter(Boolean).join('\n');
  const artifacts: NewArtifact[] = [{ kind: 'stdout', name: 'stdout', content: out, truncated: r.truncated }];
  if (err) artifacts.push({ kind: 'stderr', name: 'stderr', content: err, truncated: r.truncated });
  return {
    text,
    isError: r.exitCode !== 0,
    exitCode: r.exitCode,
    artifacts,
    summary: { exit_code: r.exitCode, duration_ms: r.durationMs, bytes: r.stdout.length + r.stderr.length, truncated: r.truncated },
  };
}

export const BUILTIN_TOOLS: BuiltinTool[] = [
  {
    name: 'read_file',
    description: 'Read a text file of the workspace.',
    parameters: object({ path: S('Path relative to the workspace') }, ['path']),
    classification: 'read_only',
    async run(args, ctx) {
      const path = await ctx.workspace.resolve(str(args.path, 'path'), 'path');
      const text = await readCurrent(path);
      if (text === null) return fail(`${String(args.path)} does not exist`);
      if (text.includes('\0')) return fail(`${String(args.path)} is a binary file`);
      return { text: text.length > MAX_READ_BYTES ? `${text.slice(0, MAX_READ_BYTES)}\n[truncated at ${MAX_READ_BYTES} bytes]` : text, isError: false };
    },
  },
  {
    name: 'list_dir',
    description: 'List a directory of the workspace (directories end with /).',
    parameters: object({ path: S('Directory relative to the workspace (default .)') }, []),
    classification: 'read_only',
    async run(args, ctx) {
      const dir = await ctx.workspace.resolve(str(args.path, 'path', false) || '.', 'path');
      const entries = (await readdir(dir, { withFileTypes: true })).sort((a, b) => a.name.localeCompare(b.name));
      const lines = entries.slice(0, MAX_LIST).map((e) => (e.isDirectory() ? `${e.name}/` : e.name));
      if (entries.length > MAX_LIST) lines.push(`[${entries.length - MAX_LIST} more]`);
      return { text: lines.join('\n') || '(empty)', isError: false };
    },
  },
  {
    name: 'glob',
    description: 'Find workspace files whose path matches a glob pattern (e.g. src/**/*.ts).',
    parameters: object({ pattern: S('Glob pattern relative to the workspace') }, ['pattern']),
    classification: 'read_only',
    async run(args, ctx) {
      const pattern = str(args.pattern, 'pattern');
      const found: string[] = [];
      for await (const rel of walk(ctx.workspace.path, ctx.workspace.path)) {
        if (matchesGlob(rel, pattern)) found.push(rel);
        if (found.length >= MAX_MATCHES) break;
      }
      return { text: found.join('\n') || '(no matches)', isError: false };
    },
  },
  {
    name: 'grep',
    description: 'Search workspace files for a regular expression; returns path:line: text.',
    parameters: object({ pattern: S('JavaScript regular expression'), path: S('Directory or file (default .)'), glob: S('Only files matching this glob') }, [
      'pattern',
    ]),
    classification: 'read_only',
    async run(args, ctx) {
      let re: RegExp;
      try {
        re = new RegExp(str(args.pattern, 'pattern'));
      } catch (err) {
        return fail(`invalid pattern: ${(err as Error).message}`);
      }
      const base = await ctx.workspace.resolve(str(args.path, 'path', false) || '.', 'path');
      const glob = str(args.glob, 'glob', false);
      const files = (await lstat(base)).isFile() ? [relative(ctx.workspace.path, base)] : [];
      if (files.length === 0) for await (const rel of walk(ctx.workspace.path, base)) files.push(rel);
      const hits: string[] = [];
      for (const rel of files) {
        if (glob && !matchesGlob(rel, glob)) continue;
        const text = await readCurrent(join(ctx.workspace.path, rel)).catch(() => null);
        if (text === null || text.includes('\0')) continue;
        text.split('\n').forEach((line, i) => {
          if (hits.length < MAX_MATCHES && re.test(line)) hits.push(`${rel}:${i + 1}: ${line.slice(0, 400)}`);
        });
        if (hits.length >= MAX_MATCHES) break;
      }
      return { text: hits.join('\n') || '(no matches)', isError: false };
    },
  },
  {
    name: 'file_write',
    description: 'Create or overwrite a workspace file with the given content.',
    parameters: object({ path: S('Path relative to the workspace'), content: S('The whole new content') }, ['path', 'content']),
    classification: 'side_effecting',
    async run(args, ctx) {
      if (ctx.workspace.readOnly) return fail('the workspace is read-only (sandbox_read_only=true)');
      const target = await ctx.workspace.resolve(str(args.path, 'path'), 'path');
      const content = typeof args.content === 'string' ? args.content : str(args.content, 'content');
      const rel = await relativeInside(ctx.workspace.path, target);
      const before = await readCurrent(target);
      await writeCurrent(target, content);
      return {
        text: `wrote ${Buffer.byteLength(content)} bytes to ${rel}`,
        isError: false,
        artifacts: [patchArtifact(rel, 'write', before, content, 'applied')],
      };
    },
  },
  {
    name: 'file_edit',
    description:
      'Replace exactly one occurrence of old_string with new_string in a workspace file. With propose=true the change is recorded as a proposed patch and not applied.',
    parameters: object(
      {
        path: S('Path relative to the workspace'),
        old_string: S('Exact text to replace (must occur once)'),
        new_string: S('Replacement'),
        propose: { type: 'boolean' },
      },
      ['path', 'old_string', 'new_string'],
    ),
    classification: 'side_effecting',
    async run(args, ctx) {
      const target = await ctx.workspace.resolve(str(args.path, 'path'), 'path');
      const rel = await relativeInside(ctx.workspace.path, target);
      const oldString = str(args.old_string, 'old_string');
      const newString = typeof args.new_string === 'string' ? args.new_string : '';
      const before = await readCurrent(target);
      if (before === null) return fail(`${rel} does not exist`);
      const count = before.split(oldString).length - 1;
      if (count !== 1) return fail(`old_string occurs ${count} times in ${rel}; it must occur exactly once`);
      const after = before.replace(oldString, () => newString);
      if (args.propose === true) {
        const artifact = patchArtifact(rel, 'edit', before, after, 'proposed');
        return { text: `proposed a change to ${rel} (patch ${artifact.id}); it is not applied`, isError: false, artifacts: [artifact] };
      }
      if (ctx.workspace.readOnly) return fail('the workspace is read-only (sandbox_read_only=true)');
      await writeCurrent(target, after);
      return { text: `edited ${rel}`, isError: false, artifacts: [patchArtifact(rel, 'edit', before, after, 'applied')] };
    },
  },
  {
    name: 'shell_exec',
    description: 'Run a shell command (/bin/sh -c) in the workspace, sandboxed, with a timeout and an output cap.',
    parameters: object({ command: S('The command line') }, ['command']),
    classification: 'side_effecting',
    run: (args, ctx) => runCommand(['/bin/sh', '-c', str(args.command, 'command')], ctx),
  },
  {
    name: 'git_exec',
    description: 'Run one git command in the workspace (e.g. "commit -am msg"); options that run other programs are refused.',
    parameters: object({ command: S('git arguments, with or without the leading git') }, ['command']),
    classification: 'side_effecting',
    async run(args, ctx) {
      const argv = gitArgv(str(args.command, 'command'));
      if (!argv) return fail('command must be a git command line (quotes must be closed)');
      const problem = gitArgvProblem(argv);
      if (problem) return fail(problem);
      return runCommand(argv, ctx, GIT_ENV);
    },
  },
  {
    name: 'git_status',
    description: 'git status --short --branch of the workspace.',
    parameters: object({}, []),
    classification: 'read_only',
    run: (_args, ctx) => runCommand(['git', 'status', '--short', '--branch'], ctx, GIT_ENV, false),
  },
  {
    name: 'git_diff',
    description: 'git diff of the workspace (optionally --staged or one path).',
    parameters: object({ path: S('Limit to this path'), staged: { type: 'boolean' } }, []),
    classification: 'read_only',
    async run(args, ctx) {
      const argv = ['git', 'diff'];
      if (args.staged === true) argv.push('--staged');
      const path = str(args.path, 'path', false);
      if (path) argv.push('--', await relativeInside(ctx.workspace.path, await ctx.workspace.resolve(path, 'path')));
      return runCommand(argv, ctx, GIT_ENV, false);
    },
  },
  {
    name: 'http_request',
    description: 'Make an HTTP(S) request (GET by default). Private, loopback, link-local and metadata addresses are refused.',
    parameters: object(
      { url: S('http(s) URL'), method: S('GET, POST, …'), body: S('Request body'), headers: { type: 'object', additionalProperties: { type: 'string' } } },
      ['url'],
    ),
    classification: 'side_effecting',
    run: (args, ctx) =>
      httpRequest(
        {
          url: str(args.url, 'url'),
          method: str(args.method, 'method', false) || 'GET',
          body: str(args.body, 'body', false),
          headers: (args.headers as Record<string, string>) ?? {},
        },
        ctx,
      ),
  },
];

export const BUILTIN_BY_NAME = new Map(BUILTIN_TOOLS.map((t) => [t.name, t]));
