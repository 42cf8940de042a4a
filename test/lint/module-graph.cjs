#!/usr/bin/env node
// @ts-check
/**
 * The reviewed module graph (docs/module-graph.json) as docs/architecture.md draws it: a diagram and the list of
 * arrows with their reasons, each between `<!-- module-graph:NAME -->` and `<!-- /module-graph:NAME -->`.
 * `node test/lint/module-graph.cjs --write` rewrites both in the doc; test/lint/module-graph.spec.ts fails when the
 * doc, the list or the code disagree; .dependency-cruiser.cjs forbids every arrow the list does not have.
 */
const { readFileSync, writeFileSync } = require('node:fs');
const { join } = require('node:path');

const root = join(__dirname, '../..');
const GRAPH_FILE = join(root, 'docs/module-graph.json');
const DOC_FILE = join(root, 'docs/architecture.md');

/** @typedef {{ edges: string[], modules: Record<string, { what: string, imports: Record<string, string> }> }} ModuleGraph */

/** @returns {ModuleGraph} */
const readGraph = () => JSON.parse(readFileSync(GRAPH_FILE, 'utf8'));

/** @param {ModuleGraph} graph @returns {[string, string][]} every reviewed arrow, [from, to], sorted */
const arrowsOf = (graph) =>
  Object.entries(graph.modules)
    .flatMap(([from, m]) => Object.keys(m.imports).map((to) => /** @type {[string, string]} */ ([from, to])))
    .sort((a, b) => a.join(' ').localeCompare(b.join(' ')));

/** Longest path from each module down to one that imports no module: importers are drawn above what they import. */
function depths(/** @type {ModuleGraph} */ graph) {
  /** @type {Map<string, number>} */
  const depth = new Map();
  const of = (/** @type {string} */ name, /** @type {string[]} */ path = []) => {
    if (path.includes(name)) throw new Error(`docs/module-graph.json has a cycle: ${[...path, name].join(' → ')}`);
    if (!depth.has(name)) {
      const targets = Object.keys(graph.modules[name]?.imports ?? {});
      depth.set(name, Math.max(-1, ...targets.map((t) => of(t, [...path, name]))) + 1);
    }
    return /** @type {number} */ (depth.get(name));
  };
  Object.keys(graph.modules).forEach((name) => of(name));
  return depth;
}

/** The diagram: one line per module, importers first; the composition root, core and libs around them. */
function diagram(/** @type {ModuleGraph} */ graph) {
  const depth = depths(graph);
  const label = (/** @type {string} */ name) => (graph.edges.includes(name) ? `${name} (edge)` : name);
  const names = Object.keys(graph.modules).sort((a, b) => /** @type {number} */ (depth.get(b)) - /** @type {number} */ (depth.get(a)) || a.localeCompare(b));
  const width = Math.max(...names.map((n) => label(n).length));
  const lines = names.map((name) => {
    const targets = Object.keys(graph.modules[name].imports).sort();
    return `${label(name).padEnd(width)} ──▶ ${targets.length ? targets.join(', ') : '(no other module)'}`;
  });
  const count = `${arrowsOf(graph).length} reviewed arrows between ${names.length} modules.`;
  return [
    count,
    '',
    '```text',
    'src/*.ts (composition root) ──▶ any module, edges included (nothing else imports an edge)',
    '',
    ...lines,
    '',
    'every module ──▶ core, libs/contracts        core ──▶ libs/contracts        core, libs ──▶ never a module',
    '```',
  ].join('\n');
}

/** The arrows with why, grouped by the importing module. */
function arrowList(/** @type {ModuleGraph} */ graph) {
  return Object.keys(graph.modules)
    .sort()
    .flatMap((name) => {
      const m = graph.modules[name];
      const edge = graph.edges.includes(name) ? ' (edge)' : '';
      const imports = Object.keys(m.imports).sort();
      return [
        `- **${name}**${edge} — ${m.what}.${imports.length ? '' : ' Imports no other module.'}`,
        ...imports.map((to) => `  - → \`${to}\`: ${m.imports[to]}.`),
      ];
    })
    .join('\n');
}

/** @param {ModuleGraph} graph @returns {Record<string, string>} */
const sections = (graph) => ({ diagram: diagram(graph), arrows: arrowList(graph) });

const marks = (/** @type {string} */ name) => [`<!-- module-graph:${name} -->`, `<!-- /module-graph:${name} -->`];

/** The text between a section's markers in `doc` (trimmed), or undefined when the markers are missing. */
function section(/** @type {string} */ doc, /** @type {string} */ name) {
  const [open, close] = marks(name);
  const start = doc.indexOf(open);
  const end = doc.indexOf(close);
  return start < 0 || end < start ? undefined : doc.slice(start + open.length, end).trim();
}

/** `doc` with every section rendered from `graph`. */
function withSections(/** @type {string} */ doc, /** @type {ModuleGraph} */ graph) {
  let out = doc;
  for (const [name, text] of Object.entries(sections(graph))) {
    const [open, close] = marks(name);
    if (section(out, name) === undefined) throw new Error(`${DOC_FILE} has no ${open} … ${close} section`);
    out = out.slice(0, out.indexOf(open) + open.length) + `\n${text}\n` + out.slice(out.indexOf(close));
  }
  return out;
}

module.exports = { GRAPH_FILE, DOC_FILE, readGraph, arrowsOf, sections, section, withSections };

if (require.main === module) {
  if (!process.argv.includes('--write')) {
    console.error('usage: node test/lint/module-graph.cjs --write   (redraws docs/architecture.md from docs/module-graph.json)');
    process.exit(2);
  }
  writeFileSync(DOC_FILE, withSections(readFileSync(DOC_FILE, 'utf8'), readGraph()));
  console.log(`${DOC_FILE}: module graph redrawn (${arrowsOf(readGraph()).length} arrows)`);
}
