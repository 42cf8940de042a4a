// `helm template` for the chart tests: values coalesced like Helm's (-f files over values.yaml), every
// template of the chart parsed into one set, each file rendered with .Values / .Release / .Chart /
// .Template / .Capabilities, `<no value>` removed, and the manifests parsed as YAML.
import { readFileSync, readdirSync } from 'node:fs';
import * as path from 'node:path';
import { dump, loadAll, load } from 'js-yaml';
import { parseTemplate, type Node } from './go-template';
import { TemplateExecutor, withMethods } from './template-executor';

export type YamlMap = Record<string, unknown>;

export const isYamlMap = (value: unknown): value is YamlMap => typeof value === 'object' && value !== null && !Array.isArray(value);

/** Walks a parsed document: dig(doc, 'spec', 'containers', 0, 'name'). */
export function dig(value: unknown, ...keys: Array<string | number>): unknown {
  let current = value;
  for (const key of keys) {
    if (typeof key === 'number') current = Array.isArray(current) ? current[key] : undefined;
    else current = isYamlMap(current) ? current[key] : undefined;
  }
  return current;
}

export function readYamlMap(file: string): YamlMap {
  const parsed = load(readFileSync(file, 'utf8'));
  if (!isYamlMap(parsed)) throw new Error(`${file} is not a YAML mapping`);
  return parsed;
}

/** Helm's coalescing of a values file over the chart defaults: maps merge, null deletes, the rest replaces. */
export function mergeValues(base: YamlMap, override: YamlMap): YamlMap {
  const merged: YamlMap = { ...base };
  for (const [key, value] of Object.entries(override)) {
    const current = merged[key];
    if (value === null) delete merged[key];
    else merged[key] = isYamlMap(current) && isYamlMap(value) ? mergeValues(current, value) : value;
  }
  return merged;
}

/** A glob of Helm's .Files (gobwas/glob with `/` separators): `*` stays within a folder, `**` crosses them. */
function globToRegExp(pattern: string): RegExp {
  const body = pattern
    .split('**')
    .map((part) => part.replace(/[.+^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '[^/]*').replace(/\?/g, '[^/]'))
    .join('.*');
  return new RegExp(`^${body}$`);
}

/** Helm's .Files: the chart's files outside templates/ (and other than Chart.yaml and the values files). */
export function chartFiles(contents: Map<string, string>): object {
  const fields = Object.fromEntries(contents);
  return withMethods(fields, {
    Get: (name) => contents.get(String(name)) ?? '',
    GetBytes: (name) => contents.get(String(name)) ?? '',
    Lines: (name) => (contents.get(String(name)) ?? '').split('\n'),
    Glob: (pattern) => {
      const matcher = globToRegExp(String(pattern));
      return chartFiles(new Map([...contents].filter(([file]) => matcher.test(file))));
    },
    AsConfig: () => dump(Object.fromEntries([...contents].map(([file, text]) => [path.basename(file), text])), { sortKeys: true, lineWidth: -1 }).trimEnd(),
    AsSecrets: () =>
      dump(Object.fromEntries([...contents].map(([file, text]) => [path.basename(file), Buffer.from(text).toString('base64')])), { sortKeys: true }).trimEnd(),
  });
}

function readChartFiles(dir: string): Map<string, string> {
  const ignored = readFileSync(path.join(dir, '.helmignore'), 'utf8')
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line && !line.startsWith('#'))
    .map((line) => globToRegExp(line.replace(/\/$/, '')));
  const own = new Set(['Chart.yaml', 'values.yaml', 'values.schema.json', '.helmignore']);
  const files = new Map<string, string>();
  const walk = (relative: string): void => {
    for (const entry of readdirSync(path.join(dir, relative), { withFileTypes: true })) {
      const file = relative ? `${relative}/${entry.name}` : entry.name;
      if (ignored.some((pattern) => pattern.test(entry.name) || pattern.test(file))) continue;
      if (entry.isDirectory()) {
        if (file !== 'templates' && file !== 'charts') walk(file);
      } else if (!own.has(file)) {
        files.set(file, readFileSync(path.join(dir, file), 'utf8'));
      }
    }
  };
  walk('');
  return files;
}

export interface Chart {
  dir: string;
  metadata: YamlMap;
  defaults: YamlMap;
  /** File name (e.g. `pdb.yaml`) → parsed body, for every file of templates/. */
  files: Map<string, Node[]>;
  defines: Map<string, Node[]>;
  /** .Files: the chart's other files by path. */
  otherFiles: Map<string, string>;
}

export function loadChart(dir: string): Chart {
  const templatesDir = path.join(dir, 'templates');
  const files = new Map<string, Node[]>();
  const defines = new Map<string, Node[]>();
  for (const file of readdirSync(templatesDir).sort()) {
    const parsed = parseTemplate(readFileSync(path.join(templatesDir, file), 'utf8'), file);
    files.set(file, parsed.body);
    for (const [name, body] of parsed.defines) defines.set(name, body);
  }
  return {
    dir,
    metadata: readYamlMap(path.join(dir, 'Chart.yaml')),
    defaults: readYamlMap(path.join(dir, 'values.yaml')),
    files,
    defines,
    otherFiles: readChartFiles(dir),
  };
}

export interface Rendered {
  values: YamlMap;
  /** File name → rendered text (files that render to nothing but white space are left out). */
  files: Map<string, string>;
  notes: string;
  /** Every manifest, in file order. */
  documents: YamlMap[];
}

export interface RenderOptions {
  /** Values files (paths) and inline overrides, applied in order over values.yaml. */
  values?: Array<string | YamlMap>;
  release?: string;
  namespace?: string;
  /** API groups/versions beyond Kubernetes' own that .Capabilities.APIVersions.Has reports (as `helm template --api-versions`). */
  apiVersions?: string[];
}

const BUILT_IN_APIS = ['v1', 'apps/v1', 'batch/v1', 'policy/v1', 'autoscaling/v2', 'networking.k8s.io/v1', 'rbac.authorization.k8s.io/v1'];

export function renderChart(chart: Chart, options: RenderOptions = {}): Rendered {
  let values = chart.defaults;
  for (const source of options.values ?? []) values = mergeValues(values, typeof source === 'string' ? readYamlMap(source) : source);
  const chartName = String(chart.metadata.name);
  // Templates are named by their defines and by their path (`include (print .Template.BasePath "/x.yaml")`).
  const named = new Map(chart.defines);
  for (const [file, body] of chart.files) named.set(`${chartName}/templates/${file}`, body);
  const executor = new TemplateExecutor(named);
  const top = {
    Values: values,
    Release: { Name: options.release ?? 'rel', Namespace: options.namespace ?? 'ns', Service: 'Helm', IsInstall: true, IsUpgrade: false, Revision: 1n },
    Chart: { Name: chartName, Version: chart.metadata.version, AppVersion: chart.metadata.appVersion },
    Capabilities: {
      KubeVersion: { Version: 'v1.30.0', GitVersion: 'v1.30.0', Major: '1', Minor: '30' },
      APIVersions: withMethods({}, { Has: (api) => [...BUILT_IN_APIS, ...(options.apiVersions ?? [])].includes(String(api)) }),
    },
    Files: chartFiles(chart.otherFiles),
  };
  const files = new Map<string, string>();
  let notes = '';
  for (const [file, body] of chart.files) {
    if (file.startsWith('_')) continue;
    const data = { ...top, Template: { Name: `${chartName}/templates/${file}`, BasePath: `${chartName}/templates` } };
    let text: string;
    try {
      text = executor.execute(body, data).replaceAll('<no value>', '');
    } catch (error) {
      throw new Error(`${file}: ${(error as Error).message}`, { cause: error });
    }
    if (file === 'NOTES.txt') notes = text;
    else if (text.trim()) files.set(file, text);
  }
  const documents = [...files.values()].flatMap((text) => loadAll(text).filter(isYamlMap));
  return { values, files, notes, documents };
}
