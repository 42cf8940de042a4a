import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import ts from 'typescript';

const root = resolve(__dirname, '../..');

/** Where every swallowed error is accounted for. */
const SCANNED = ['src', 'libs'];
/** Cleaned on their own branches: drop each from here once its branch is merged. */
const NOT_YET: string[] = [];

/**
 * The sites in one file that drop an error without a word: a `.catch(() => undefined)` (or `=> null`, `=> {}`) with
 * no comment on its line or the line before, and a `catch {}` clause with neither a statement nor a comment. A swallowed
 * error either goes to `ignoreFailure(what, why)` / a logger, or a comment says why nothing can be done.
 */
function uncommentedSwallows(fileName: string, text: string): number[] {
  const sf = ts.createSourceFile(fileName, text, ts.ScriptTarget.Latest, true);
  const lines = text.split('\n');
  const lineOf = (pos: number) => sf.getLineAndCharacterOfPosition(pos).line;
  const commented = (line: number) => [lines[line], lines[line - 1] ?? ''].some((l) => /\/\/|\/\*|\*\//.test(l));
  const found: number[] = [];
  const visit = (node: ts.Node) => {
    if (ts.isCallExpression(node) && ts.isPropertyAccessExpression(node.expression) && node.expression.name.text === 'catch' && node.arguments.length === 1) {
      const handler = node.arguments[0];
      if (ts.isArrowFunction(handler) && handler.parameters.length === 0 && nothing(handler.body)) {
        const line = lineOf(node.expression.name.getStart(sf));
        if (!commented(line)) found.push(line + 1);
      }
    }
    if (ts.isCatchClause(node) && node.block.statements.length === 0) {
      const inner = text.slice(node.block.getStart(sf) + 1, node.block.getEnd() - 1);
      if (!/\/[/*]/.test(inner)) found.push(lineOf(node.getStart(sf)) + 1);
    }
    ts.forEachChild(node, visit);
  };
  visit(sf);
  return found;
}

/** `undefined`, `null` or `{}`: a handler that turns the error into nothing. */
function nothing(body: ts.ConciseBody): boolean {
  if (ts.isBlock(body)) return body.statements.length === 0;
  return (ts.isIdentifier(body) && body.text === 'undefined') || body.kind === ts.SyntaxKind.NullKeyword;
}

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const p = join(dir, name);
    if (name === 'node_modules' || name === 'generated' || NOT_YET.some((d) => p === join(root, d))) return [];
    if (statSync(p).isDirectory()) return sources(p);
    return p.endsWith('.ts') && !p.endsWith('.spec.ts') ? [p] : [];
  });
}

describe('swallowed errors say why', () => {
  it('finds an uncommented swallow and accepts a commented or logged one', () => {
    const text = [
      'async function f(p: Promise<void>) {',
      '  await p.catch(() => undefined);',
      '  // The process is exiting: nothing is left to tell.',
      '  await p.catch(() => undefined);',
      '  await p.catch(ignoreFailure("x", "y"));',
      '  const v = await p',
      '    .then(() => 1)',
      '    .catch(() => null);',
      '  p.catch(() => {});',
      '  try { await p; } catch {}',
      '  try { await p; } catch {',
      '    // already reported',
      '  }',
      '  return v;',
      '}',
    ].join('\n');
    expect(uncommentedSwallows('sample.ts', text)).toEqual([2, 8, 9, 10]);
  });

  it(`every .catch(() => undefined) and empty catch in ${SCANNED.join(', ')} (but ${NOT_YET.join(', ')}) logs or has a comment`, () => {
    const files = SCANNED.flatMap((d) => sources(join(root, d)));
    expect(files.length).toBeGreaterThan(100);
    const sites = files.flatMap((file) => uncommentedSwallows(file, readFileSync(file, 'utf8')).map((line) => `${relative(root, file)}:${line}`));
    expect(sites).toEqual([]);
  });
});
