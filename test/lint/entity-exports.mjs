#!/usr/bin/env node
// @ts-check
/**
 * No entity type crosses a module (docs/style.md rule 14, docs/design.md §5), read from the types: dependency-cruiser sees imports,
 * not what a type alias stands for. For each module's public face (src/modules/<name>/index.ts), every exported
 * symbol is resolved through aliases; it fails when an export is an *.entity.ts class (directly or as a type alias
 * such as `type ApprovalRecord = TaskApprovalEntity`), or when an exported class's public method takes or returns one.
 * Run by `npm run lint`; exits 1 naming each crossing. `--root DIR` checks another tree (the boundary tests use it).
 */
import { existsSync, readdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import ts from 'typescript';

const argRoot = process.argv.indexOf('--root');
const root = resolve(argRoot > 0 ? process.argv[argRoot + 1] : '.');
const modulesDir = join(root, 'src/modules');
const indexes = existsSync(modulesDir)
  ? readdirSync(modulesDir)
      .map((m) => join(modulesDir, m, 'index.ts'))
      .filter((f) => existsSync(f))
  : [];

const config = ts.readConfigFile(join(root, 'tsconfig.json'), ts.sys.readFile);
const parsed = ts.parseJsonConfigFileContent(config.config ?? {}, ts.sys, root);
const program = ts.createProgram(indexes, { ...parsed.options, noEmit: true });
const checker = program.getTypeChecker();

const isEntityDecl = (d) => d.getSourceFile().fileName.endsWith('.entity.ts') && ts.isClassDeclaration(d);
const entityNameOf = (type, seen = new Set()) => {
  if (!type || seen.has(type)) return undefined;
  seen.add(type);
  for (const sym of [type.aliasSymbol, type.getSymbol()]) {
    if (sym?.declarations?.some(isEntityDecl)) return sym.getName();
  }
  const parts = [...(type.isUnionOrIntersection() ? type.types : []), ...(type.aliasTypeArguments ?? []), ...(checker.getTypeArguments?.(type) ?? [])];
  if (checker.isArrayType(type)) parts.push(checker.getTypeArguments(type)[0]);
  for (const p of parts) {
    const n = entityNameOf(p, seen);
    if (n) return n;
  }
  return undefined;
};

const problems = [];
for (const file of indexes) {
  const sf = program.getSourceFile(file);
  const moduleSym = sf && checker.getSymbolAtLocation(sf);
  if (!moduleSym) continue;
  const mod = file.split('/').at(-2);
  for (const exp of checker.getExportsOfModule(moduleSym)) {
    const sym = exp.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(exp) : exp;
    const decls = sym.declarations ?? [];
    if (decls.some(isEntityDecl)) {
      problems.push(`${mod}: exports the entity ${sym.getName()}`);
      continue;
    }
    const alias = decls.find(ts.isTypeAliasDeclaration);
    if (alias) {
      const n = entityNameOf(checker.getTypeAtLocation(alias.type));
      if (n) problems.push(`${mod}: type ${exp.getName()} stands for the entity ${n}`);
      continue;
    }
    const cls = decls.find(ts.isClassDeclaration);
    if (!cls) continue;
    for (const member of cls.members) {
      if (!ts.isMethodDeclaration(member) && !ts.isPropertyDeclaration(member)) continue;
      const mods = ts.getCombinedModifierFlags(member);
      if (mods & (ts.ModifierFlags.Private | ts.ModifierFlags.Protected) || member.name.kind === ts.SyntaxKind.PrivateIdentifier) continue;
      const name = member.name.getText();
      const sig = ts.isMethodDeclaration(member) ? checker.getSignatureFromDeclaration(member) : undefined;
      const types = sig
        ? [checker.getReturnTypeOfSignature(sig), ...sig.parameters.map((p) => checker.getTypeOfSymbolAtLocation(p, member))]
        : [checker.getTypeAtLocation(member)];
      for (const t of types) {
        const awaited = checker.getAwaitedType(t) ?? t;
        const n = entityNameOf(awaited) ?? entityNameOf(t);
        if (n) {
          problems.push(`${mod}: ${sym.getName()}.${name} takes or returns the entity ${n}`);
          break;
        }
      }
    }
  }
}
if (problems.length) {
  console.error(`Entity types cross a module boundary (STYLE rule 14): give other modules a plain type instead.\n  ${problems.join('\n  ')}`);
  process.exit(1);
}
console.log(`entity-exports: ${indexes.length} module faces, no entity crosses a module`);
