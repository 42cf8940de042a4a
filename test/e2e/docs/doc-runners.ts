import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, symlinkSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { Client as McpClient } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ACP_ENTRY, AcpEditor } from '../../support/acp-editor';
import { where, type DocBlock } from '../../support/doc-blocks';
import { sandboxOwned } from '../../support/sandbox';
import { ROOT } from './doc-checks';

/**
 * The `run` doc tests: a block runs as a reader would run it, against the suite's server. The only rewrites are the
 * documented address (`127.0.0.1:8765` → the server's port) and, in configuration files, the placeholders a reader
 * fills in (`/path/to/hecate-server`, `hk_…`); the API key reaches code through HECATE_API_KEY, as the blocks read it.
 */
export interface DocServer {
  /** e.g. http://127.0.0.1:41234 */
  url: string;
  /** The environment the server was started with. */
  env: Record<string, string>;
  /** An API key (operator and inference scopes) minted for the blocks. */
  apiKey: string;
  /** A folder under the server's GATEWAY_WORKSPACE_ROOTS (editors open folders there). */
  workspaceRoot: string;
  /** Where blocks run and write (removed after the suite). */
  scratch: string;
}

export interface RunResult {
  code: number | null;
  stdout: string;
  stderr: string;
  /** The folder it ran in (files it wrote are there). */
  cwd: string;
}

export const DOCUMENTED_ADDRESS = /\b(?:127\.0\.0\.1|localhost):8765\b/g;

export function substitute(code: string, server: DocServer): string {
  const { host } = new URL(server.url);
  return code.replace(DOCUMENTED_ADDRESS, host).replaceAll('/path/to/hecate-server', ROOT).replaceAll('hk_…', server.apiKey);
}

/** Runs a process to its end (killed, with its group, after `timeoutMs`). */
export function runProcess(cmd: string, args: string[], opts: { cwd: string; env: Record<string, string>; timeoutMs: number }): Promise<RunResult> {
  return new Promise((done) => {
    const child = spawn(cmd, args, { cwd: opts.cwd, env: opts.env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => {
      stderr += `\n[doc test] killed after ${opts.timeoutMs} ms`;
      process.kill(-child.pid!, 'SIGKILL');
    }, opts.timeoutMs);
    child.once('close', (code) => {
      clearTimeout(timer);
      done({ code, stdout, stderr, cwd: opts.cwd });
    });
  });
}

/** What every block runs with: the machine's PATH and HOME, nothing of the test process's own environment. */
const baseEnv = (server: DocServer): Record<string, string> => ({
  PATH: process.env.PATH ?? '/usr/bin:/bin',
  HOME: process.env.HOME ?? '/tmp',
  HECATE_API_KEY: server.apiKey,
});

/** `PROVIDER_OPENAI_API_KEY=sk-... npm start`: the line of a block that starts the server the suite already started. */
const SERVER_START = /^((?:[A-Z][A-Z0-9_]*=\S*\s+)*)npm start\s*$/;

/**
 * A shell block, by bash with `-e -o pipefail`, in a scratch folder that holds `dist` (the build) as a checkout would.
 * A line that starts the server is not run: the suite's server must have been started with the same assignments.
 */
export async function runShell(block: DocBlock, server: DocServer): Promise<RunResult> {
  const lines = substitute(block.code, server).split('\n');
  for (const line of lines) {
    const start = SERVER_START.exec(line);
    if (!start) continue;
    for (const [, name, value] of start[1].matchAll(/([A-Z][A-Z0-9_]*)=(\S*)/g)) {
      if (server.env[name] !== value)
        throw new Error(`${where(block)} starts the server with ${name}=${value}; the doc tests' server has ${name}=${server.env[name]}`);
    }
  }
  const cwd = mkdtempSync(join(server.scratch, 'sh-'));
  symlinkSync(join(ROOT, 'dist'), join(cwd, 'dist'));
  const script = lines.filter((l) => !SERVER_START.test(l)).join('\n');
  return runProcess('bash', ['-e', '-o', 'pipefail', '-c', script], { cwd, env: baseEnv(server), timeoutMs: 30_000 });
}

/**
 * TypeScript blocks are programs of a scratch ES module package whose `@hecate/sdk` is the SDK as built (dist/ holds
 * the same sources `npm pack` compiles). They are type-checked together against the SDK's sources (strict, as a
 * reader's project would be), then each runs with Node's type stripping.
 */
export class TsPrograms {
  private readonly files = new Map<string, { block: DocBlock; file: string }>();

  constructor(readonly dir: string) {
    const sdk = join(this.dir, 'node_modules/@hecate/sdk');
    mkdirSync(sdk, { recursive: true });
    writeFileSync(join(this.dir, 'package.json'), JSON.stringify({ type: 'module' }));
    writeFileSync(join(sdk, 'package.json'), JSON.stringify({ name: '@hecate/sdk', main: 'index.js' }));
    writeFileSync(join(sdk, 'index.js'), `module.exports = require(${JSON.stringify(join(ROOT, 'dist/libs/sdk/src/index.js'))});\n`);
  }

  /** Adds a block (after the code of `before`, for a block that continues another). */
  add(id: string, block: DocBlock, server: DocServer, before = ''): void {
    const file = join(this.dir, `${id}.ts`);
    writeFileSync(file, `${substitute(before + block.code, server)}\n`);
    this.files.set(id, { block, file });
  }

  /** tsc's complaints about every block added (empty: they all type-check). */
  async typecheck(): Promise<string> {
    const tsconfig = {
      compilerOptions: {
        strict: true,
        noEmit: true,
        module: 'esnext',
        moduleResolution: 'bundler',
        target: 'es2023',
        lib: ['es2023'],
        types: ['node'],
        typeRoots: [join(ROOT, 'node_modules/@types')],
        skipLibCheck: true,
        paths: { '@hecate/sdk': [join(ROOT, 'libs/sdk/src/index.ts')] },
      },
      files: [...this.files.values()].map((f) => f.file),
    };
    writeFileSync(join(this.dir, 'tsconfig.json'), JSON.stringify(tsconfig, null, 2));
    const tsc = resolve(ROOT, 'node_modules/typescript/bin/tsc');
    const r = await runProcess(process.execPath, [tsc, '-p', join(this.dir, 'tsconfig.json')], {
      cwd: this.dir,
      env: { PATH: process.env.PATH ?? '' },
      timeoutMs: 60_000,
    });
    return r.code === 0 ? '' : `${r.stdout}${r.stderr}`;
  }

  run(id: string, server: DocServer): Promise<RunResult> {
    const entry = this.files.get(id);
    if (!entry) throw new Error(`no TypeScript block "${id}"`);
    return runProcess(process.execPath, ['--experimental-strip-types', '--no-warnings', entry.file], {
      cwd: this.dir,
      env: baseEnv(server),
      timeoutMs: 30_000,
    });
  }
}

type Json = Record<string, unknown>;

/**
 * A JSON block is an editor's or MCP client's configuration: it runs by launching what it configures, as that client
 * would, and using it — every ACP agent answers a prompt, every MCP server lists its tools and answers `list_tasks`.
 * Returns one line per server about what it did.
 */
export async function runConfig(block: DocBlock, server: DocServer): Promise<string[]> {
  const config = JSON.parse(substitute(block.code, server)) as Json;
  if (config.agent_servers) return runAcpAgents(config.agent_servers as Record<string, Json>, server);
  if (config.mcpServers) return runMcpServers(config.mcpServers as Record<string, Json>);
  throw new Error(`${where(block)}: a JSON block the doc tests cannot run (neither agent_servers nor mcpServers)`);
}

async function runAcpAgents(servers: Record<string, Json>, server: DocServer): Promise<string[]> {
  const lines: string[] = [];
  for (const [name, s] of Object.entries(servers)) {
    // AcpEditor launches `node <ACP_ENTRY>` with the entry's env: the same command when the entry names that file.
    if (s.command !== 'node' || (s.args as string[])[0] !== ACP_ENTRY)
      throw new Error(`${name}: launches ${String(s.command)} ${String(s.args)}, not ${ACP_ENTRY}`);
    const editor = await AcpEditor.launch(s.env as Record<string, string>);
    try {
      await editor.initialize();
      const folder = sandboxOwned(mkdtempSync(join(server.workspaceRoot, 'editor-')));
      const sessionId = await editor.newSession(folder);
      const { stopReason } = await editor.prompt(sessionId, 'hello');
      lines.push(`${name}: ${stopReason}: ${editor.text(sessionId)}`);
    } finally {
      await editor.close();
    }
  }
  return lines;
}

async function runMcpServers(servers: Record<string, Json>): Promise<string[]> {
  const lines: string[] = [];
  for (const [name, s] of Object.entries(servers)) {
    const transport = s.url
      ? new StreamableHTTPClientTransport(new URL(String(s.url)), { requestInit: { headers: s.headers as Record<string, string> } })
      : new StdioClientTransport({
          command: String(s.command),
          args: s.args as string[],
          env: { PATH: process.env.PATH ?? '', ...(s.env as Record<string, string>) },
          stderr: 'pipe',
        });
    const client = new McpClient({ name: 'doc-test', version: '1.0.0' });
    await client.connect(transport);
    try {
      const { tools } = await client.listTools();
      const listed = await client.callTool({ name: 'list_tasks', arguments: {} });
      lines.push(`${name}: ${tools.length} tools, list_tasks ${listed.isError ? 'failed' : 'answered'}`);
    } finally {
      await client.close();
    }
  }
  return lines;
}
