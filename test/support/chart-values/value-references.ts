// Which values a chart's templates reference, found by walking the parsed templates with symbolic values
// instead of real ones: `.Values.a.b`, variables holding values (`$api := .Values.api` then `$api.port`),
// the dot of `with` and `range` (list elements are `[]`), `index` with literal keys, `hasKey` with a literal
// key, dicts and lists built in the template (`dict "values" $api`, `append $targets (dict ...)`), and the
// dot of every helper an `include` with a literal name calls, analysed with the argument it is given.
// The chart's resolved worker pools (`(include "hecate.workerPools" .) | fromJson).pools`) are elements
// whose fields are the `worker.*` values (`name` is the pool's own, `component` is computed).
//
// Limits: a key chosen at render time (`index $m $key`, `range $k, $v` over a structured map, an include
// whose name is computed) is not followed; `toJson`, `set`, `deepCopy` and `omit` hand values over
// rather than use them; every branch of an `if` is walked, so a variable reassigned in a branch keeps
// the last assignment seen.
import { readFileSync, readdirSync } from 'node:fs';
import * as path from 'node:path';
import { parseTemplate, type Command, type Node, type Operand, type Pipeline } from './go-template';

type Sym =
  | { kind: 'root' }
  | { kind: 'values'; path: string[] }
  | { kind: 'pool' }
  | { kind: 'dict'; entries: Map<string, Sym> }
  | { kind: 'list'; items: Sym[] }
  | { kind: 'union'; options: Sym[] }
  | { kind: 'include'; name: string }
  | { kind: 'literal'; value: unknown }
  | { kind: 'unknown' };

const UNKNOWN: Sym = { kind: 'unknown' };
const POOLS_HELPER = 'hecate.workerPools';

export interface ValueReference {
  path: string;
  /** The template file whose rendering reaches the reference. */
  file: string;
}

export interface ValueReferences {
  /** Every values path read (each step of a chain), e.g. `api.autoscaling.enabled`, `api.ingress.hosts.[].host`. */
  references: ValueReference[];
  /** Paths whose whole value is used (printed, passed to toYaml / quote / …): their descendants count as used. */
  wholeUses: Set<string>;
}

type Scope = Array<{ name: string; value: Sym }>;

export function findValueReferences(files: Map<string, Node[]>, defines: Map<string, Node[]>): ValueReferences {
  const references: ValueReference[] = [];
  const wholeUses = new Set<string>();
  let file = '';
  const analysed = new Set<string>();

  const record = (path: string[]): void => {
    references.push({ path: path.join('.'), file });
  };

  const useWhole = (sym: Sym): void => {
    switch (sym.kind) {
      case 'values':
        wholeUses.add(sym.path.join('.'));
        break;
      case 'pool':
        wholeUses.add('worker');
        break;
      case 'dict':
        sym.entries.forEach(useWhole);
        break;
      case 'list':
        sym.items.forEach(useWhole);
        break;
      case 'union':
        sym.options.forEach(useWhole);
        break;
      default:
        break;
    }
  };

  const field = (sym: Sym, name: string): Sym => {
    switch (sym.kind) {
      case 'root':
        return name === 'Values' ? { kind: 'values', path: [] } : UNKNOWN;
      case 'values': {
        const path = [...sym.path, name];
        record(path);
        return { kind: 'values', path };
      }
      case 'pool':
        if (name === 'component') return UNKNOWN;
        return field({ kind: 'values', path: name === 'name' ? ['worker', 'pools', '[]'] : ['worker'] }, name);
      case 'dict':
        return sym.entries.get(name) ?? UNKNOWN;
      case 'union':
        return union(sym.options.map((option) => field(option, name)));
      default:
        return UNKNOWN;
    }
  };

  const chain = (sym: Sym, names: string[]): Sym => names.reduce(field, sym);

  const elements = (sym: Sym): Sym[] => {
    switch (sym.kind) {
      case 'values': {
        const path = [...sym.path, '[]'];
        record(path);
        return [{ kind: 'values', path }];
      }
      case 'list':
        return sym.items;
      case 'union':
        return sym.options.flatMap(elements);
      default:
        return [UNKNOWN];
    }
  };

  const call = (name: string, args: Sym[]): Sym => {
    const literal = (sym: Sym | undefined): string | undefined => (sym?.kind === 'literal' ? String(sym.value) : undefined);
    switch (name) {
      case 'include': {
        const helper = literal(args[0]);
        if (helper !== undefined) analyseDefine(helper, args[1] ?? UNKNOWN);
        return helper === undefined ? UNKNOWN : { kind: 'include', name: helper };
      }
      case 'fromJson':
        return args[0]?.kind === 'include' && args[0].name === POOLS_HELPER
          ? { kind: 'dict', entries: new Map([['pools', { kind: 'list', items: [{ kind: 'pool' }] }]]) }
          : UNKNOWN;
      case 'deepCopy':
      case 'omit':
      case 'pick':
        return args[0] ?? UNKNOWN;
      case 'toJson':
      case 'set':
        return UNKNOWN;
      case 'default':
        return union(args);
      case 'ternary':
        useWhole(args[2] ?? UNKNOWN);
        return union(args.slice(0, 2));
      case 'required':
        return args[1] ?? UNKNOWN;
      case 'dict': {
        const entries = new Map<string, Sym>();
        for (let i = 0; i + 1 < args.length; i += 2) {
          const key = literal(args[i]);
          if (key !== undefined) entries.set(key, args[i + 1]);
          else useWhole(args[i + 1]);
        }
        return { kind: 'dict', entries };
      }
      case 'list':
        return { kind: 'list', items: args };
      case 'append':
        return { kind: 'list', items: [...elements(args[0] ?? UNKNOWN), args[1] ?? UNKNOWN] };
      case 'index': {
        const keys = args.slice(1).map(literal);
        if (keys.some((key) => key === undefined)) return UNKNOWN;
        return chain(args[0] ?? UNKNOWN, keys as string[]);
      }
      case 'hasKey': {
        const key = literal(args[1]);
        if (key !== undefined) field(args[0] ?? UNKNOWN, key);
        return UNKNOWN;
      }
      default:
        args.forEach(useWhole);
        return UNKNOWN;
    }
  };

  const operand = (op: Operand, dot: Sym, scope: Scope): Sym => {
    switch (op.kind) {
      case 'string':
      case 'number':
      case 'bool':
        return { kind: 'literal', value: op.value };
      case 'nil':
        return UNKNOWN;
      case 'dot':
        return chain(dot, op.chain);
      case 'variable':
        return chain(lookup(scope, op.name), op.chain);
      case 'pipeline':
        return chain(pipeline(op.pipeline, dot, scope), op.chain);
      case 'function':
        return call(op.name, []);
    }
  };

  const command = (cmd: Command, dot: Sym, scope: Scope, piped: Sym[]): Sym => {
    const [head, ...rest] = cmd.operands;
    if (head.kind !== 'function') return operand(head, dot, scope);
    return call(head.name, [...rest.map((op) => operand(op, dot, scope)), ...piped]);
  };

  const pipeline = (pipe: Pipeline, dot: Sym, scope: Scope): Sym => {
    let value: Sym = UNKNOWN;
    pipe.commands.forEach((cmd, i) => {
      value = command(cmd, dot, scope, i === 0 ? [] : [value]);
    });
    if (pipe.assign === 'declare') for (const name of pipe.variables) scope.push({ name, value });
    if (pipe.assign === 'assign') {
      for (const name of pipe.variables) {
        const slot = [...scope].reverse().find((entry) => entry.name === name);
        if (slot) slot.value = value;
      }
    }
    return value;
  };

  const walk = (nodes: Node[], dot: Sym, scope: Scope): void => {
    for (const node of nodes) {
      const mark = scope.length;
      switch (node.kind) {
        case 'text':
          break;
        case 'action': {
          const value = pipeline(node.pipeline, dot, scope);
          if (!node.pipeline.assign) useWhole(value);
          continue;
        }
        case 'if':
          for (const branch of node.branches) {
            pipeline(branch.condition, dot, scope);
            walk(branch.body, dot, scope);
          }
          walk(node.otherwise, dot, scope);
          break;
        case 'with': {
          const value = pipeline(node.pipeline, dot, scope);
          walk(node.body, value, scope);
          walk(node.otherwise, dot, scope);
          break;
        }
        case 'range': {
          const target = pipeline({ ...node.pipeline, variables: [], assign: null }, dot, scope);
          for (const element of elements(target)) {
            const iteration = scope.length;
            const names = node.pipeline.variables;
            if (names.length === 1) scope.push({ name: names[0], value: element });
            if (names.length === 2) scope.push({ name: names[0], value: UNKNOWN }, { name: names[1], value: element });
            walk(node.body, element, scope);
            scope.length = iteration;
          }
          walk(node.otherwise, dot, scope);
          break;
        }
      }
      scope.length = mark;
    }
  };

  const analyseDefine = (name: string, argument: Sym): void => {
    const body = defines.get(name);
    const key = `${name}\u0000${describe(argument)}`;
    if (!body || analysed.has(key)) return;
    analysed.add(key);
    walk(body, argument, [{ name: '$', value: argument }]);
  };

  for (const [name, body] of files) {
    if (name.startsWith('_')) continue;
    file = name;
    const root: Sym = { kind: 'root' };
    walk(body, root, [{ name: '$', value: root }]);
  }
  return { references, wholeUses };
}

function lookup(scope: Scope, name: string): Sym {
  return [...scope].reverse().find((entry) => entry.name === name)?.value ?? UNKNOWN;
}

function union(options: Sym[]): Sym {
  const known = options.filter((option) => option.kind !== 'unknown' && option.kind !== 'literal');
  if (known.length === 0) return UNKNOWN;
  return known.length === 1 ? known[0] : { kind: 'union', options: known };
}

function describe(sym: Sym): string {
  switch (sym.kind) {
    case 'values':
      return `values:${sym.path.join('.')}`;
    case 'dict':
      return `{${[...sym.entries].map(([key, value]) => `${key}=${describe(value)}`).join(',')}}`;
    case 'list':
    case 'union':
      return `[${(sym.kind === 'list' ? sym.items : sym.options).map(describe).join(',')}]`;
    default:
      return sym.kind;
  }
}

/** Parses every file of the chart's templates/ and finds the values they reference. */
export function findChartValueReferences(chartDir: string): ValueReferences {
  const templatesDir = path.join(chartDir, 'templates');
  const files = new Map<string, Node[]>();
  const defines = new Map<string, Node[]>();
  for (const file of readdirSync(templatesDir).sort()) {
    const parsed = parseTemplate(readFileSync(path.join(templatesDir, file), 'utf8'), file);
    files.set(file, parsed.body);
    for (const [name, body] of parsed.defines) defines.set(name, body);
  }
  return findValueReferences(files, defines);
}
