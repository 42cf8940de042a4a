import { StringDecoder } from 'node:string_decoder';
import { z } from 'zod';
import { storableText } from '@core/database/storable';
import { type NewArtifact, newId } from '@modules/tasks';
import {
  commandEnv,
  GIT_ENV,
  gitArgv,
  gitArgvProblem,
  listWorkspaceDir,
  readCurrent,
  readHead,
  relativeInside,
  runProcess,
  scanWorkspace,
  unifiedDiff,
  withWorkspaceFile,
  writeCurrent,
} from '@modules/workspaces';
import { httpRequest } from './http-tool';
import type { BuiltinTool, ToolContext, ToolResult } from './tool-types';

export type { BuiltinTool, ToolClass, ToolContext, ToolResult } from './tool-types';

/** read_file's cap: the head of a file, with the truncation note, fits the 64 KiB a tool result may hand the model. */
const MAX_READ_BYTES = 60 * 1024;
const MAX_LIST = 500;
const MAX_MATCHES = 200;
const MAX_LINE_CHARS = 64 * 1024;

export class ToolInputError extends Error {}

/** A string the tool needs: missing, null or '' is "<name> is required". */
const needed = (description: string) =>
  z
    .string()
    .describe(description)
    .refine((v) => v !== '', { error: 'is required' });
/** A string the tool can do without ('' counts as not given). */
const optional = (description: string) => z.string().describe(description).optional();
/** On only when `true`; any other value leaves it off, as it always did. */
const flag = () => z.boolean().optional().catch(undefined);

/**
 * The schema as the model has always been sent it: no `$schema`, `required` always listed, unknown arguments
 * discouraged; no fallback shown as a default, no `propertyNames` (object keys are strings anyway).
 */
function parametersOf(input: z.ZodObject): Record<string, unknown> {
  const json = z.toJSONSchema(input, {
    override: ({ jsonSchema }) => {
      delete jsonSchema.default;
      delete jsonSchema.propertyNames;
    },
  });
  return { type: 'object', properties: json.properties ?? {}, required: json.required ?? [], additionalProperties: false };
}

/** The arguments as `input` reads them, or a ToolInputError naming the first bad one ("path is required"). */
function parseArgs<S extends z.ZodObject>(input: S, args: Record<string, unknown>): z.output<S> {
  const given = Object.fromEntries(Object.entries(args).filter(([, v]) => v !== null));
  const parsed = input.safeParse(given);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  const name = issue.path.join('.');
  if (issue.code === 'invalid_type' && issue.path.length === 1 && given[name] === undefined) throw new ToolInputError(`${name} is required`);
  if (issue.code === 'invalid_type') throw new ToolInputError(`${name} must be ${issue.expected === 'record' ? 'an object' : `a ${issue.expected}`}`);
  throw new ToolInputError(`${name} ${issue.message}`);
}

interface ToolSpec<S extends z.ZodObject> extends Omit<BuiltinTool, 'parameters' | 'run'> {
  input: S;
  run(args: z.output<S>, ctx: ToolContext): Promise<ToolResult>;
}

/**
 * A built-in tool whose arguments are one zod object: its JSON Schema is what the model is sent, its parse what the
 * tool accepts, with the leniencies the tools always had (null means "not given", unknown arguments are ignored).
 */
const tool = <S extends z.ZodObject>({ input, run, ...spec }: ToolSpec<S>): BuiltinTool => ({
  ...spec,
  parameters: parametersOf(input),
  run: async (args, ctx) => run(parseArgs(input, args), ctx),
});

const fail = (text: string): ToolResult => ({ text, isError: true });

/** A file tool's failure the model reads (the file tools' own errors: not a file, too large, a symlink on the way). */
async function fileFailure<T>(fn: () => Promise<T>): Promise<T | ToolResult> {
  try {
    return await fn();
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOTFILE' || code === 'EFBIG' || code === 'EISDIR' || code === 'ENOTDIR') return fail((err as Error).message);
    throw err;
  }
}
const isResult = (v: unknown): v is ToolResult => typeof v === 'object' && v !== null && 'isError' in v;

/** grep and glob: a worker-thread scan with the tool time limit (ReDoS and huge trees never reach the event loop). */
async function runScan(ctx: ToolContext, spec: Parameters<typeof scanWorkspace>[0], what: string): Promise<ToolResult> {
  const limit = Math.min(ctx.timeoutMs, ctx.config.agent.scanTimeoutMs);
  const outcome = await scanWorkspace(spec, limit, ctx.signal);
  if (outcome.status === 'timed_out')
    return fail(`${what} stopped: time limit of ${limit} ms exceeded (GATEWAY_TASK_AGENT_SCAN_TIMEOUT); narrow the pattern, path or glob`);
  if (outcome.status === 'failed') return fail(outcome.invalidPattern ? `invalid pattern: ${outcome.error}` : `${what} failed: ${outcome.error}`);
  const { lines, longLines } = outcome.result;
  const notes: string[] = [];
  if (lines.length >= spec.maxMatches) notes.push(`[stopped at ${spec.maxMatches} results]`);
  if (longLines > 0) notes.push(`[${longLines} lines longer than ${MAX_LINE_CHARS} characters were searched on their start]`);
  return { text: [...lines, ...notes].join('\n') || '(no matches)', isError: false };
}

/** A file change as the runtime records it: a patch artifact (applied, or proposed for `…/patches/{artifact_id}/apply`). */
function patchArtifact(path: string, operation: 'write' | 'edit', before: string | null, after: string, status: 'applied' | 'proposed'): NewArtifact {
  // PatchMetadata of the tasks module: what …/patches/{artifact_id}/apply and revert need.
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
  tool({
    name: 'read_file',
    description: 'Read a text file of the workspace.',
    input: z.object({ path: needed('Path relative to the workspace') }),
    classification: 'read_only',
    async run({ path: requested }, ctx) {
      const path = await ctx.workspace.resolve(requested, 'path');
      // Only the head of the file is read (a huge file never enters memory whole).
      const head = await fileFailure(() => withWorkspaceFile(ctx.workspace.path, path, (file) => readHead(file, MAX_READ_BYTES)));
      if (isResult(head)) return head;
      if (head === null) return fail(`${requested} does not exist`);
      if (head.data.includes(0)) return fail(`${requested} is a binary file`);
      const text = head.data.toString('utf8');
      if (!head.truncated) return { text, isError: false };
      return { text: `${text}\n[truncated: the first ${MAX_READ_BYTES} of ${head.size} bytes]`, isError: false };
    },
  }),
  tool({
    name: 'list_dir',
    description: 'List a directory of the workspace (directories end with /).',
    input: z.object({ path: optional('Directory relative to the workspace (default .)') }),
    classification: 'read_only',
    async run({ path: requested }, ctx) {
      const dir = await ctx.workspace.resolve(requested || '.', 'path');
      const listed = await fileFailure(() => listWorkspaceDir(ctx.workspace.path, dir));
      if (isResult(listed)) return listed;
      if (listed === null) return fail(`${requested ?? '.'} does not exist`);
      const entries = listed.sort((a, b) => a.name.localeCompare(b.name));
      const lines = entries.slice(0, MAX_LIST).map((e) => (e.isDirectory() ? `${e.name}/` : e.name));
      if (entries.length > MAX_LIST) lines.push(`[${entries.length - MAX_LIST} more]`);
      return { text: lines.join('\n') || '(empty)', isError: false };
    },
  }),
  tool({
    name: 'glob',
    description: 'Find workspace files whose path matches a glob pattern (e.g. src/**/*.ts).',
    input: z.object({ pattern: needed('Glob pattern relative to the workspace') }),
    classification: 'read_only',
    run({ pattern }, ctx) {
      const root = ctx.workspace.path;
      return runScan(ctx, { kind: 'glob', root, base: root, pattern, maxMatches: MAX_MATCHES }, 'glob');
    },
  }),
  tool({
    name: 'grep',
    description: 'Search workspace files for a regular expression; returns path:line: text.',
    input: z.object({
      pattern: needed('JavaScript regular expression'),
      path: optional('Directory or file (default .)'),
      glob: optional('Only files matching this glob'),
    }),
    classification: 'read_only',
    async run({ pattern, path, glob }, ctx) {
      const base = await ctx.workspace.resolve(path || '.', 'path');
      return runScan(ctx, { kind: 'grep', root: ctx.workspace.path, base, pattern, glob: glob || undefined, maxMatches: MAX_MATCHES }, 'grep');
    },
  }),
  tool({
    name: 'file_write',
    description: 'Create or overwrite a workspace file with the given content.',
    // content may be empty (an empty file).
    input: z.object({ path: needed('Path relative to the workspace'), content: z.string().describe('The whole new content') }),
    classification: 'side_effecting',
    async run({ path, content }, ctx) {
      if (ctx.workspace.readOnly) return fail('the workspace is read-only (sandbox_read_only=true)');
      const target = await ctx.workspace.resolve(path, 'path');
      const rel = await relativeInside(ctx.workspace.path, target);
      const before = await fileFailure(() => readCurrent(ctx.workspace.path, target));
      if (isResult(before)) return before;
      await writeCurrent(ctx.workspace.path, target, content);
      return {
        text: `wrote ${Buffer.byteLength(content)} bytes to ${rel}`,
        isError: false,
        artifacts: [patchArtifact(rel, 'write', before, content, 'applied')],
      };
    },
  }),
  tool({
    name: 'file_edit',
    description:
      'Replace exactly one occurrence of old_string with new_string in a workspace file. With propose=true the change is recorded as a proposed patch and not applied.',
    input: z.object({
      path: needed('Path relative to the workspace'),
      old_string: needed('Exact text to replace (must occur once)'),
      // Anything but a string (or nothing) deletes old_string, as it always did.
      new_string: z.string().describe('Replacement').catch(''),
      propose: flag(),
    }),
    classification: 'side_effecting',
    async run({ path, old_string: oldString, new_string: newString, propose }, ctx) {
      const target = await ctx.workspace.resolve(path, 'path');
      const rel = await relativeInside(ctx.workspace.path, target);
      const before = await fileFailure(() => readCurrent(ctx.workspace.path, target));
      if (isResult(before)) return before;
      if (before === null) return fail(`${rel} does not exist`);
      const count = before.split(oldString).length - 1;
      if (count !== 1) return fail(`old_string occurs ${count} times in ${rel}; it must occur exactly once`);
      const after = before.replace(oldString, () => newString);
      if (propose === true) {
        const artifact = patchArtifact(rel, 'edit', before, after, 'proposed');
        return { text: `proposed a change to ${rel} (patch ${artifact.id}); it is not applied`, isError: false, artifacts: [artifact] };
      }
      if (ctx.workspace.readOnly) return fail('the workspace is read-only (sandbox_read_only=true)');
      await writeCurrent(ctx.workspace.path, target, after);
      return { text: `edited ${rel}`, isError: false, artifacts: [patchArtifact(rel, 'edit', before, after, 'applied')] };
    },
  }),
  tool({
    name: 'shell_exec',
    description: 'Run a shell command (/bin/sh -c) in the workspace, sandboxed, with a timeout and an output cap.',
    input: z.object({ command: needed('The command line') }),
    classification: 'side_effecting',
    run: ({ command }, ctx) => runCommand(['/bin/sh', '-c', command], ctx),
  }),
  tool({
    name: 'git_exec',
    description: 'Run one git command in the workspace (e.g. "commit -am msg"); options that run other programs are refused.',
    input: z.object({ command: needed('git arguments, with or without the leading git') }),
    classification: 'side_effecting',
    async run({ command }, ctx) {
      const argv = gitArgv(command);
      if (!argv) return fail('command must be a git command line (quotes must be closed)');
      const problem = gitArgvProblem(argv);
      if (problem) return fail(problem);
      return runCommand(argv, ctx, GIT_ENV);
    },
  }),
  tool({
    name: 'git_status',
    description: 'git status --short --branch of the workspace.',
    input: z.object({}),
    classification: 'read_only',
    run: (_args, ctx) => runCommand(['git', 'status', '--short', '--branch'], ctx, GIT_ENV, false),
  }),
  tool({
    name: 'git_diff',
    description: 'git diff of the workspace (optionally --staged or one path).',
    input: z.object({ path: optional('Limit to this path'), staged: flag() }),
    classification: 'read_only',
    async run({ path, staged }, ctx) {
      const argv = ['git', 'diff'];
      if (staged === true) argv.push('--staged');
      if (path) argv.push('--', await relativeInside(ctx.workspace.path, await ctx.workspace.resolve(path, 'path')));
      return runCommand(argv, ctx, GIT_ENV, false);
    },
  }),
  tool({
    name: 'http_request',
    description: 'Make an HTTP(S) request (GET by default). Private, loopback, link-local and metadata addresses are refused.',
    input: z.object({
      url: needed('http(s) URL'),
      method: optional('GET, POST, …'),
      body: optional('Request body'),
      headers: z.record(z.string(), z.string()).optional(),
    }),
    classification: 'side_effecting',
    run: ({ url, method, body, headers }, ctx) => httpRequest({ url, method: method || 'GET', body: body ?? '', headers: headers ?? {} }, ctx),
  }),
];

export const BUILTIN_BY_NAME = new Map(BUILTIN_TOOLS.map((t) => [t.name, t]));

/** Names of the built-in tools (a saved agent's `builtin_tools` picks among them). */
export const BUILTIN_TOOL_NAMES: readonly string[] = BUILTIN_TOOLS.map((t) => t.name);
