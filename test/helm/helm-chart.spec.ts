// Checks of the deployment artefacts (Helm chart, docker-compose.yml, Dockerfile). The values are
// validated against the chart's JSON Schema with Ajv and by helm itself, the chart passes `helm lint
// --strict`, and every template renders with the real helm (no Docker engine is needed).
// helm-render.spec.ts checks the rendered manifests; helm-values.spec.ts checks what the templates reference.
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import * as path from 'node:path';
import Ajv, { type AnySchemaObject, type ErrorObject, type ValidateFunction } from 'ajv';
import { CORE_SCHEMA, load, loadAll, mergeTag } from 'js-yaml';
import { readSchema } from '../support/chart-values/values-schema';
import { dig, isYamlMap as isMap, lintChart, mergeValues, readYamlMap, renderChart, type Rendered, type YamlMap } from '../support/helm';

const repoRoot = path.resolve(__dirname, '../..');
const chartDir = path.join(repoRoot, 'helm', 'hecate');
const templatesDir = path.join(chartDir, 'templates');

function readText(...segments: string[]): string {
  return readFileSync(path.join(...segments), 'utf8');
}

function describeErrors(errors: ErrorObject[] | null | undefined): string[] {
  return (errors ?? []).map((error) => `${error.instancePath || '/'} ${error.message ?? error.keyword}`);
}

/**
 * Crude neutralisation of Go template actions so that a template can be parsed as YAML:
 * lines made only of actions (`{{- if ... }}`, `{{- end }}`, `{{- include ... | nindent 4 }}`)
 * are dropped, inline actions become unique placeholders (unique, so templated keys do not collide).
 */
function neutraliseTemplate(source: string): string {
  let counter = 0;
  return source
    .split('\n')
    .filter((line) => !/^\s*(?:\{\{.*?\}\}\s*)+$/.test(line))
    .map((line) => line.replace(/\{\{.*?\}\}/g, () => `tpl-placeholder-${++counter}`))
    .join('\n');
}

function templateFiles(): string[] {
  return readdirSync(templatesDir)
    .filter((file) => file !== '_helpers.tpl' && file !== 'NOTES.txt')
    .sort();
}

function templateDocuments(file: string): YamlMap[] {
  const documents = loadAll(neutraliseTemplate(readText(templatesDir, file)));
  return documents.filter(isMap);
}

function findDocument(file: string, kind: string): YamlMap {
  const document = templateDocuments(file).find((candidate) => candidate.kind === kind);
  if (!document) throw new Error(`${file} has no ${kind}`);
  return document;
}

describe('helm chart: values.schema.json', () => {
  const schema: AnySchemaObject = readSchema(chartDir);
  const defaults = readYamlMap(path.join(chartDir, 'values.yaml'));
  const ciFiles = readdirSync(path.join(chartDir, 'ci')).filter((file) => file.endsWith('.yaml'));
  let validate: ValidateFunction;

  beforeAll(() => {
    const ajv = new Ajv({ allErrors: true, strict: false });
    validate = ajv.compile(schema);
  });

  function errorsFor(values: unknown): string[] {
    return validate(values) ? [] : describeErrors(validate.errors);
  }

  it('is a draft-07 schema that rejects unknown top-level keys', () => {
    expect(schema.$schema).toBe('http://json-schema.org/draft-07/schema#');
    expect(schema.type).toBe('object');
    expect(schema.additionalProperties).toBe(false);
  });

  it('accepts values.yaml', () => {
    expect(errorsFor(defaults)).toEqual([]);
  });

  it.each(ciFiles)('accepts ci/%s on its own and coalesced over values.yaml (as Helm validates it)', (file) => {
    const ciValues = readYamlMap(path.join(chartDir, 'ci', file));
    expect(errorsFor(ciValues)).toEqual([]);
    expect(errorsFor(mergeValues(defaults, ciValues))).toEqual([]);
  });

  it.each(ciFiles)('passes helm lint --strict with ci/%s', (file) => {
    expect(lintChart(path.join(chartDir, 'ci', file))).toContain('1 chart(s) linted, 0 chart(s) failed');
  });

  it('is enforced by helm itself: a wrong type, an unknown key and a bad enum are refused before rendering', () => {
    const withSecret = { secrets: { existingSecret: 'hecate-credentials' } };
    const schemaError = /values don't meet the specifications of the schema/;
    expect(() => renderChart(withSecret, { api: { replicaCount: 'two' } })).toThrow(schemaError);
    expect(() => renderChart(withSecret, { api: { replicaCount: 'two' } })).toThrow(/api\.replicaCount: Invalid type\. Expected: integer, given: string/);
    expect(() => renderChart(withSecret, { replicaCount: 2 })).toThrow(/\(root\): Additional property replicaCount is not allowed/);
    expect(() => renderChart(withSecret, { worker: { queue: 'tasks' } })).toThrow(/worker: Additional property queue is not allowed/);
    expect(() => renderChart(withSecret, { image: { pullPolicy: 'Sometimes' } })).toThrow(/image\.pullPolicy must be one of the following/);
    expect(() => lintChart(withSecret, { api: { replicaCount: 'two' } })).toThrow(/1 chart\(s\) failed/);
  });

  it('rejects a pool without a name or with a key worker.* does not have, and bad KEDA / NetworkPolicy / workspaces values', () => {
    expect(errorsFor(mergeValues(defaults, { worker: { pools: [{ queues: ['runs'] }] } }))).toContain("/worker/pools/0 must have required property 'name'");
    expect(errorsFor(mergeValues(defaults, { worker: { pools: [{ name: 'runs', healthPort: 9000 }] } }))).toContain(
      '/worker/pools/0 must NOT have additional properties',
    );
    expect(errorsFor(mergeValues(defaults, { worker: { pools: [{ name: 'Runs!' }] } })).length).toBeGreaterThan(0);
    expect(errorsFor(mergeValues(defaults, { worker: { pools: [{ name: 'runs', maxOldSpaceSizeMb: 1024 }] } }))).toEqual([]);
    expect(errorsFor(mergeValues(defaults, { api: { maxOldSpaceSizeMb: 16 } })).length).toBeGreaterThan(0);
    expect(errorsFor(mergeValues(defaults, { worker: { keda: { threshold: 0 } } })).length).toBeGreaterThan(0);
    expect(errorsFor(mergeValues(defaults, { worker: { keda: { serverAddress: 'prometheus:9090' } } })).length).toBeGreaterThan(0);
    expect(errorsFor(mergeValues(defaults, { networkPolicy: { workers: { egress: { cidrs: [{ cidr: 'everywhere' }] } } } })).length).toBeGreaterThan(0);
    expect(errorsFor(mergeValues(defaults, { workspaces: { persistence: { accessModes: ['ReadWriteSometimes'] } } })).length).toBeGreaterThan(0);
    expect(errorsFor(mergeValues(defaults, { workspaces: { path: 'relative/dir' } })).length).toBeGreaterThan(0);
  });

  it('rejects a wrong type', () => {
    const errors = errorsFor(mergeValues(defaults, { api: { replicaCount: 'two' } }));
    expect(errors).toContain('/api/replicaCount must be integer');
  });

  it('rejects an unknown top-level key', () => {
    expect(validate(mergeValues(defaults, { replicaCount: 2 }))).toBe(false);
    expect(validate.errors).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ keyword: 'additionalProperties', params: { additionalProperty: 'replicaCount' } }),
      ]),
    );
  });

  it('rejects unknown nested keys, bad enums and a malformed GATEWAY_SECRET_KEY', () => {
    expect(errorsFor(mergeValues(defaults, { worker: { queue: 'tasks' } }))).toContain(
      '/worker must NOT have additional properties',
    );
    expect(errorsFor(mergeValues(defaults, { image: { pullPolicy: 'Sometimes' } }))).toContain(
      '/image/pullPolicy must be equal to one of the allowed values',
    );
    expect(errorsFor(mergeValues(defaults, { secrets: { values: { secretKey: 'too-short' } } })).length).toBeGreaterThan(0);
    expect(errorsFor(mergeValues(defaults, { worker: { queues: ['a,b'] } })).length).toBeGreaterThan(0);
  });

  it('declares a default in values.yaml for every property it describes (apart from documented optional ones)', () => {
    // Optional on purpose: `global` is injected by Helm for subcharts; the others are commented
    // examples in values.yaml whose absence means "derive" or "use the Kubernetes default".
    const optional = new Set(['global', 'terminationGracePeriodSeconds', 'minAvailable', 'initialDelaySeconds', 'successThreshold']);
    const definitions = isMap(schema.definitions) ? schema.definitions : {};
    const resolve = (node: unknown): unknown => {
      const ref = dig(node, '$ref');
      return typeof ref === 'string' ? definitions[ref.replace('#/definitions/', '')] : node;
    };
    const missing: string[] = [];
    const walk = (schemaNode: unknown, value: unknown, at: string): void => {
      const resolved = resolve(schemaNode);
      const properties = dig(resolved, 'properties');
      if (!isMap(properties) || !isMap(value)) return;
      for (const [key, child] of Object.entries(properties)) {
        if (key in value) walk(child, value[key], `${at}.${key}`);
        else if (!optional.has(key)) missing.push(`${at}.${key}`);
      }
    };
    walk(schema, defaults, 'values');
    expect(missing).toEqual([]);
  });
});

describe('helm chart: Chart.yaml', () => {
  it('is an apiVersion v2 chart named hecate with a semver version', () => {
    const chart = readYamlMap(path.join(chartDir, 'Chart.yaml'));
    expect(chart.apiVersion).toBe('v2');
    expect(chart.name).toBe('hecate');
    expect(chart.version).toEqual(expect.stringMatching(/^\d+\.\d+\.\d+(?:-[0-9A-Za-z.-]+)?$/));
    expect(typeof chart.appVersion).toBe('string');
  });
});

describe('helm chart: templates', () => {
  const helpers = readText(templatesDir, '_helpers.tpl');
  const files = templateFiles();
  let everything: Rendered | undefined;
  let chartSecret: Rendered | undefined;

  it('has the expected templates', () => {
    expect(files).toEqual(
      expect.arrayContaining([
        'api-deployment.yaml',
        'api-service.yaml',
        'worker-deployment.yaml',
        'migrations-job.yaml',
        'pdb.yaml',
        'hpa.yaml',
        'serviceaccount.yaml',
        'secret.yaml',
        'worker-scaledobject.yaml',
        'workspaces-pvc.yaml',
        'networkpolicy.yaml',
        'servicemonitor.yaml',
      ]),
    );
    expect(existsSync(path.join(templatesDir, 'NOTES.txt'))).toBe(true);
  });

  it.each(files)('%s parses as YAML once template actions are neutralised, with kind and apiVersion', (file) => {
    const source = readText(templatesDir, file);
    expect(source).toMatch(/^kind:/m);
    expect(source).toMatch(/^apiVersion:/m);
    const documents = templateDocuments(file);
    expect(documents.length).toBeGreaterThan(0);
    for (const document of documents) {
      expect(typeof document.kind).toBe('string');
      expect(typeof document.apiVersion).toBe('string');
    }
  });

  it.each([...files, '_helpers.tpl', 'NOTES.txt'])('%s has balanced template actions and only includes defined helpers', (file) => {
    const source = readText(templatesDir, file);
    expect(source.split('{{').length).toBe(source.split('}}').length);
    const openers = source.match(/\{\{-?\s*(?:if|range|with|define)\b/g) ?? [];
    const ends = source.match(/\{\{-?\s*end\s*-?\}\}/g) ?? [];
    expect(ends.length).toBe(openers.length);
    const defined = new Set([...helpers.matchAll(/define "([^"]+)"/g)].map((match) => match[1]));
    const included = [...source.matchAll(/include "([^"]+)"/g)].map((match) => match[1]);
    expect(included.filter((name) => !defined.has(name))).toEqual([]);
  });

  it.each(files)('%s renders with helm to manifests with kind and apiVersion (every feature on, or chart-rendered credentials)', (file) => {
    everything ??= renderChart(path.join(chartDir, 'ci', 'values-pools.yaml'), { dashboards: { enabled: true }, api: { ingress: { enabled: true } } });
    chartSecret ??= renderChart(path.join(chartDir, 'ci', 'values-ci.yaml'));
    const rendered = everything.sources.get(file) ?? chartSecret.sources.get(file) ?? [];
    expect(rendered.length).toBeGreaterThan(0);
    for (const document of rendered) {
      expect(typeof document.kind).toBe('string');
      expect(typeof document.apiVersion).toBe('string');
      expect(typeof dig(document, 'metadata', 'name')).toBe('string');
    }
  });

  it('api Deployment probes /healthz (liveness) and /readyz (readiness) on its http port', () => {
    const container = dig(findDocument('api-deployment.yaml', 'Deployment'), 'spec', 'template', 'spec', 'containers', 0);
    expect(dig(container, 'args')).toEqual(['node', '--min-semi-space-size=32', '--max-semi-space-size=32', '--heap-growing-percent=30', expect.stringMatching(/^--max-old-space-size=/), 'dist/src/main.api.js']);
    expect(readText(templatesDir, 'api-deployment.yaml')).toContain('"--max-old-space-size={{ int $api.maxOldSpaceSizeMb }}"');
    expect(dig(container, 'livenessProbe', 'httpGet')).toEqual({ path: '/healthz', port: 'http' });
    expect(dig(container, 'readinessProbe', 'httpGet')).toEqual({ path: '/readyz', port: 'http' });
  });

  it('worker Deployment runs main.worker.js and probes its side port', () => {
    const podSpec = dig(findDocument('worker-deployment.yaml', 'Deployment'), 'spec', 'template', 'spec');
    const container = dig(podSpec, 'containers', 0);
    expect(dig(container, 'args')).toEqual(['node', '--min-semi-space-size=32', '--max-semi-space-size=32', '--heap-growing-percent=30', expect.stringMatching(/^--max-old-space-size=/), 'dist/src/main.worker.js']);
    expect(readText(templatesDir, 'worker-deployment.yaml')).toContain('"--max-old-space-size={{ int $pool.maxOldSpaceSizeMb }}"');
    expect(dig(container, 'ports', 0, 'name')).toBe('health');
    expect(dig(container, 'livenessProbe', 'httpGet')).toEqual({ path: '/healthz', port: 'health' });
    expect(dig(container, 'readinessProbe', 'httpGet')).toEqual({ path: '/readyz', port: 'health' });
    expect(readText(templatesDir, 'worker-deployment.yaml')).toContain('name: WORKER_QUEUES');
  });

  it('every pod sets terminationGracePeriodSeconds through the helper that enforces > GATEWAY_SHUTDOWN_GRACE_MS', () => {
    for (const file of ['api-deployment.yaml', 'worker-deployment.yaml']) {
      expect(readText(templatesDir, file)).toContain('terminationGracePeriodSeconds: {{ include "hecate.terminationGracePeriodSeconds"');
    }
    expect(helpers).toMatch(/fail \(printf "%s\.terminationGracePeriodSeconds/);
  });

  it('migrations run as a pre-install/pre-upgrade hook Job that is cleaned up', () => {
    const job = findDocument('migrations-job.yaml', 'Job');
    expect(dig(job, 'metadata', 'annotations', 'helm.sh/hook')).toBe('pre-install,pre-upgrade');
    expect(dig(job, 'metadata', 'annotations', 'helm.sh/hook-delete-policy')).toEqual(expect.stringContaining('before-hook-creation'));
    expect(dig(job, 'spec', 'template', 'spec', 'containers', 0, 'args')).toEqual(['node', 'dist/src/main.migrate.js']);
    // Its ServiceAccount and the chart-rendered Secret must exist before it runs.
    for (const [file, kind] of [['serviceaccount.yaml', 'ServiceAccount'], ['secret.yaml', 'Secret']]) {
      expect(readText(templatesDir, file)).toContain('include "hecate.preInstallHookAnnotations"');
      expect(findDocument(file, kind).kind).toBe(kind);
    }
    expect(helpers).toMatch(/helm\.sh\/hook-weight: "-10"/);
  });

  it('reads the four credentials through secretKeyRef, from existingSecret when set', () => {
    for (const name of ['DATABASE_URL', 'REDIS_URL', 'GATEWAY_AUTH_TOKEN', 'GATEWAY_SECRET_KEY']) {
      expect(helpers).toMatch(new RegExp(`- name: ${name}\\n\\s+valueFrom:\\n\\s+secretKeyRef:`));
    }
    expect(helpers).toContain('.Values.secrets.existingSecret');
  });

  it('has PodDisruptionBudgets and HorizontalPodAutoscalers on the autoscaling/v2 and policy/v1 APIs', () => {
    expect(findDocument('pdb.yaml', 'PodDisruptionBudget').apiVersion).toBe('policy/v1');
    expect(findDocument('hpa.yaml', 'HorizontalPodAutoscaler').apiVersion).toBe('autoscaling/v2');
  });

  it('runs pods as the image user (uid 10001), non-root', () => {
    const values = readYamlMap(path.join(chartDir, 'values.yaml'));
    expect(dig(values, 'podSecurityContext', 'runAsNonRoot')).toBe(true);
    expect(dig(values, 'podSecurityContext', 'runAsUser')).toBe(10001);
    expect(dig(values, 'containerSecurityContext', 'allowPrivilegeEscalation')).toBe(false);
  });
});

describe('docker-compose.yml', () => {
  // Compose resolves YAML merge keys (`<<: *anchor`); the js-yaml core schema needs the tag added.
  const compose = load(readText(repoRoot, 'docker-compose.yml'), { schema: CORE_SCHEMA.withTags(mergeTag) });
  const services = dig(compose, 'services');

  it('defines postgres, redis, migrate, api and worker', () => {
    expect(isMap(services)).toBe(true);
    expect(Object.keys(isMap(services) ? services : {})).toEqual(
      expect.arrayContaining(['postgres', 'redis', 'migrate', 'api', 'worker']),
    );
  });

  it('runs redis with maxmemory-policy noeviction and append-only persistence', () => {
    const command = dig(services, 'redis', 'command');
    const text = Array.isArray(command) ? command.join(' ') : String(command);
    expect(text).toContain('--maxmemory-policy noeviction');
    expect(text).toContain('--appendonly yes');
  });

  it('migrates before the api and the worker start', () => {
    expect(dig(services, 'migrate', 'command')).toEqual(['node', 'dist/src/main.migrate.js']);
    expect(dig(services, 'migrate', 'depends_on', 'postgres', 'condition')).toBe('service_healthy');
    for (const name of ['api', 'worker']) {
      expect(dig(services, name, 'depends_on', 'migrate', 'condition')).toBe('service_completed_successfully');
    }
    expect(dig(services, 'worker', 'command')).toEqual(['node', '--min-semi-space-size=32', '--max-semi-space-size=32', '--heap-growing-percent=30', '--max-old-space-size=512', 'dist/src/main.worker.js']);
  });

  it('refuses to start the app without GATEWAY_AUTH_TOKEN and gives processes time to drain', () => {
    for (const name of ['migrate', 'api', 'worker']) {
      expect(dig(services, name, 'environment', 'GATEWAY_AUTH_TOKEN')).toEqual(expect.stringMatching(/^\$\{GATEWAY_AUTH_TOKEN:\?.+\}$/));
      const grace = String(dig(services, name, 'stop_grace_period'));
      const shutdownGraceMs = Number(dig(services, name, 'environment', 'GATEWAY_SHUTDOWN_GRACE_MS'));
      expect(Number.parseInt(grace, 10) * 1000).toBeGreaterThan(shutdownGraceMs);
    }
  });

  it('keeps Postgres and Redis data in named volumes', () => {
    const volumes = dig(compose, 'volumes');
    expect(isMap(volumes)).toBe(true);
    for (const [name, mount] of [['postgres', '/var/lib/postgresql/data'], ['redis', '/data']]) {
      const serviceVolumes = dig(services, name, 'volumes');
      const entry = Array.isArray(serviceVolumes) ? serviceVolumes.find((item) => String(item).endsWith(`:${mount}`)) : undefined;
      const volumeName = String(entry).split(':')[0];
      expect(isMap(volumes) && volumeName in volumes).toBe(true);
    }
  });
});

describe('Dockerfile', () => {
  const dockerfile = readText(repoRoot, 'Dockerfile');

  it('builds on node:24-bookworm-slim in two stages and prunes dev dependencies', () => {
    expect(dockerfile).toContain('ARG NODE_IMAGE=node:24-bookworm-slim');
    expect(dockerfile).not.toMatch(/node:2[02]-/);
    expect(dockerfile.match(/^FROM /gm)?.length).toBe(2);
    expect(dockerfile).toMatch(/npm ci\b/);
    expect(dockerfile).toContain('npm prune --omit=dev');
  });

  it('runs as uid 10001 with bubblewrap and git installed and the api as default command', () => {
    expect(dockerfile).toMatch(/^USER 10001/m);
    expect(dockerfile).toMatch(/apt-get install[^\n]*\bbubblewrap\b[^\n]*\bgit\b/);
    expect(dockerfile).toMatch(/^CMD \["node", "--min-semi-space-size=32", "--max-semi-space-size=32", "--heap-growing-percent=30", "--max-old-space-size=256", "dist\/src\/main\.api\.js"\]$/m);
    expect(dockerfile).toMatch(/HOST=0\.0\.0\.0/);
    expect(dockerfile).toMatch(/^\s+MALLOC_ARENA_MAX=2$/m);
  });
});
