import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

// What each role's module graph loads when it is imported (bench/server-start measures the cost: the MCP SDK is
// about 0.2 s of start and 8 MB of heap, PGlite's JavaScript and BullMQ more). Packages a role uses only on some
// requests, or never, are required where they are first used, not imported: this reads the built graph's
// require.cache in a fresh process, so an import added anywhere in the graph fails here.
const ROOT = join(__dirname, '..', '..', '..');
const LAZY = ['@modelcontextprotocol/sdk', '@electric-sql/pglite', 'bullmq'] as const;

function packagesLoadedBy(...entries: string[]): Record<(typeof LAZY)[number], boolean> {
  const script = `
    for (const entry of ${JSON.stringify(entries.map((e) => join(ROOT, 'dist', 'src', e)))}) require(entry);
    const loaded = Object.keys(require.cache);
    const names = ${JSON.stringify(LAZY)};
    process.stdout.write(JSON.stringify(Object.fromEntries(names.map((n) => [n, loaded.some((k) => k.includes('/node_modules/' + n + '/'))]))));`;
  return JSON.parse(execFileSync(process.execPath, ['-e', script], { cwd: ROOT, encoding: 'utf8', env: { PATH: process.env.PATH ?? '' } })) as Record<
    (typeof LAZY)[number],
    boolean
  >;
}

describe('module graph of each role', () => {
  it.each(['api.module.js', 'worker.module.js', 'all-in-one.module.js'])('%s imports neither the MCP SDK, PGlite nor BullMQ', (entry) => {
    expect(packagesLoadedBy(entry)).toEqual({ '@modelcontextprotocol/sdk': false, '@electric-sql/pglite': false, bullmq: false });
  });

  it('the check sees a package once the module that uses it is required (the MCP server and client halves)', () => {
    expect(packagesLoadedBy('api.module.js', 'modules/mcp-server/mcp-session.js')['@modelcontextprotocol/sdk']).toBe(true);
    expect(packagesLoadedBy('worker.module.js', 'modules/mcp/mcp-connection.js')['@modelcontextprotocol/sdk']).toBe(true);
  });

  it("the embedded entry is the bundle (npm run build:bundle): main.js loads main.bundle.cjs, tsc's entry is kept beside it", () => {
    expect(readFileSync(join(ROOT, 'dist', 'src', 'main.js'), 'utf8')).toContain('require("./main.bundle.cjs")');
    expect(existsSync(join(ROOT, 'dist', 'src', 'main.unbundled.js'))).toBe(true);
  });
});
