import { mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readDocBlocks, where, type DocBlock } from '../../support/doc-blocks';
import { useStack } from '../../support/harness';
import { HttpClient } from '../../support/http';
import { providerEnv } from '../../support/provider-env';
import { commandProblems, pathProblems, ROOT } from './doc-checks';
import { runConfig, runShell, TsPrograms, type DocServer, type RunResult } from './doc-runners';

/**
 * Doc tests (issue 33): every fenced code block of the README and the SDK's README is run against the built server,
 * checked another real way, or marked as not runnable here with its reason (test/support/doc-blocks.ts says how a block
 * is marked). A run block must end on its own, exit 0 and print what `PRINTS` expects of it.
 */
const FILES = ['README.md', 'libs/sdk/README.md'];
const blocks = FILES.flatMap((f) => readDocBlocks(ROOT, f));
const runBlocks = blocks.flatMap((b) => (b.coverage.kind === 'run' ? [{ block: b, ...b.coverage }] : []));

const lines = (r: RunResult) => r.stdout.trim().split('\n');

/** What each run block must print (by the id its directive gives it). */
const PRINTS: Record<string, (r: RunResult) => void> = {
  // README, OpenAPI: the count jq prints is the number of paths of the document main.openapi.js wrote without a server.
  'openapi-paths': (r) => {
    const written = JSON.parse(readFileSync(join(r.cwd, 'openapi.json'), 'utf8')) as { paths: object };
    expect(Number(lines(r)[0])).toBe(Object.keys(written.paths).length);
    expect(Object.keys(written.paths).length).toBeGreaterThan(50);
  },
  // README, the SDK: the run asks for its approval, the example approves the exact command, the run completes.
  'sdk-example': (r) => {
    expect(lines(r)).toContainEqual(expect.stringMatching(/^\d+ approval\.requested awaiting_approval$/));
    expect(lines(r)).toContainEqual('approving argv: ["/bin/sh","-c","echo hello"]');
    expect(lines(r).at(-1)).toMatch(/^\d+ run\.finished completed$/);
  },
  // README, Gateway: an OpenAI-shaped answer from the provider (the fake upstream echoes the prompt).
  'gateway-curl': (r) => {
    expect(JSON.parse(r.stdout)).toMatchObject({ object: 'chat.completion', model: 'gpt-4o-mini', choices: [{ message: { content: 'echo: hello' } }] });
  },
  // README, Zed: the editor's agent answers a prompt through the server.
  'zed-acp': (r) => expect(lines(r)).toEqual(['Hecate: end_turn: echo: hello']),
  // README, MCP clients: both transports serve the product API's tools to the key.
  'mcp-config': (r) => {
    expect(lines(r)).toHaveLength(2);
    for (const line of lines(r)) expect(line).toMatch(/^hecate(-stdio)?: \d+ tools, list_tasks answered$/);
  },
  // SDK README, Use: the run completes after its approval, a turn answers 202, a missing task is a HecateError.
  'sdk-use': (r) => {
    expect(lines(r)).toContainEqual(expect.stringMatching(/^\d+ approval\.resolved queued$/));
    expect(lines(r)).toContainEqual(expect.stringMatching(/^\d+ run\.finished completed$/));
    expect(lines(r)).toContainEqual('agent_chat_turn');
    expect(lines(r)).toContainEqual(expect.stringMatching(/^404 not_found .* req_[0-9a-f]+ /));
  },
  // SDK README, Streams: the reply folded from the turn's frames is the model's answer.
  'sdk-live-reply': (r) => expect(lines(r).at(-1)).toBe('echo: hello'),
};

describe('the code blocks of the README and the SDK README (doc tests)', () => {
  it('every block is run, checked, or skipped with a reason', () => {
    expect(blocks.length).toBeGreaterThan(10);
    const uncovered = blocks.flatMap((b) => (b.coverage.kind === 'uncovered' ? [`${where(b)}: ${b.coverage.problem}`] : []));
    expect(uncovered).toEqual([]);
    // Skips are for what needs a Docker engine, a cluster or a cloud account.
    const skips = blocks.flatMap((b) => (b.coverage.kind === 'skip' ? [`${where(b)}: ${b.coverage.reason}`] : []));
    for (const skip of skips) expect(skip).toMatch(/docker|kubernetes|kubectl|cluster|cloud/i);
  });

  it('every run block has an id of its own and an expectation, and every expectation a block', () => {
    const ids = runBlocks.map((r) => r.id);
    expect(new Set(ids).size).toBe(ids.length);
    expect([...ids].sort()).toEqual(Object.keys(PRINTS).sort());
    for (const r of runBlocks) expect([r.id, ['bash', 'sh', 'ts', 'json'].includes(r.block.lang)]).toEqual([r.id, true]);
  });

  it('checked blocks name only scripts, files, variables and programs that exist', () => {
    const checked = blocks.filter((b) => b.coverage.kind === 'check');
    expect(checked.length).toBeGreaterThan(0);
    const problems = checked.flatMap((b) => (b.coverage.kind === 'check' && b.coverage.how === 'paths' ? pathProblems(b) : commandProblems(b)));
    expect(problems).toEqual([]);
  });

  describe('run blocks, against one embedded server (no token: the quick start) and the fake upstream', () => {
    const scratch = realpathSync(mkdtempSync(join(tmpdir(), 'hecate-doctest-')));
    const workspaceRoot = join(scratch, 'roots');
    mkdirSync(workspaceRoot);
    const suite = useStack({
      mode: 'embedded',
      upstream: { models: ['gpt-4o-mini'] },
      // As the Gateway section starts it (`PROVIDER_OPENAI_API_KEY=sk-... npm start`), with its base URL on the fake
      // upstream — a loopback address, which the outbound policy allows only to a local provider, hence `kind: local`.
      env: (upstream) => ({ ...providerEnv('openai', upstream, { key: 'sk-...', kind: 'local' }), GATEWAY_WORKSPACE_ROOTS: workspaceRoot }),
    });
    const ts = new TsPrograms(join(scratch, 'ts'));
    let server: DocServer;
    let typeErrors = '';

    beforeAll(async () => {
      const { stack } = suite;
      const key = await new HttpClient(stack.url, null).ok('POST', '/hecate/v1/api-keys', { name: 'doc tests', scopes: ['operator', 'inference'] });
      server = { url: stack.url, env: stack.env, apiKey: key.secret as string, workspaceRoot, scratch };
      const byId = new Map(runBlocks.map((r) => [r.id, r.block]));
      for (const r of runBlocks.filter((x) => x.block.lang === 'ts')) {
        const before = r.after ? `${byId.get(r.after)?.code ?? `missing block ${r.after}`}\n` : '';
        ts.add(r.id, r.block, server, before);
      }
      typeErrors = await ts.typecheck();
    }, 120_000);
    afterAll(() => rmSync(scratch, { recursive: true, force: true }));

    it('the TypeScript blocks type-check against the SDK (strict)', () => {
      expect(typeErrors).toBe('');
    });

    for (const { block, id } of runBlocks) {
      it(`${where(block)}: ${id} runs to its end and prints what it shows`, async () => {
        const result = await runBlock(block, id);
        if (result.code !== 0) throw new Error(`${where(block)} exited with ${result.code}:\n${result.stderr}\n${result.stdout}`);
        PRINTS[id](result);
      });
    }

    async function runBlock(block: DocBlock, id: string): Promise<RunResult> {
      if (block.lang === 'ts') return ts.run(id, server);
      if (block.lang === 'json') return { code: 0, stdout: (await runConfig(block, server)).join('\n'), stderr: '', cwd: ts.dir };
      return runShell(block, server);
    }
  });
});
