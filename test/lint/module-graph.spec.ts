import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

const root = resolve(__dirname, '../..');

interface ModuleGraph {
  edges: string[];
  modules: Record<string, { what: string; imports: Record<string, string> }>;
}
// eslint-disable-next-line @typescript-eslint/no-require-imports
const graphTools = require('./module-graph.cjs') as {
  DOC_FILE: string;
  readGraph(): ModuleGraph;
  arrowsOf(graph: ModuleGraph): [string, string][];
  sections(graph: ModuleGraph): Record<string, string>;
  section(doc: string, name: string): string | undefined;
};

/** The arrows between modules the code has today, as dependency-cruiser sees them (tests aside), [from, to], sorted. */
function measuredArrows(): [string, string][] {
  const run = spawnSync(
    process.execPath,
    [
      join(root, 'node_modules/dependency-cruiser/bin/dependency-cruise.mjs'),
      'src',
      '--config',
      join(root, '.dependency-cruiser.cjs'),
      '--output-type',
      'json',
    ],
    { cwd: root, encoding: 'utf8', maxBuffer: 256 * 1024 * 1024 },
  );
  if (run.status !== 0) throw new Error(`dependency-cruiser failed (${run.status}): ${run.stderr}`);
  const cruised = JSON.parse(run.stdout) as { modules: { source: string; dependencies: { resolved: string }[] }[] };
  const moduleOf = (path: string) => /^src\/modules\/([^/]+)\//.exec(path)?.[1];
  const arrows = new Set<string>();
  for (const file of cruised.modules) {
    const from = moduleOf(file.source);
    if (!from || /\.(spec|int-spec|e2e-spec)\.ts$/.test(file.source)) continue;
    for (const dep of file.dependencies) {
      const to = moduleOf(dep.resolved);
      if (to && to !== from) arrows.add(`${from} ${to}`);
    }
  }
  return [...arrows].sort().map((a) => a.split(' ') as [string, string]);
}

describe('the module graph: docs/module-graph.json, docs/architecture.md and the code agree', () => {
  const graph = graphTools.readGraph();

  it('lists every module folder once, each arrow between two listed modules with a reason, and no cycle', () => {
    const folders = readdirSync(join(root, 'src/modules'), { withFileTypes: true })
      .filter((d) => d.isDirectory())
      .map((d) => d.name)
      .sort();
    expect(Object.keys(graph.modules).sort()).toEqual(folders);
    expect(graph.edges.filter((e) => !folders.includes(e))).toEqual([]);
    for (const [from, to] of graphTools.arrowsOf(graph)) {
      expect([from, to, folders.includes(to) && to !== from]).toEqual([from, to, true]);
      expect([from, to, graph.modules[from].imports[to].trim().length > 10]).toEqual([from, to, true]);
    }
    expect(() => graphTools.sections(graph)).not.toThrow();
  });

  it('docs/architecture.md draws exactly the listed arrows (redraw: node test/lint/module-graph.cjs --write)', () => {
    const doc = readFileSync(graphTools.DOC_FILE, 'utf8');
    for (const [name, text] of Object.entries(graphTools.sections(graph))) expect(graphTools.section(doc, name)).toBe(text);
  });

  it('the code has exactly the listed arrows: none unreviewed, none listed that no code uses', () => {
    expect(measuredArrows()).toEqual(graphTools.arrowsOf(graph));
  });
});
