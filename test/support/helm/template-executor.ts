// Executes templates parsed by go-template.ts the way Helm does: text/template semantics (truthiness,
// range over sorted map keys, `$`, variable scopes, missing map keys read as nil, a field of nil is an
// error) and the Sprig / Helm functions this chart uses. Go's number types are kept apart: YAML and
// JSON numbers are float64 (JS number), template literals and integer functions give int (JS bigint),
// so `printf "%d"` on a float and a comparison of an int with a float fail or misprint as under Helm.
// An unknown function is an error: add it here when a template starts using it.
import { createHash } from 'node:crypto';
import { dump, load } from 'js-yaml';
import { parseTemplate, type Command, type Node, type Operand, type Pipeline } from './go-template';

export type GoValue = unknown;
type Scope = Array<{ name: string; value: GoValue }>;
type GoFunction = (args: GoValue[], context: CallContext) => GoValue;

interface CallContext {
  include(name: string, data: GoValue): string;
  tpl(text: string, data: GoValue): string;
}

export class TemplateError extends Error {}

/** Methods of a Go object a template may call (`.Files.Get "x"`, `.Capabilities.APIVersions.Has "v1"`). */
export const METHODS = Symbol('go methods');
type Methods = Record<string, (...args: GoValue[]) => GoValue>;

/** An object whose own keys are its fields (ranged over like a map) and that has Go methods. */
export function withMethods<T extends object>(fields: T, methods: Methods): T {
  return Object.defineProperty(fields, METHODS, { value: methods, enumerable: false });
}

function methodOf(receiver: GoValue, name: string): ((...args: GoValue[]) => GoValue) | undefined {
  const methods = isMap(receiver) ? (receiver as { [METHODS]?: Methods })[METHODS] : undefined;
  return methods && Object.hasOwn(methods, name) ? methods[name] : undefined;
}

const isMap = (value: GoValue): value is Record<string, GoValue> => typeof value === 'object' && value !== null && !Array.isArray(value);

export function truth(value: GoValue): boolean {
  if (value === null || value === undefined) return false;
  if (typeof value === 'boolean') return value;
  if (typeof value === 'number') return value !== 0;
  if (typeof value === 'bigint') return value !== 0n;
  if (typeof value === 'string' || Array.isArray(value)) return value.length > 0;
  if (isMap(value)) return Object.keys(value).length > 0;
  return true;
}

/** Go's %v of a float64: shortest digits, exponent form from 1e+06 up (Helm's well-known `1e+06`). */
function formatFloat(value: number): string {
  if (!Number.isFinite(value)) return value > 0 ? '+Inf' : value < 0 ? '-Inf' : 'NaN';
  const exponent = value === 0 ? 0 : Math.floor(Math.log10(Math.abs(value)));
  if (exponent < -4 || exponent >= 21 || (exponent >= 6 && Number.isInteger(value))) {
    const [mantissa, power] = value.toExponential().split('e');
    const sign = power.startsWith('-') ? '-' : '+';
    return `${mantissa}e${sign}${power.replace(/^[-+]/, '').padStart(2, '0')}`;
  }
  return String(value);
}

/** fmt's %v. */
export function formatValue(value: GoValue): string {
  if (value === null || value === undefined) return '<nil>';
  if (typeof value === 'number') return formatFloat(value);
  if (typeof value === 'string' || typeof value === 'bigint' || typeof value === 'boolean') return String(value);
  if (Array.isArray(value)) return `[${value.map(formatValue).join(' ')}]`;
  if (isMap(value)) {
    const keys = Object.keys(value).sort();
    return `map[${keys.map((key) => `${key}:${formatValue(value[key])}`).join(' ')}]`;
  }
  return String(value);
}

/** What an action prints: nil is `<no value>` (Helm removes it from the rendered file). */
function printValue(value: GoValue): string {
  return value === null || value === undefined ? '<no value>' : formatValue(value);
}

function goKind(value: GoValue): string {
  if (value === null || value === undefined) return '<nil>';
  if (typeof value === 'bigint') return 'int64';
  if (typeof value === 'number') return 'float64';
  if (typeof value === 'string') return 'string';
  if (typeof value === 'boolean') return 'bool';
  return Array.isArray(value) ? '[]interface {}' : 'map[string]interface {}';
}

/** strconv.Quote for the strings charts print (JSON escaping matches it for printable text). */
const goQuote = (text: string): string => JSON.stringify(text);

function sprintf(format: string, args: GoValue[]): string {
  let index = 0;
  return format.replace(/%([%sdqv])/g, (_match, verb: string) => {
    if (verb === '%') return '%';
    const value = args[index++];
    const bad = (): string => `%!${verb}(${goKind(value)}=${formatValue(value)})`;
    switch (verb) {
      case 's':
        return typeof value === 'string' ? value : bad();
      case 'd':
        return typeof value === 'bigint' ? value.toString() : bad();
      case 'q':
        return typeof value === 'string' ? goQuote(value) : bad();
      default:
        return formatValue(value);
    }
  });
}

/** Sprig's strval: strings as they are, everything else through %v. */
const strval = (value: GoValue): string => (typeof value === 'string' ? value : formatValue(value));

/** Sprig's toInt64 (spf13/cast): floats truncate, numeric strings parse, anything else is 0. */
function toInt(value: GoValue): bigint {
  if (typeof value === 'bigint') return value;
  if (typeof value === 'number') return BigInt(Math.trunc(value));
  if (typeof value === 'boolean') return value ? 1n : 0n;
  if (typeof value === 'string' && /^-?[0-9]+$/.test(value.trim())) return BigInt(value.trim());
  return 0n;
}

function toPlain(value: GoValue): GoValue {
  if (typeof value === 'bigint') return Number(value);
  if (Array.isArray(value)) return value.map(toPlain);
  if (isMap(value)) return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, toPlain(item)]));
  return value;
}

function compare(a: GoValue, b: GoValue, op: string): number {
  const kindA = goKind(a);
  const kindB = goKind(b);
  if (kindA !== kindB) throw new TemplateError(`${op}: incompatible types for comparison (${kindA} and ${kindB})`);
  if (typeof a === 'string' || typeof a === 'number' || typeof a === 'bigint') {
    const left = a as string | number | bigint;
    const right = b as string | number | bigint;
    return left < right ? -1 : left > right ? 1 : 0;
  }
  if (typeof a === 'boolean' && (op === 'eq' || op === 'ne')) return a === b ? 0 : 1;
  throw new TemplateError(`${op}: invalid type for comparison (${kindA})`);
}

function equal(a: GoValue, b: GoValue): boolean {
  if (a === null || a === undefined || b === null || b === undefined) return (a ?? null) === (b ?? null);
  return compare(a, b, 'eq') === 0;
}

function deepCopy(value: GoValue): GoValue {
  if (Array.isArray(value)) return value.map(deepCopy);
  if (isMap(value)) return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, deepCopy(item)]));
  return value;
}

function asMap(value: GoValue, fn: string): Record<string, GoValue> {
  if (!isMap(value)) throw new TemplateError(`${fn}: expected a map, got ${goKind(value)}`);
  return value;
}

function asList(value: GoValue, fn: string): GoValue[] {
  if (value === null || value === undefined) return [];
  if (!Array.isArray(value)) throw new TemplateError(`${fn}: expected a list, got ${goKind(value)}`);
  return value;
}

const indent = (spaces: GoValue, text: GoValue): string => {
  const pad = ' '.repeat(Number(toInt(spaces)));
  return pad + strval(text).replace(/\n/g, `\n${pad}`);
};

const functions: Record<string, GoFunction> = {
  // text/template built-ins (and, or are evaluated lazily by the executor)
  not: ([value]) => !truth(value),
  eq: ([first, ...others]) => others.some((other) => equal(first, other)),
  ne: ([a, b]) => !equal(a, b),
  lt: ([a, b]) => compare(a, b, 'lt') < 0,
  le: ([a, b]) => compare(a, b, 'le') <= 0,
  gt: ([a, b]) => compare(a, b, 'gt') > 0,
  ge: ([a, b]) => compare(a, b, 'ge') >= 0,
  len: ([value]) => {
    if (typeof value === 'string' || Array.isArray(value)) return BigInt(value.length);
    if (isMap(value)) return BigInt(Object.keys(value).length);
    throw new TemplateError(`len of ${goKind(value)}`);
  },
  index: ([item, ...keys]) => {
    let current = item;
    for (const key of keys) {
      if (Array.isArray(current)) {
        const at = Number(toInt(key));
        if (at < 0 || at >= current.length) throw new TemplateError(`index out of range: ${at}`);
        current = current[at];
      } else if (isMap(current)) {
        current = current[strval(key)];
      } else {
        throw new TemplateError(`can't index item of type ${goKind(current)}`);
      }
    }
    return current;
  },
  print: (args) => args.map((arg, i) => (i > 0 && typeof arg !== 'string' && typeof args[i - 1] !== 'string' ? ' ' : '') + strval(arg)).join(''),
  printf: ([format, ...args]) => sprintf(strval(format), args),
  // Sprig
  default: ([fallback, given]) => (truth(given) ? given : fallback),
  empty: ([value]) => !truth(value),
  required: ([message, value]) => {
    if (value === null || value === undefined || value === '') throw new TemplateError(strval(message));
    return value;
  },
  fail: ([message]) => {
    throw new TemplateError(strval(message));
  },
  ternary: ([whenTrue, whenFalse, condition]) => (condition === true ? whenTrue : whenFalse),
  toString: ([value]: GoValue[]) => strval(value),
  quote: (args) =>
    args
      .filter((arg) => arg !== null && arg !== undefined)
      .map((arg) => goQuote(strval(arg)))
      .join(' '),
  squote: (args) =>
    args
      .filter((arg) => arg !== null && arg !== undefined)
      .map((arg) => `'${strval(arg)}'`)
      .join(' '),
  int: ([value]) => toInt(value),
  int64: ([value]) => toInt(value),
  add: (args) => args.reduce<bigint>((sum, arg) => sum + toInt(arg), 0n),
  add1: ([value]) => toInt(value) + 1n,
  sub: ([a, b]) => toInt(a) - toInt(b),
  mul: (args) => args.reduce<bigint>((product, arg) => product * toInt(arg), 1n),
  div: ([a, b]) => toInt(a) / toInt(b),
  mod: ([a, b]) => toInt(a) % toInt(b),
  max: (args) => args.map(toInt).reduce((a, b) => (b > a ? b : a)),
  min: (args) => args.map(toInt).reduce((a, b) => (b < a ? b : a)),
  trunc: ([count, text]) => {
    const s = strval(text);
    const n = Number(toInt(count));
    if (n < 0) return s.length + n > 0 ? s.slice(s.length + n) : s;
    return s.length > n ? s.slice(0, n) : s;
  },
  trimSuffix: ([suffix, text]) => (strval(text).endsWith(strval(suffix)) ? strval(text).slice(0, -strval(suffix).length || undefined) : strval(text)),
  trimPrefix: ([prefix, text]) => (strval(text).startsWith(strval(prefix)) ? strval(text).slice(strval(prefix).length) : strval(text)),
  trim: ([text]) => strval(text).trim(),
  contains: ([needle, text]) => strval(text).includes(strval(needle)),
  hasPrefix: ([prefix, text]) => strval(text).startsWith(strval(prefix)),
  hasSuffix: ([suffix, text]) => strval(text).endsWith(strval(suffix)),
  replace: ([from, to, text]) => strval(text).split(strval(from)).join(strval(to)),
  lower: ([text]) => strval(text).toLowerCase(),
  upper: ([text]) => strval(text).toUpperCase(),
  indent: ([spaces, text]) => indent(spaces, text),
  nindent: ([spaces, text]) => `\n${indent(spaces, text)}`,
  join: ([separator, list]) =>
    asList(list, 'join')
      .filter((item) => item !== null && item !== undefined)
      .map(strval)
      .join(strval(separator)),
  list: (args) => [...args],
  append: ([list, value]) => [...asList(list, 'append'), value],
  concat: (lists) => lists.flatMap((list) => asList(list, 'concat')),
  has: ([needle, list]) => asList(list, 'has').some((item) => JSON.stringify(toPlain(item)) === JSON.stringify(toPlain(needle))),
  first: ([list]) => asList(list, 'first')[0] ?? null,
  last: ([list]) => asList(list, 'last').at(-1) ?? null,
  uniq: ([list]) => [...new Map(asList(list, 'uniq').map((item) => [JSON.stringify(toPlain(item)), item])).values()],
  sortAlpha: ([list]) => asList(list, 'sortAlpha').map(strval).sort(),
  dict: (args) => {
    const out: Record<string, GoValue> = {};
    for (let i = 0; i < args.length; i += 2) out[strval(args[i])] = i + 1 < args.length ? args[i + 1] : '';
    return out;
  },
  set: ([map, key, value]) => {
    asMap(map, 'set')[strval(key)] = value;
    return map;
  },
  unset: ([map, key]) => {
    delete asMap(map, 'unset')[strval(key)];
    return map;
  },
  hasKey: ([map, key]) => Object.prototype.hasOwnProperty.call(asMap(map, 'hasKey'), strval(key)),
  // Go map order is random; sorted keys keep test runs deterministic.
  keys: (maps) => maps.flatMap((map) => Object.keys(asMap(map, 'keys'))).sort(),
  omit: ([map, ...names]) => {
    const drop = new Set(names.map(strval));
    return Object.fromEntries(Object.entries(asMap(map, 'omit')).filter(([key]) => !drop.has(key)));
  },
  pick: ([map, ...names]) => {
    const keep = new Set(names.map(strval));
    return Object.fromEntries(Object.entries(asMap(map, 'pick')).filter(([key]) => keep.has(key)));
  },
  deepCopy: ([value]) => deepCopy(value),
  b64enc: ([text]) => Buffer.from(strval(text), 'utf8').toString('base64'),
  sha256sum: ([text]) => createHash('sha256').update(strval(text)).digest('hex'),
  // Helm
  toYaml: ([value]) => dump(toPlain(value), { sortKeys: true, seqNoIndent: true, lineWidth: -1 }).replace(/\n$/, ''),
  fromYaml: ([text]) => {
    try {
      const parsed: unknown = load(strval(text));
      return isMap(parsed) ? parsed : {};
    } catch (error) {
      return { Error: (error as Error).message };
    }
  },
  toJson: ([value]) => JSON.stringify(toPlain(value)) ?? '',
  fromJson: ([text]) => {
    try {
      const parsed: unknown = JSON.parse(strval(text));
      return isMap(parsed) ? parsed : {};
    } catch (error) {
      return { Error: (error as Error).message };
    }
  },
  include: ([name, data], context) => context.include(strval(name), data),
  tpl: ([text, data], context) => context.tpl(strval(text), data),
  lookup: () => ({}),
  toPrettyJson: ([value]) => JSON.stringify(toPlain(value), null, 2) ?? '',
  toRawJson: ([value]) => JSON.stringify(toPlain(value)) ?? '',
  base: ([file]) => strval(file).split('/').filter(Boolean).pop() ?? '.',
  splitList: ([separator, text]) => strval(text).split(strval(separator)),
  regexMatch: ([pattern, text]) => new RegExp(strval(pattern)).test(strval(text)),
  regexReplaceAll: ([pattern, text, replacement]) =>
    strval(text).replace(
      new RegExp(strval(pattern), 'g'),
      strval(replacement).replace(/\$\{(\w+)\}/g, (_match, group: string) => (/^\d+$/.test(group) ? `$${group}` : `$<${group}>`)),
    ),
  kindIs: ([kind, value]) => kindOf(value) === strval(kind),
  kindOf: ([value]) => kindOf(value),
  coalesce: (args) => args.find(truth) ?? null,
};

/** Go's reflect kind names as Sprig's kindOf gives them. */
function kindOf(value: GoValue): string {
  if (value === null || value === undefined) return 'invalid';
  if (typeof value === 'bigint') return 'int64';
  if (typeof value === 'number') return 'float64';
  if (Array.isArray(value)) return 'slice';
  return isMap(value) ? 'map' : typeof value;
}

/** Executes parsed template bodies against data, with the templates defined by the whole chart. */
export class TemplateExecutor {
  constructor(private readonly defines: Map<string, Node[]>) {}

  /** Renders a body with `.` and `$` set to data; `<no value>` is left in (Helm strips it per file). */
  execute(body: Node[], data: GoValue): string {
    const out: string[] = [];
    this.run(body, data, [{ name: '$', value: data }], out);
    return out.join('');
  }

  include(name: string, data: GoValue): string {
    const body = this.defines.get(name);
    if (!body) throw new TemplateError(`include: no template "${name}"`);
    return this.execute(body, data);
  }

  /** Helm's tpl: the text is a template of its own, with the chart's defines. */
  tpl(text: string, data: GoValue): string {
    const parsed = parseTemplate(text, 'tpl');
    return new TemplateExecutor(new Map([...this.defines, ...parsed.defines])).execute(parsed.body, data).replaceAll('<no value>', '');
  }

  private run(nodes: Node[], dot: GoValue, scope: Scope, out: string[]): void {
    for (const node of nodes) {
      switch (node.kind) {
        case 'text':
          out.push(node.text);
          break;
        case 'action': {
          const value = this.pipeline(node.pipeline, dot, scope);
          if (!node.pipeline.assign) out.push(printValue(value));
          break;
        }
        case 'if': {
          const mark = scope.length;
          const branch = node.branches.find((candidate) => truth(this.pipeline(candidate.condition, dot, scope)));
          this.run(branch ? branch.body : node.otherwise, dot, scope, out);
          scope.length = mark;
          break;
        }
        case 'with': {
          const mark = scope.length;
          const value = this.pipeline(node.pipeline, dot, scope);
          if (truth(value)) this.run(node.body, value, scope, out);
          else this.run(node.otherwise, dot, scope, out);
          scope.length = mark;
          break;
        }
        case 'range':
          this.range(node, dot, scope, out);
          break;
      }
    }
  }

  private range(node: Extract<Node, { kind: 'range' }>, dot: GoValue, scope: Scope, out: string[]): void {
    const mark = scope.length;
    const { variables } = node.pipeline;
    const value = this.pipeline({ ...node.pipeline, variables: [], assign: null }, dot, scope);
    let entries: Array<[GoValue, GoValue]>;
    if (Array.isArray(value)) entries = value.map((item, i) => [BigInt(i), item]);
    else if (isMap(value)) entries = Object.keys(value).sort().map((key) => [key, value[key]]);
    else if (value === null || value === undefined) entries = [];
    else if (typeof value === 'bigint') entries = Array.from({ length: Number(value) }, (_, i) => [BigInt(i), BigInt(i)]);
    else throw new TemplateError(`range can't iterate over ${formatValue(value)} in {{ ${node.pipeline.source} }}`);
    if (entries.length === 0) this.run(node.otherwise, dot, scope, out);
    for (const [key, item] of entries) {
      const iteration = scope.length;
      if (variables.length === 1) scope.push({ name: variables[0], value: item });
      if (variables.length === 2) scope.push({ name: variables[0], value: key }, { name: variables[1], value: item });
      this.run(node.body, item, scope, out);
      scope.length = iteration;
    }
    scope.length = mark;
  }

  private pipeline(pipeline: Pipeline, dot: GoValue, scope: Scope): GoValue {
    let value: GoValue = undefined;
    let piped = false;
    try {
      for (const command of pipeline.commands) {
        value = this.command(command, dot, scope, piped ? [value] : []);
        piped = true;
      }
    } catch (error) {
      if (error instanceof TemplateError && !error.message.includes('{{')) throw new TemplateError(`${error.message} (in {{ ${pipeline.source} }})`);
      throw error;
    }
    if (pipeline.assign === 'declare') {
      for (const name of pipeline.variables) scope.push({ name, value });
    } else if (pipeline.assign === 'assign') {
      for (const name of pipeline.variables) {
        const slot = [...scope].reverse().find((entry) => entry.name === name);
        if (!slot) throw new TemplateError(`undefined variable ${name}`);
        slot.value = value;
      }
    }
    return value;
  }

  private command(command: Command, dot: GoValue, scope: Scope, piped: GoValue[]): GoValue {
    const [head, ...rest] = command.operands;
    if (head.kind !== 'function') {
      if (rest.length === 0 && piped.length === 0) return this.operand(head, dot, scope);
      // A method call with arguments: `.Files.Get "dashboards/x.json"`.
      if ((head.kind === 'dot' || head.kind === 'variable') && head.chain.length > 0) {
        const receiver = this.operand({ ...head, chain: head.chain.slice(0, -1) }, dot, scope);
        const method = methodOf(receiver, head.chain[head.chain.length - 1]);
        if (method) return method(...rest.map((operand) => this.operand(operand, dot, scope)), ...piped);
      }
      throw new TemplateError(`can't give arguments to a non-function`);
    }
    if (head.name === 'and' || head.name === 'or') {
      const thunks = [...rest.map((operand) => () => this.operand(operand, dot, scope)), ...piped.map((value) => () => value)];
      let last: GoValue = undefined;
      for (const thunk of thunks) {
        last = thunk();
        if (head.name === 'and' ? !truth(last) : truth(last)) return last;
      }
      return last;
    }
    const fn = Object.hasOwn(functions, head.name) ? functions[head.name] : undefined;
    if (!fn) throw new TemplateError(`function "${head.name}" not defined`);
    const args = [...rest.map((operand) => this.operand(operand, dot, scope)), ...piped];
    return fn(args, { include: (name, data) => this.include(name, data), tpl: (text, data) => this.tpl(text, data) });
  }

  private operand(operand: Operand, dot: GoValue, scope: Scope): GoValue {
    switch (operand.kind) {
      case 'string':
      case 'number':
      case 'bool':
        return operand.value;
      case 'nil':
        return null;
      case 'dot':
        return this.chain(dot, operand.chain, '');
      case 'variable': {
        const slot = [...scope].reverse().find((entry) => entry.name === operand.name);
        if (!slot) throw new TemplateError(`undefined variable ${operand.name}`);
        return this.chain(slot.value, operand.chain, operand.name);
      }
      case 'pipeline':
        return this.chain(this.pipeline(operand.pipeline, dot, scope), operand.chain, '(...)');
      case 'function':
        return this.command({ operands: [operand] }, dot, scope, []);
    }
  }

  private chain(value: GoValue, chain: string[], start: string): GoValue {
    let current = value;
    let at = start;
    for (const field of chain) {
      if (current === null || current === undefined) throw new TemplateError(`nil pointer evaluating ${at}.${field}`);
      if (!isMap(current)) throw new TemplateError(`can't evaluate field ${field} in type ${goKind(current)}`);
      const method = methodOf(current, field);
      current = method ? method() : Object.hasOwn(current, field) ? current[field] : undefined;
      at = `${at}.${field}`;
    }
    return current;
  }
}
