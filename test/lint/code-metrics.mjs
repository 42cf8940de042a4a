#!/usr/bin/env node
// Counts issue 28's "done when" asks for, read from the source with the TypeScript compiler: lines per module,
// files over 400 lines, functions over 80 lines, classes with more than 8 constructor dependencies, swallowed errors
// (`.catch(() => undefined)` and empty `catch` blocks), comments citing documents outside the repository, and module
// arrows in the reviewed allow-list. `node test/lint/code-metrics.mjs [--json]`.
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import ts from 'typescript';

const root = new URL('../..', import.meta.url).pathname;
const walk = (dir) =>
  readdirSync(dir).flatMap((name) => {
    const p = join(dir, name);
    if (name === 'generated' || name === 'node_modules') return [];
    return statSync(p).isDirectory() ? walk(p) : p.endsWith('.ts') && !p.endsWith('.spec.ts') ? [p] : [];
  });

const files = [...walk(join(root, 'src')), ...walk(join(root, 'libs'))];
const out = {
  lines: 0,
  modules: {},
  filesOver400: [],
  functionsOver80: [],
  classesOver8Deps: [],
  swallowedCatchUndefined: 0,
  emptyCatchBlocks: 0,
  outsideDocCitations: 0,
  outsideDocCitationSites: [],
};
const outside = /\b(DESIGN(\.md)?|STYLE(\.md)?|[Ss]eeds?|[Ii]ssues? \d+)\b/;

for (const file of files) {
  const text = readFileSync(file, 'utf8');
  const rel = relative(root, file);
  const lines = text.split('\n').length;
  out.lines += lines;
  const mod = rel.match(/^src\/modules\/([^/]+)/)?.[1] ?? rel.split('/').slice(0, 2).join('/');
  out.modules[mod] = (out.modules[mod] ?? 0) + lines;
  if (lines > 400) out.filesOver400.push(`${rel} (${lines})`);
  out.swallowedCatchUndefined += (text.match(/\.catch\(\(\) => undefined\)/g) ?? []).length;
  const sf = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const lineOf = (pos) => sf.getLineAndCharacterOfPosition(pos).line + 1;
  for (const [start, end] of commentRanges(sf)) {
    if (!outside.test(text.slice(start, end))) continue;
    out.outsideDocCitations++;
    out.outsideDocCitationSites.push(`${rel}:${lineOf(start)}`);
  }
  const visit = (node) => {
    if (ts.isCatchClause(node) && node.block.statements.length === 0) {
      const inner = text.slice(node.block.getStart(sf) + 1, node.block.getEnd() - 1);
      if (!/\/[/*]/.test(inner)) out.emptyCatchBlocks++;
    }
    if (ts.isFunctionLike(node) && node.body && ts.isBlock(node.body)) {
      const n = lineOf(node.body.getEnd()) - lineOf(node.getStart(sf)) + 1;
      if (n > 80) out.functionsOver80.push(`${rel}:${lineOf(node.getStart(sf))} (${n})`);
    }
    if (ts.isConstructorDeclaration(node) && node.parameters.length > 8) {
      const cls = node.parent.name?.text ?? '?';
      out.classesOver8Deps.push(`${rel} ${cls} (${node.parameters.length})`);
    }
    ts.forEachChild(node, visit);
  };
  visit(sf);
}

/** Every comment of a file, found from the syntax tree (a bare scanner mistakes a regex literal's quote for a string). */
function commentRanges(sf) {
  const seen = new Map();
  const text = sf.getFullText();
  const add = (list) => {
    for (const r of list ?? []) seen.set(r.pos, [r.pos, r.end]);
  };
  const visit = (node) => {
    add(ts.getLeadingCommentRanges(text, node.getFullStart()));
    add(ts.getTrailingCommentRanges(text, node.getEnd()));
    for (const c of node.getChildren(sf)) visit(c);
  };
  visit(sf);
  return [...seen.values()];
}

const graph = JSON.parse(readFileSync(join(root, 'docs/module-graph.json'), 'utf8'));
const arrows = Object.values(graph.modules).reduce((n, m) => n + Object.keys(m.imports ?? {}).length, 0);
const summary = {
  lines: out.lines,
  moduleArrows: arrows,
  agentChatLines: out.modules['agent-chat'] ?? 0,
  filesOver400: out.filesOver400.length,
  functionsOver80: out.functionsOver80.length,
  classesOver8Deps: out.classesOver8Deps.length,
  swallowedCatchUndefined: out.swallowedCatchUndefined,
  emptyCatchBlocks: out.emptyCatchBlocks,
  outsideDocCitations: out.outsideDocCitations,
};
if (process.argv.includes('--json')) console.log(JSON.stringify({ summary, ...out }, null, 2));
else {
  console.table(summary);
  for (const k of ['filesOver400', 'functionsOver80', 'classesOver8Deps']) if (out[k].length) console.log(`${k}:\n  ${out[k].join('\n  ')}`);
}
