// The template engine the chart tests render with behaves like Go's text/template under Helm where a chart
// depends on it (outputs checked against `helm template` semantics).
import { chartFiles } from './chart';
import { parseTemplate } from './go-template';
import { TemplateExecutor, withMethods } from './template-executor';

function run(source: string, data: unknown = {}): string {
  const parsed = parseTemplate(source, 'test.tpl');
  return new TemplateExecutor(parsed.defines).execute(parsed.body, data);
}

describe('go template engine', () => {
  it('trims white space at {{- and -}} and drops comments', () => {
    expect(run('a  \n  {{- "b" -}}  \n  c{{/* note */}}d {{- /* trimmed */ -}} e')).toBe('abcde');
  });

  it('ranges over lists in order and maps in key order, with else for empty ones', () => {
    expect(run('{{ range $i, $v := .l }}{{ $i }}={{ $v }};{{ end }}', { l: ['x', 'y'] })).toBe('0=x;1=y;');
    expect(run('{{ range $k, $v := .m }}{{ $k }}={{ $v }};{{ end }}', { m: { b: 2, a: 1 } })).toBe('a=1;b=2;');
    expect(run('{{ range .l }}x{{ else }}empty{{ end }}', { l: [] })).toBe('empty');
  });

  it('sets the dot in with, keeps $ as the root, and scopes variables to their block', () => {
    expect(run('{{ with .a }}{{ .b }}-{{ $.c }}{{ end }}', { a: { b: 1 }, c: 2 })).toBe('1-2');
    expect(run('{{ $x := 1 }}{{ if true }}{{ $x = 2 }}{{ $y := 3 }}{{ end }}{{ $x }}')).toBe('2');
    expect(() => run('{{ if true }}{{ $y := 3 }}{{ end }}{{ $y }}')).toThrow(/undefined variable \$y/);
  });

  it('reads a missing map key as <no value> and fails on a field of nil, as Helm does', () => {
    expect(run('[{{ .missing }}]', {})).toBe('[<no value>]');
    expect(() => run('{{ .missing.key }}', {})).toThrow(/nil pointer evaluating \.missing\.key/);
  });

  it('keeps Go number types apart: values are float64, literals and int are int', () => {
    expect(run('{{ printf "%d" .n }}|{{ printf "%d" (int .n) }}', { n: 3 })).toBe('%!d(float64=3)|3');
    expect(run('{{ .big }}|{{ int .big }}', { big: 1500000 })).toBe('1.5e+06|1500000');
    expect(() => run('{{ gt .n 1 }}', { n: 3 })).toThrow(/incompatible types for comparison/);
    expect(run('{{ div (add 25000 999) 1000 }}')).toBe('25');
  });

  it('calls helpers with include and short-circuits and / or', () => {
    expect(run('{{ define "h" }}<{{ .x }}>{{ end }}{{ include "h" (dict "x" 1) | nindent 2 }}')).toBe('\n  <1>');
    expect(run('{{ and .a .a.b }}|{{ or .a "fallback" }}', { a: null })).toBe('<no value>|fallback');
  });

  it('renders toYaml as Helm does (sorted keys, lists at the parent key’s indentation) and round-trips JSON', () => {
    expect(run('{{ toYaml .v }}', { v: { b: [1, 'x'], a: { c: true } } })).toBe('a:\n  c: true\nb:\n- 1\n- x');
    expect(run('{{ (fromJson (toJson .v)).a }}', { v: { a: 'y' } })).toBe('y');
  });

  it('fails with the message of required and fail, naming the action', () => {
    expect(() => run('{{ required "x is required" .x }}', {})).toThrow(/x is required \(in \{\{ required "x is required" \.x \}\}\)/);
    expect(() => run('{{ fail "no" }}')).toThrow(/^no/);
  });

  it('calls Go methods with and without arguments (.Files, .Capabilities) and renders tpl', () => {
    const files = chartFiles(new Map([['dashboards/a.json', '{"a":1}'], ['dashboards/b.json', '{}'], ['other/c.txt', 'c']]));
    expect(run('{{ .Files.Get "other/c.txt" }}|{{ len (.Files.Glob "dashboards/*.json") }}', { Files: files })).toBe('c|2');
    expect(run('{{ (.Files.Glob "dashboards/*").AsConfig }}', { Files: files })).toBe('a.json: \'{"a":1}\'\nb.json: \'{}\'');
    expect(run('{{ range $path, $_ := .Files.Glob "**.json" }}{{ $path }};{{ end }}', { Files: files })).toBe('dashboards/a.json;dashboards/b.json;');
    const apis = withMethods({}, { Has: (api) => api === 'keda.sh/v1alpha1' });
    expect(run('{{ .A.Has "keda.sh/v1alpha1" }}/{{ .A.Has "x/v1" }}', { A: apis })).toBe('true/false');
    expect(run('{{ tpl "{{ .x }}!" . }}', { x: 'y' })).toBe('y!');
  });
});
