import { mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AppConfig } from '@core/config/app-config';
import { loadConfig } from '@core/config/config.loader';
import { SandboxService } from '@modules/workspaces/sandbox/sandbox.service';
import { resolveInside } from '@modules/workspaces/workspace/path-resolver';
import { BUILTIN_BY_NAME, BUILTIN_TOOLS, ToolInputError, type ToolContext, type ToolResult } from './builtin-tools';

/** What the model is sent for each built-in tool, byte for byte (a provider's prompt cache and strict parsers see these). */
const PARAMETERS: Record<string, string> = {
  read_file:
    '{"type":"object","properties":{"path":{"type":"string","description":"Path relative to the workspace"}},"required":["path"],"additionalProperties":false}',
  list_dir:
    '{"type":"object","properties":{"path":{"type":"string","description":"Directory relative to the workspace (default .)"}},"required":[],"additionalProperties":false}',
  glob: '{"type":"object","properties":{"pattern":{"type":"string","description":"Glob pattern relative to the workspace"}},"required":["pattern"],"additionalProperties":false}',
  grep: '{"type":"object","properties":{"pattern":{"type":"string","description":"JavaScript regular expression"},"path":{"type":"string","description":"Directory or file (default .)"},"glob":{"type":"string","description":"Only files matching this glob"}},"required":["pattern"],"additionalProperties":false}',
  file_write:
    '{"type":"object","properties":{"path":{"type":"string","description":"Path relative to the workspace"},"content":{"type":"string","description":"The whole new content"}},"required":["path","content"],"additionalProperties":false}',
  file_edit:
    '{"type":"object","properties":{"path":{"type":"string","description":"Path relative to the workspace"},"old_string":{"type":"string","description":"Exact text to replace (must occur once)"},"new_string":{"type":"string","description":"Replacement"},"propose":{"type":"boolean"}},"required":["path","old_string","new_string"],"additionalProperties":false}',
  shell_exec:
    '{"type":"object","properties":{"command":{"type":"string","description":"The command line"}},"required":["command"],"additionalProperties":false}',
  git_exec:
    '{"type":"object","properties":{"command":{"type":"string","description":"git arguments, with or without the leading git"}},"required":["command"],"additionalProperties":false}',
  git_status: '{"type":"object","properties":{},"required":[],"additionalProperties":false}',
  git_diff:
    '{"type":"object","properties":{"path":{"type":"string","description":"Limit to this path"},"staged":{"type":"boolean"}},"required":[],"additionalProperties":false}',
  http_request:
    '{"type":"object","properties":{"url":{"type":"string","description":"http(s) URL"},"method":{"type":"string","description":"GET, POST, …"},"body":{"type":"string","description":"Request body"},"headers":{"type":"object","additionalProperties":{"type":"string"}}},"required":["url"],"additionalProperties":false}',
};

describe('built-in tools: the schemas the model is sent and the arguments they accept', () => {
  let dir: string;
  let ctx: ToolContext;

  beforeAll(async () => {
    const config = loadConfig({ GATEWAY_TASK_SANDBOX: 'none' }) as AppConfig;
    const sandbox = new SandboxService(config);
    await sandbox.onModuleInit();
    dir = realpathSync(mkdtempSync(join(tmpdir(), 'hecate-builtin-tools-')));
    const workspace = { path: dir, resolve: (requested: string, what?: string) => resolveInside(dir, requested, what), readOnly: false, network: false };
    ctx = { workspace, sandbox, config, signal: new AbortController().signal, timeoutMs: 10_000 };
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  const run = (name: string, args: Record<string, unknown>): Promise<ToolResult> => BUILTIN_BY_NAME.get(name)!.run(args, ctx);
  const refused = async (name: string, args: Record<string, unknown>): Promise<string> => {
    // As the dispatcher awaits it: a throw before the first await counts like a rejection.
    const err = await Promise.resolve()
      .then(() => run(name, args))
      .then(
        () => undefined,
        (e: unknown) => e,
      );
    expect(err).toBeInstanceOf(ToolInputError);
    return (err as Error).message;
  };

  it('sends each tool with the same JSON schema as before, in the same order', () => {
    expect(BUILTIN_TOOLS.map((t) => t.name)).toEqual(Object.keys(PARAMETERS));
    for (const tool of BUILTIN_TOOLS) expect([tool.name, JSON.stringify(tool.parameters)]).toEqual([tool.name, PARAMETERS[tool.name]]);
  });

  it('names a missing, null or empty required argument, and a required argument of the wrong type', async () => {
    expect(await refused('read_file', {})).toBe('path is required');
    expect(await refused('read_file', { path: null })).toBe('path is required');
    expect(await refused('read_file', { path: '' })).toBe('path is required');
    expect(await refused('read_file', { path: 7 })).toBe('path must be a string');
    expect(await refused('grep', { path: 'src' })).toBe('pattern is required');
    expect(await refused('grep', { pattern: 'x', glob: ['*.ts'] })).toBe('glob must be a string');
    expect(await refused('file_write', { path: 'a.txt' })).toBe('content is required');
    expect(await refused('file_write', { path: 'a.txt', content: 3 })).toBe('content must be a string');
    expect(await refused('file_edit', { path: 'a.txt', new_string: 'x' })).toBe('old_string is required');
    expect(await refused('shell_exec', { command: '' })).toBe('command is required');
    expect(await refused('git_exec', { command: { argv: ['status'] } })).toBe('command must be a string');
    expect(await refused('git_diff', { path: false })).toBe('path must be a string');
    expect(await refused('http_request', { method: 'GET' })).toBe('url is required');
    expect(await refused('http_request', { url: 'https://example.com', body: 1 })).toBe('body must be a string');
    // headers were taken unchecked before zod read them; now they must be what the schema says.
    expect(await refused('http_request', { url: 'https://example.com', headers: 'accept: */*' })).toBe('headers must be an object');
    expect(await refused('http_request', { url: 'https://example.com', headers: { accept: 1 } })).toBe('headers.accept must be a string');
  });

  it('treats null and empty optional arguments as absent, ignores unknown ones, and writes an empty file', async () => {
    writeFileSync(join(dir, 'seen.txt'), 'seen\n');
    expect(await run('list_dir', { path: null, extra: 'ignored' })).toMatchObject({ isError: false, text: expect.stringContaining('seen.txt') });
    expect(await run('list_dir', { path: '' })).toMatchObject({ isError: false, text: expect.stringContaining('seen.txt') });
    expect(await run('read_file', { path: 'seen.txt', offset: 3 })).toEqual({ text: 'seen\n', isError: false });
    expect(await run('file_write', { path: 'empty.txt', content: '' })).toMatchObject({ isError: false, text: 'wrote 0 bytes to empty.txt' });
    expect(readFileSync(join(dir, 'empty.txt'), 'utf8')).toBe('');
  });

  it('file_edit: a missing new_string deletes the old text; only propose=true proposes', async () => {
    writeFileSync(join(dir, 'edit.txt'), 'keep drop keep\n');
    expect(await run('file_edit', { path: 'edit.txt', old_string: ' drop' })).toMatchObject({ isError: false, text: 'edited edit.txt' });
    expect(readFileSync(join(dir, 'edit.txt'), 'utf8')).toBe('keep keep\n');
    const proposed = await run('file_edit', { path: 'edit.txt', old_string: 'keep keep', new_string: 'changed', propose: true });
    expect(proposed).toMatchObject({ isError: false, text: expect.stringMatching(/^proposed a change to edit\.txt/) });
    expect(readFileSync(join(dir, 'edit.txt'), 'utf8')).toBe('keep keep\n');
    expect(await run('file_edit', { path: 'edit.txt', old_string: 'keep keep', new_string: 'changed', propose: 'yes' })).toMatchObject({
      isError: false,
      text: 'edited edit.txt',
    });
    expect(readFileSync(join(dir, 'edit.txt'), 'utf8')).toBe('changed\n');
  });

  it('runs a valid command (sandbox none) with its arguments as given', async () => {
    expect(await run('shell_exec', { command: 'printf hi' })).toMatchObject({ isError: false, exitCode: 0, text: '[exit code 0]\nstdout:\nhi' });
  });
});
