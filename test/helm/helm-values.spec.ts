// The chart's values, templates and schema agree: every value a template references exists in values.yaml
// or the schema, every value values.yaml documents is used by a template and described by the schema.
// References are found by walking the parsed templates (test/support/chart-values/value-references.ts says how,
// and what it does not follow): helm renders the chart but reports no value it reads.
import * as path from 'node:path';
import { findChartValueReferences } from '../support/chart-values/value-references';
import { ValuesSchema, readSchema } from '../support/chart-values/values-schema';
import { CHART_DIR as chartDir, isYamlMap, readYamlMap, type YamlMap } from '../support/helm';

const defaults = readYamlMap(path.join(chartDir, 'values.yaml'));
const schema = new ValuesSchema(readSchema(chartDir));
const { references, wholeUses } = findChartValueReferences(chartDir);
const referenced = new Set(references.map((reference) => reference.path));

/** values.yaml's keys, down through objects whose schema declares properties (free-form maps are data). */
function documentedKeys(): string[][] {
  const keys: string[][] = [];
  const walk = (value: unknown, node: unknown, at: string[]): void => {
    const properties = schema.properties(node);
    if (Array.isArray(value)) {
      const items = schema.resolve(node)?.items;
      for (const item of value) walk(item, items, [...at, '[]']);
      return;
    }
    if (!isYamlMap(value) || !properties) return;
    for (const [key, child] of Object.entries(value)) {
      keys.push([...at, key]);
      walk(child, properties[key], [...at, key]);
    }
  };
  walk(defaults, schema.root, []);
  return keys;
}

describe('helm chart: values referenced by the templates', () => {
  it('finds references through variables, with / range scopes, helpers and the resolved worker pools', () => {
    expect([...referenced]).toEqual(
      expect.arrayContaining([
        'api.ingress.hosts.[].paths.[].pathType', // range inside range
        'config.shutdownGraceMs', // through (dict "ctx" $) into a helper
        'worker.keda.serverAddress', // a field of a resolved pool
        'worker.pools.[].name',
        'workspaces.persistence.existingClaim',
        'networkPolicy.workers.egress.cidrs.[].except', // range, then with
        'api.pdb.minAvailable', // hasKey with a literal key
      ]),
    );
  });

  it('references only values that values.yaml or values.schema.json describes', () => {
    const unknown = references.filter((reference) => !schema.describes(reference.path.split('.')));
    expect(unknown.map((reference) => `${reference.file}: .Values.${reference.path}`)).toEqual([]);
  });

  it('uses every value values.yaml documents', () => {
    const used = (key: string[]): boolean => {
      const dotted = key.join('.');
      if ([...referenced].some((path) => path === dotted || path.startsWith(`${dotted}.`))) return true;
      return key.some((_, i) => wholeUses.has(key.slice(0, i + 1).join('.')));
    };
    expect(
      documentedKeys()
        .filter((key) => !used(key))
        .map((key) => key.join('.')),
    ).toEqual([]);
  });

  it('describes in the schema every key values.yaml sets', () => {
    expect(
      documentedKeys()
        .filter((key) => !schema.describes(key))
        .map((key) => key.join('.')),
    ).toEqual([]);
  });

  it('lets a worker pool set only keys that worker.* has a default for (and its name)', () => {
    const worker = schema.properties(schema.properties(schema.root)?.worker) ?? {};
    const poolItem = schema.resolve(schema.resolve(worker.pools)?.items);
    const poolKeys = Object.keys(schema.properties(poolItem) ?? {});
    const workerDefaults = defaults.worker as YamlMap;
    expect(poolKeys.filter((key) => key !== 'name' && !(key in workerDefaults))).toEqual([]);
    // The same schema for a key in a pool as in worker.*.
    for (const key of poolKeys.filter((name) => name !== 'name')) {
      expect([key, schema.properties(poolItem)?.[key]]).toEqual([key, worker[key]]);
    }
  });
});
