// A parser for the subset of Go's text/template that Helm charts use: text and actions with trim markers,
// comments, if / else if / else, range (with one or two variables, else), with (else), define, variables
// (:= and =), pipelines, parenthesised sub-pipelines with field chains. The chart is rendered by the real helm
// (test/support/helm.ts); this parse tree is only read by value-references.ts, which finds the values the
// templates reference (helm has no command that reports them).

export type Operand =
  | { kind: 'string'; value: string }
  | { kind: 'number'; value: bigint | number }
  | { kind: 'bool'; value: boolean }
  | { kind: 'nil' }
  | { kind: 'dot'; chain: string[] }
  | { kind: 'variable'; name: string; chain: string[] }
  | { kind: 'function'; name: string }
  | { kind: 'pipeline'; pipeline: Pipeline; chain: string[] };

export interface Command {
  operands: Operand[];
}

export interface Pipeline {
  /** Variables declared (`:=`) or assigned (`=`) by the pipeline. */
  variables: string[];
  assign: 'declare' | 'assign' | null;
  commands: Command[];
  /** The action's source, for error messages. */
  source: string;
}

export type Node =
  | { kind: 'text'; text: string }
  | { kind: 'action'; pipeline: Pipeline }
  | { kind: 'if'; branches: Array<{ condition: Pipeline; body: Node[] }>; otherwise: Node[] }
  | { kind: 'range'; pipeline: Pipeline; body: Node[]; otherwise: Node[] }
  | { kind: 'with'; pipeline: Pipeline; body: Node[]; otherwise: Node[] };

export interface ParsedTemplate {
  body: Node[];
  defines: Map<string, Node[]>;
}

interface RawAction {
  kind: 'text' | 'action';
  text: string;
}

/** Splits a template into text and actions, applying `{{-` / `-}}` trimming and dropping comments. */
function scan(source: string, name: string): RawAction[] {
  const out: RawAction[] = [];
  let position = 0;
  let trimNext = false;
  while (position < source.length) {
    const open = source.indexOf('{{', position);
    let text = source.slice(position, open === -1 ? source.length : open);
    if (trimNext) text = text.replace(/^\s+/, '');
    trimNext = false;
    if (open === -1) {
      out.push({ kind: 'text', text });
      break;
    }
    let inner = open + 2;
    if (/^-[ \t\r\n]/.test(source.slice(inner, inner + 2))) {
      text = text.replace(/\s+$/, '');
      inner += 1;
    }
    out.push({ kind: 'text', text });
    const comment = /^\s*\/\*/.exec(source.slice(inner, inner + 8));
    const close = comment ? source.indexOf('}}', source.indexOf('*/', inner) + 2) : findClose(source, inner, name);
    if (close === -1) throw new Error(`${name}: unclosed comment`);
    let body = source.slice(inner, close);
    if (/[ \t\r\n]-$/.test(body)) {
      trimNext = true;
      body = body.slice(0, -1);
    }
    body = body.trim();
    if (!(body.startsWith('/*') && body.endsWith('*/'))) out.push({ kind: 'action', text: body });
    position = close + 2;
  }
  return out;
}

function findClose(source: string, from: number, name: string): number {
  let i = from;
  while (i < source.length) {
    const c = source[i];
    if (c === '"' || c === '`') {
      const end = c === '`' ? source.indexOf('`', i + 1) : skipQuoted(source, i);
      if (end === -1) throw new Error(`${name}: unterminated string`);
      i = end + 1;
      continue;
    }
    if (c === '}' && source[i + 1] === '}') return i;
    i += 1;
  }
  throw new Error(`${name}: unclosed action`);
}

function skipQuoted(source: string, start: number): number {
  for (let i = start + 1; i < source.length; i += 1) {
    if (source[i] === '\\') i += 1;
    else if (source[i] === '"') return i;
  }
  return -1;
}

type Token =
  | { type: 'string'; value: string }
  | { type: 'number'; value: bigint | number }
  | { type: 'ident'; value: string }
  | { type: 'variable'; name: string; chain: string[] }
  | { type: 'field'; chain: string[]; adjacent: boolean }
  | { type: '(' | ')' | '|' | ':=' | '=' | ',' };

function tokenize(text: string): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  const chainAt = (start: number): { chain: string[]; end: number } => {
    const match = /^(?:\.[A-Za-z_][A-Za-z0-9_]*)*/.exec(text.slice(start));
    const raw = match ? match[0] : '';
    return { chain: raw.split('.').filter(Boolean), end: start + raw.length };
  };
  while (i < text.length) {
    const c = text[i];
    if (/\s/.test(c)) {
      i += 1;
    } else if (c === '"') {
      const end = skipQuoted(text, i);
      tokens.push({ type: 'string', value: JSON.parse(text.slice(i, end + 1)) as string });
      i = end + 1;
    } else if (c === '`') {
      const end = text.indexOf('`', i + 1);
      tokens.push({ type: 'string', value: text.slice(i + 1, end) });
      i = end + 1;
    } else if (c === '$') {
      const name = /^\$[A-Za-z0-9_]*/.exec(text.slice(i))?.[0] ?? '$';
      const { chain, end } = chainAt(i + name.length);
      tokens.push({ type: 'variable', name, chain });
      i = end;
    } else if (c === '.') {
      const adjacent = i > 0 && text[i - 1] === ')';
      const { chain, end } = chainAt(i);
      tokens.push({ type: 'field', chain, adjacent });
      i = end === i ? i + 1 : end;
    } else if (/[-0-9]/.test(c)) {
      const raw = /^-?[0-9]+(?:\.[0-9]+)?(?:[eE][-+]?[0-9]+)?/.exec(text.slice(i))?.[0];
      if (!raw) throw new Error(`bad number in {{ ${text} }}`);
      tokens.push({ type: 'number', value: /^-?[0-9]+$/.test(raw) ? BigInt(raw) : Number(raw) });
      i += raw.length;
    } else if (text.startsWith(':=', i)) {
      tokens.push({ type: ':=' });
      i += 2;
    } else if ('()|=,'.includes(c)) {
      tokens.push({ type: c as '(' | ')' | '|' | '=' | ',' });
      i += 1;
    } else {
      const word = /^[A-Za-z_][A-Za-z0-9_]*/.exec(text.slice(i))?.[0];
      if (!word) throw new Error(`unexpected "${c}" in {{ ${text} }}`);
      tokens.push({ type: 'ident', value: word });
      i += word.length;
    }
  }
  return tokens;
}

class PipelineParser {
  private position = 0;
  constructor(
    private readonly tokens: Token[],
    private readonly source: string,
  ) {}

  parse(): Pipeline {
    const pipeline = this.pipeline();
    if (this.position < this.tokens.length) throw new Error(`unexpected token in {{ ${this.source} }}`);
    return pipeline;
  }

  private pipeline(): Pipeline {
    const variables: string[] = [];
    let assign: Pipeline['assign'] = null;
    const declaration = this.declaration();
    if (declaration) {
      variables.push(...declaration.variables);
      assign = declaration.assign;
    }
    const commands: Command[] = [{ operands: [] }];
    while (this.position < this.tokens.length) {
      const token = this.tokens[this.position];
      if (token.type === ')') break;
      this.position += 1;
      if (token.type === '|') {
        commands.push({ operands: [] });
        continue;
      }
      commands[commands.length - 1].operands.push(this.operand(token));
    }
    if (commands.some((command) => command.operands.length === 0)) throw new Error(`empty command in {{ ${this.source} }}`);
    return { variables, assign, commands, source: this.source };
  }

  private declaration(): { variables: string[]; assign: 'declare' | 'assign' } | null {
    const names: string[] = [];
    let i = this.position;
    for (;;) {
      const token = this.tokens[i];
      if (token?.type !== 'variable' || token.chain.length > 0) return null;
      names.push(token.name);
      const next = this.tokens[i + 1];
      if (next?.type === ',') {
        i += 2;
        continue;
      }
      if (next?.type === ':=' || next?.type === '=') {
        this.position = i + 2;
        return { variables: names, assign: next.type === ':=' ? 'declare' : 'assign' };
      }
      return null;
    }
  }

  private operand(token: Token): Operand {
    switch (token.type) {
      case 'string':
        return { kind: 'string', value: token.value };
      case 'number':
        return { kind: 'number', value: token.value };
      case 'variable':
        return { kind: 'variable', name: token.name, chain: token.chain };
      case 'field':
        return { kind: 'dot', chain: token.chain };
      case 'ident':
        if (token.value === 'true' || token.value === 'false') return { kind: 'bool', value: token.value === 'true' };
        if (token.value === 'nil') return { kind: 'nil' };
        return { kind: 'function', name: token.value };
      case '(': {
        const pipeline = this.pipeline();
        if (this.tokens[this.position]?.type !== ')') throw new Error(`unclosed ( in {{ ${this.source} }}`);
        this.position += 1;
        const next = this.tokens[this.position];
        let chain: string[] = [];
        if (next?.type === 'field' && next.adjacent) {
          chain = next.chain;
          this.position += 1;
        }
        return { kind: 'pipeline', pipeline, chain };
      }
      default:
        throw new Error(`unexpected "${token.type}" in {{ ${this.source} }}`);
    }
  }
}

function parsePipeline(text: string): Pipeline {
  return new PipelineParser(tokenize(text), text).parse();
}

type Frame =
  | { kind: 'root'; body: Node[] }
  | { kind: 'define'; name: string; body: Node[] }
  | { kind: 'if'; node: Extract<Node, { kind: 'if' }>; target: Node[] }
  | { kind: 'range' | 'with'; node: Extract<Node, { kind: 'range' | 'with' }>; target: Node[] };

/** Parses one template file into its body and the templates it defines. */
export function parseTemplate(source: string, name: string): ParsedTemplate {
  const defines = new Map<string, Node[]>();
  const root: Frame = { kind: 'root', body: [] };
  const stack: Frame[] = [root];
  const current = (): Node[] => {
    const top = stack[stack.length - 1];
    return top.kind === 'root' || top.kind === 'define' ? top.body : top.target;
  };
  for (const piece of scan(source, name)) {
    if (piece.kind === 'text') {
      if (piece.text) current().push({ kind: 'text', text: piece.text });
      continue;
    }
    const text = piece.text;
    const keyword = /^(if|else|end|range|with|define|template|block|break|continue)\b\s*/.exec(text);
    const rest = keyword ? text.slice(keyword[0].length) : text;
    switch (keyword?.[1]) {
      case undefined:
        current().push({ kind: 'action', pipeline: parsePipeline(text) });
        break;
      case 'if': {
        const node: Extract<Node, { kind: 'if' }> = { kind: 'if', branches: [{ condition: parsePipeline(rest), body: [] }], otherwise: [] };
        current().push(node);
        stack.push({ kind: 'if', node, target: node.branches[0].body });
        break;
      }
      case 'range':
      case 'with': {
        const node = { kind: keyword[1], pipeline: parsePipeline(rest), body: [], otherwise: [] } as Extract<Node, { kind: 'range' | 'with' }>;
        current().push(node);
        stack.push({ kind: keyword[1], node, target: node.body });
        break;
      }
      case 'define': {
        const defined = /^"([^"]+)"$/.exec(rest);
        if (!defined) throw new Error(`${name}: bad define {{ ${text} }}`);
        const body: Node[] = [];
        defines.set(defined[1], body);
        stack.push({ kind: 'define', name: defined[1], body });
        break;
      }
      case 'else': {
        const top = stack[stack.length - 1];
        const elseIf = /^if\b\s*/.exec(rest);
        if (top.kind === 'if' && elseIf) {
          const branch = { condition: parsePipeline(rest.slice(elseIf[0].length)), body: [] };
          top.node.branches.push(branch);
          top.target = branch.body;
        } else if (top.kind === 'if' || top.kind === 'range' || top.kind === 'with') {
          if (rest) throw new Error(`${name}: unsupported {{ ${text} }}`);
          top.target = top.node.otherwise;
        } else {
          throw new Error(`${name}: else outside if/range/with`);
        }
        break;
      }
      case 'end':
        if (stack.length === 1) throw new Error(`${name}: unexpected end`);
        stack.pop();
        break;
      default:
        throw new Error(`${name}: unsupported action {{ ${text} }}`);
    }
  }
  if (stack.length !== 1) throw new Error(`${name}: unclosed ${stack[stack.length - 1].kind}`);
  return { body: root.body, defines };
}
