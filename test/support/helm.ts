// The chart tests' helm: `helm template` and `helm lint` of helm/hecate with the real helm 3.17
// (test/support/helm-binary.ts), plus the YAML helpers the specs read manifests and values with.
import { execFileSync } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { load, loadAll } from 'js-yaml';
import { helmBinary } from './helm-binary';

export type YamlMap = Record<string, unknown>;

export const CHART_DIR = path.resolve(__dirname, '../../helm/hecate');

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

export interface Rendered {
  /** Every manifest `helm template` prints (hooks included), in its order. */
  documents: YamlMap[];
  /** Template file (e.g. `pdb.yaml`) → the manifests it rendered. */
  sources: Map<string, YamlMap[]>;
  /** NOTES.txt as Helm renders it for the same values. */
  notes: string;
}

/** Values files (paths) and inline overrides, applied in order over values.yaml (`-f` each). */
export type ValuesSource = string | YamlMap;

const NOTES_KIND = 'HecateTestNotes';

interface Workspace {
  dir: string;
  /** A copy of the chart with one more template that prints NOTES.txt (`helm template` leaves notes out). */
  chart: string;
  files: number;
}

let workspace: Workspace | undefined;

function work(): Workspace {
  if (workspace) return workspace;
  const dir = mkdtempSync(path.join(tmpdir(), 'hecate-helm-'));
  const chart = path.join(dir, 'hecate');
  cpSync(CHART_DIR, chart, { recursive: true });
  writeFileSync(
    path.join(chart, 'templates', 'zz-test-notes.yaml'),
    `kind: ${NOTES_KIND}\nnotes: {{ include (print .Template.BasePath "/NOTES.txt") . | toJson }}\n`,
  );
  workspace = { dir, chart, files: 0 };
  return workspace;
}

// Jest evaluates this module once per test file: its workspace goes with the file's last test.
afterAll(() => {
  if (workspace) rmSync(workspace.dir, { recursive: true, force: true });
  workspace = undefined;
});

function valuesArgs(values: ValuesSource[]): string[] {
  const { dir } = work();
  return values.flatMap((source) => {
    if (typeof source === 'string') return ['-f', source];
    const file = path.join(dir, `values-${++work().files}.yaml`);
    writeFileSync(file, JSON.stringify(source));
    return ['-f', file];
  });
}

/** Runs helm with a private HOME and config, cache and data dirs; a non-zero exit throws helm's stderr. */
export function helm(args: string[]): string {
  const { dir } = work();
  const binary = helmBinary();
  try {
    return execFileSync(binary, args, {
      encoding: 'utf8',
      maxBuffer: 64 * 1024 * 1024,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: {
        HOME: dir,
        HELM_CACHE_HOME: path.join(dir, 'cache'),
        HELM_CONFIG_HOME: path.join(dir, 'config'),
        HELM_DATA_HOME: path.join(dir, 'data'),
      },
    });
  } catch (error) {
    const { stderr, stdout } = error as { stderr?: string; stdout?: string };
    throw new Error(`helm ${args[0]} failed: ${(stderr || stdout || String(error)).trim()}`, { cause: error });
  }
}

/** `helm template rel helm/hecate --namespace ns -f …` (Kubernetes 1.30), the manifests parsed and NOTES.txt beside them. */
export function renderChart(...values: ValuesSource[]): Rendered {
  const output = helm(['template', 'rel', work().chart, '--namespace', 'ns', '--kube-version', '1.30.0', ...valuesArgs(values)]);
  const documents: YamlMap[] = [];
  const sources = new Map<string, YamlMap[]>();
  let notes: string | undefined;
  // helm prints each manifest as `---` then `# Source: <chart>/templates/<file>`.
  for (const chunk of output.split(/^---$/m)) {
    const source = /^# Source: [^/]+\/templates\/(.+)$/m.exec(chunk)?.[1];
    if (!chunk.trim()) continue;
    if (!source) throw new Error(`helm template printed a document without its # Source: ${chunk.slice(0, 200)}`);
    const parsed = loadAll(chunk).filter(isYamlMap);
    if (parsed[0].kind === NOTES_KIND) {
      notes = String(parsed[0].notes);
      continue;
    }
    documents.push(...parsed);
    sources.set(source, [...(sources.get(source) ?? []), ...parsed]);
  }
  if (notes === undefined) throw new Error('helm template printed no NOTES.txt probe');
  return { documents, sources, notes };
}

/** `helm lint --strict helm/hecate -f …`: its output, or an error with it when the chart fails. */
export function lintChart(...values: ValuesSource[]): string {
  return helm(['lint', '--strict', CHART_DIR, '--namespace', 'ns', '--kube-version', '1.30.0', ...valuesArgs(values)]);
}
