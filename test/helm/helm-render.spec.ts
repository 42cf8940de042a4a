// The chart rendered by the real `helm template` (helm 3.17, test/support/helm-binary.ts), then the manifests
// checked as Kubernetes would read them.
import { readdirSync } from 'node:fs';
import * as path from 'node:path';
import { CHART_DIR as chartDir, dig, isYamlMap, renderChart as render, type Rendered, type YamlMap } from '../support/helm';

const ciFile = (name: string): string => path.join(chartDir, 'ci', name);
const ciFiles = readdirSync(path.join(chartDir, 'ci')).filter((file) => file.endsWith('.yaml'));
const existingSecret = { secrets: { existingSecret: 'hecate-credentials' } };

const ofKind = (rendered: Rendered, kind: string): YamlMap[] => rendered.documents.filter((doc) => doc.kind === kind);
const named = (rendered: Rendered, kind: string, name: string): YamlMap => {
  const found = ofKind(rendered, kind).find((doc) => dig(doc, 'metadata', 'name') === name);
  if (!found) throw new Error(`no ${kind} ${name}; have ${ofKind(rendered, kind).map((doc) => String(dig(doc, 'metadata', 'name')))}`);
  return found;
};
const names = (docs: YamlMap[]): string[] => docs.map((doc) => String(dig(doc, 'metadata', 'name'))).sort();
const podSpec = (deployment: YamlMap): YamlMap => dig(deployment, 'spec', 'template', 'spec') as YamlMap;
const container = (deployment: YamlMap): YamlMap => dig(podSpec(deployment), 'containers', 0) as YamlMap;
const env = (deployment: YamlMap): Record<string, unknown> =>
  Object.fromEntries((dig(container(deployment), 'env') as YamlMap[]).map((entry) => [entry.name, entry.value ?? entry.valueFrom]));
const podLabels = (deployment: YamlMap): YamlMap => dig(deployment, 'spec', 'template', 'metadata', 'labels') as YamlMap;

/** A LabelSelector (matchLabels and the In / Exists expressions) against a label set. */
function selects(selector: unknown, labels: YamlMap): boolean {
  const matchLabels = (isYamlMap(dig(selector, 'matchLabels')) ? dig(selector, 'matchLabels') : selector) as YamlMap;
  const expressions = (dig(selector, 'matchExpressions') ?? []) as YamlMap[];
  const plain = Object.entries(matchLabels).filter(([key]) => key !== 'matchLabels' && key !== 'matchExpressions');
  return (
    plain.every(([key, value]) => labels[key] === value) &&
    expressions.every((expression) => {
      const key = String(expression.key);
      if (expression.operator === 'Exists') return key in labels;
      if (expression.operator === 'In') return (expression.values as unknown[]).includes(labels[key]);
      throw new Error(`operator ${String(expression.operator)} not handled`);
    })
  );
}

describe('helm chart: rendering', () => {
  it('refuses to render without credentials (secrets.existingSecret or secrets.values)', () => {
    expect(() => render()).toThrow(/secrets\.values\.databaseUrl is required when secrets\.existingSecret is empty/);
  });

  it.each(ciFiles)('ci/%s renders manifests Kubernetes can apply: unique names, selectors that select, scale targets that exist', (file) => {
    const rendered = render(ciFile(file));
    const seen = new Set<string>();
    for (const doc of rendered.documents) {
      expect([typeof doc.apiVersion, typeof doc.kind, typeof dig(doc, 'metadata', 'name')]).toEqual(['string', 'string', 'string']);
      const key = `${String(doc.kind)}/${String(dig(doc, 'metadata', 'name'))}`;
      expect(seen.has(key)).toBe(false);
      seen.add(key);
    }
    const deployments = ofKind(rendered, 'Deployment');
    const pods = deployments.map(podLabels);
    for (const deployment of deployments) {
      expect(selects(dig(deployment, 'spec', 'selector'), podLabels(deployment))).toBe(true);
      // No Deployment's selector may adopt another Deployment's pods.
      expect(deployments.filter((other) => selects(dig(deployment, 'spec', 'selector'), podLabels(other)))).toEqual([deployment]);
    }
    for (const doc of [...ofKind(rendered, 'PodDisruptionBudget'), ...ofKind(rendered, 'NetworkPolicy')]) {
      const selector = doc.kind === 'NetworkPolicy' ? dig(doc, 'spec', 'podSelector') : dig(doc, 'spec', 'selector');
      expect([key(doc), pods.some((labels) => selects(selector, labels))]).toEqual([key(doc), true]);
    }
    for (const service of ofKind(rendered, 'Service')) {
      expect([key(service), pods.some((labels) => selects(dig(service, 'spec', 'selector'), labels))]).toEqual([key(service), true]);
    }
    for (const scaler of [...ofKind(rendered, 'HorizontalPodAutoscaler'), ...ofKind(rendered, 'ScaledObject')]) {
      expect(names(deployments)).toContain(dig(scaler, 'spec', 'scaleTargetRef', 'name'));
    }
    const scaled = [...ofKind(rendered, 'HorizontalPodAutoscaler'), ...ofKind(rendered, 'ScaledObject')].map((doc) => dig(doc, 'spec', 'scaleTargetRef', 'name'));
    expect(new Set(scaled).size).toBe(scaled.length);
    for (const monitor of ofKind(rendered, 'ServiceMonitor')) {
      const services = ofKind(rendered, 'Service').filter((service) => selects(dig(monitor, 'spec', 'selector'), (dig(service, 'metadata', 'labels') ?? {}) as YamlMap));
      expect(services.length).toBe(1);
      const ports = (dig(services[0], 'spec', 'ports') as YamlMap[]).map((port) => port.name);
      expect(ports).toContain(dig(monitor, 'spec', 'endpoints', 0, 'port'));
    }
  });

  it('with no worker.pools renders the one worker Deployment of the chart before pools (name, selector, queues)', () => {
    const rendered = render(ciFile('values-ci.yaml'));
    expect(names(ofKind(rendered, 'Deployment'))).toEqual(['rel-hecate-api', 'rel-hecate-worker']);
    const worker = named(rendered, 'Deployment', 'rel-hecate-worker');
    expect(dig(worker, 'spec', 'selector', 'matchLabels')).toEqual({
      'app.kubernetes.io/name': 'hecate',
      'app.kubernetes.io/instance': 'rel',
      'app.kubernetes.io/component': 'worker',
    });
    expect(podLabels(worker)['hecate.dev/worker-pool']).toBe('default');
    expect(env(worker)).not.toHaveProperty('WORKER_QUEUES');
    expect(env(worker).GATEWAY_TASK_QUEUE_WORKERS).toBe('2');
    expect(names(ofKind(rendered, 'HorizontalPodAutoscaler'))).toEqual(['rel-hecate-worker']);
    expect(names(ofKind(rendered, 'PodDisruptionBudget'))).toEqual(['rel-hecate-api', 'rel-hecate-worker']);
    expect(names(ofKind(rendered, 'Service'))).toEqual(['rel-hecate-api', 'rel-hecate-worker-metrics']);
    expect(ofKind(rendered, 'ScaledObject')).toEqual([]);
    expect(ofKind(rendered, 'PersistentVolumeClaim')).toEqual([]);
    expect(ofKind(rendered, 'NetworkPolicy')).toEqual([]);
    expect(rendered.notes).toContain('default: deployment/rel-hecate-worker, queues: all, HPA 1-3 replicas.');
  });

  describe('two pools, KEDA, workspaces, NetworkPolicies (ci/values-pools.yaml)', () => {
    const rendered = render(ciFile('values-pools.yaml'));
    const runs = named(rendered, 'Deployment', 'rel-hecate-worker-runs');
    const system = named(rendered, 'Deployment', 'rel-hecate-worker-system');
    const api = named(rendered, 'Deployment', 'rel-hecate-api');

    it('renders a Deployment, a PodDisruptionBudget and a metrics Service per pool', () => {
      expect(names(ofKind(rendered, 'Deployment'))).toEqual(['rel-hecate-api', 'rel-hecate-worker-runs', 'rel-hecate-worker-system']);
      expect(names(ofKind(rendered, 'PodDisruptionBudget'))).toEqual(['rel-hecate-api', 'rel-hecate-worker-runs', 'rel-hecate-worker-system']);
      expect(dig(named(rendered, 'PodDisruptionBudget', 'rel-hecate-worker-system'), 'spec', 'minAvailable')).toBe(1);
      expect(dig(named(rendered, 'PodDisruptionBudget', 'rel-hecate-worker-runs'), 'spec', 'maxUnavailable')).toBe(1);
      expect(names(ofKind(rendered, 'Service'))).toEqual(['rel-hecate-api', 'rel-hecate-worker-runs-metrics', 'rel-hecate-worker-system-metrics']);
    });

    it('gives each pool its queues, concurrency, scheduling and env over the worker.* defaults', () => {
      expect(env(runs)).toMatchObject({ WORKER_QUEUES: 'runs', GATEWAY_TASK_QUEUE_WORKERS: '8', GATEWAY_DB_POOL_SIZE: '20' });
      expect(env(system)).toMatchObject({ WORKER_QUEUES: 'system', GATEWAY_TASK_QUEUE_WORKERS: '2' });
      expect(env(system)).not.toHaveProperty('GATEWAY_DB_POOL_SIZE');
      expect(podSpec(runs).nodeSelector).toEqual({ 'hecate.dev/pool': 'runs' });
      expect(podSpec(runs).tolerations).toEqual([{ key: 'hecate.dev/runs', operator: 'Exists', effect: 'NoSchedule' }]);
      expect(podSpec(system).nodeSelector).toBeUndefined();
      expect(container(system).resources).toEqual(container(runs).resources);
      expect(podLabels(runs)['hecate.dev/worker-pool']).toBe('runs');
    });

    it('scales the KEDA pool with a ScaledObject on its waiting jobs, and the other pool and the api with HPAs', () => {
      expect(names(ofKind(rendered, 'ScaledObject'))).toEqual(['rel-hecate-worker-runs']);
      const scaledObject = named(rendered, 'ScaledObject', 'rel-hecate-worker-runs');
      expect(scaledObject.apiVersion).toBe('keda.sh/v1alpha1');
      expect(dig(scaledObject, 'spec', 'scaleTargetRef', 'name')).toBe('rel-hecate-worker-runs');
      expect(dig(scaledObject, 'spec')).toMatchObject({ minReplicaCount: 1, maxReplicaCount: 8, pollingInterval: 15, cooldownPeriod: 300 });
      expect(dig(scaledObject, 'spec', 'triggers')).toEqual([
        {
          type: 'prometheus',
          metadata: {
            serverAddress: 'http://prometheus-operated.monitoring:9090',
            query: 'sum(max by (queue) (hecate_queue_jobs{queue=~"runs",state="waiting",namespace="hecate-ci"}))',
            threshold: '5',
            activationThreshold: '0',
          },
        },
      ]);
      // KEDA and the HPA own the replica counts.
      expect(dig(runs, 'spec', 'replicas')).toBeUndefined();
      expect(dig(system, 'spec', 'replicas')).toBeUndefined();
      expect(names(ofKind(rendered, 'HorizontalPodAutoscaler'))).toEqual(['rel-hecate-api', 'rel-hecate-worker-system']);
    });

    it('mounts the workspaces claim on every pool at GATEWAY_WORKSPACES_DIR, and not on the api', () => {
      const claim = named(rendered, 'PersistentVolumeClaim', 'rel-hecate-workspaces');
      expect(dig(claim, 'spec')).toEqual({ accessModes: ['ReadWriteMany'], storageClassName: 'nfs-client', resources: { requests: { storage: '5Gi' } } });
      for (const deployment of [runs, system]) {
        const volume = (podSpec(deployment).volumes as YamlMap[]).find((candidate) => candidate.name === 'workspaces');
        expect(volume).toEqual({ name: 'workspaces', persistentVolumeClaim: { claimName: 'rel-hecate-workspaces' } });
        const mount = (container(deployment).volumeMounts as YamlMap[]).find((candidate) => candidate.name === 'workspaces');
        expect(mount?.mountPath).toBe(env(deployment).GATEWAY_WORKSPACES_DIR);
        expect(mount?.mountPath).toBe('/var/lib/hecate/workspaces');
      }
      expect((podSpec(api).volumes as YamlMap[]).map((volume) => volume.name)).not.toContain('workspaces');
      expect(env(api)).not.toHaveProperty('GATEWAY_WORKSPACES_DIR');
    });

    it('limits the api to ingress on its port and the workers to metrics ingress and the configured egress', () => {
      const apiPolicy = named(rendered, 'NetworkPolicy', 'rel-hecate-api');
      expect(dig(apiPolicy, 'spec', 'policyTypes')).toEqual(['Ingress']);
      const apiRule = dig(apiPolicy, 'spec', 'ingress', 0) as YamlMap;
      expect(apiRule.ports).toEqual([{ port: 8765, protocol: 'TCP' }]);
      const from = apiRule.from as YamlMap[];
      expect(from.slice(0, 2)).toEqual([
        { namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'ingress-nginx' } } },
        { namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'monitoring' } } },
      ]);
      // The workers call the gateway back through the api Service.
      expect(selects(from[2].podSelector, podLabels(runs)) && selects(from[2].podSelector, podLabels(system))).toBe(true);

      const workerPolicy = named(rendered, 'NetworkPolicy', 'rel-hecate-worker');
      const selector = dig(workerPolicy, 'spec', 'podSelector');
      expect([selects(selector, podLabels(runs)), selects(selector, podLabels(system)), selects(selector, podLabels(api))]).toEqual([true, true, false]);
      expect(dig(workerPolicy, 'spec', 'policyTypes')).toEqual(['Ingress', 'Egress']);
      expect(dig(workerPolicy, 'spec', 'ingress')).toEqual([
        { ports: [{ port: 8766, protocol: 'TCP' }], from: [{ namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'monitoring' } } }] },
      ]);
      const egress = dig(workerPolicy, 'spec', 'egress') as YamlMap[];
      expect(egress.map((rule) => (rule.ports as YamlMap[]).map((port) => `${String(port.port)}/${String(port.protocol)}`))).toEqual([
        ['53/UDP', '53/TCP'],
        ['5432/TCP'],
        ['6379/TCP'],
        ['8765/TCP'],
        ['443/TCP'],
      ]);
      expect(egress[1].to).toEqual([{ ipBlock: { cidr: '10.20.0.0/24' } }]);
      expect(egress[2].to).toBeUndefined();
      expect(selects(dig(egress[3], 'to', 0, 'podSelector'), podLabels(api))).toBe(true);
      expect(egress[4].to).toEqual([{ ipBlock: { cidr: '0.0.0.0/0', except: ['10.0.0.0/8', '172.16.0.0/12', '192.168.0.0/16', '169.254.0.0/16'] } }]);
    });

    it('scrapes the api and every pool with a ServiceMonitor; pool metrics carry a pool label', () => {
      expect(names(ofKind(rendered, 'ServiceMonitor'))).toEqual(['rel-hecate-api', 'rel-hecate-worker-runs', 'rel-hecate-worker-system']);
      expect(dig(named(rendered, 'ServiceMonitor', 'rel-hecate-worker-runs'), 'spec', 'endpoints', 0)).toMatchObject({
        port: 'health',
        path: '/metrics',
        relabelings: [{ targetLabel: 'pool', replacement: 'runs' }],
      });
    });

    it('lists the pools and the workspaces claim in NOTES.txt', () => {
      expect(rendered.notes).toContain('runs: deployment/rel-hecate-worker-runs, queues: runs, KEDA 1-8 replicas.');
      expect(rendered.notes).toContain('system: deployment/rel-hecate-worker-system, queues: system, HPA 1-2 replicas.');
      expect(rendered.notes).toContain('Workspaces: PersistentVolumeClaim "rel-hecate-workspaces" at /var/lib/hecate/workspaces');
    });
  });

  it('merges a pool’s keda over worker.keda key by key, keeps the name of a pool called default, and queries every queue for a pool without queues', () => {
    const rendered = render(existingSecret, {
      workspaces: { persistence: { enabled: true, existingClaim: 'shared-workspaces', storageClass: '-' } },
      worker: {
        keda: { enabled: true, serverAddress: 'http://prometheus:9090', minReplicaCount: 0 },
        pools: [{ name: 'default' }, { name: 'gpu', queues: ['runs'], keda: { enabled: false } }],
      },
    });
    expect(names(ofKind(rendered, 'Deployment'))).toEqual(['rel-hecate-api', 'rel-hecate-worker', 'rel-hecate-worker-gpu']);
    expect(names(ofKind(rendered, 'ScaledObject'))).toEqual(['rel-hecate-worker']);
    const scaledObject = named(rendered, 'ScaledObject', 'rel-hecate-worker');
    expect(dig(scaledObject, 'spec', 'minReplicaCount')).toBe(0);
    expect(dig(scaledObject, 'spec', 'triggers', 0, 'metadata', 'query')).toBe('sum(max by (queue) (hecate_queue_jobs{queue=~".+",state="waiting"}))');
    expect(dig(named(rendered, 'Deployment', 'rel-hecate-worker-gpu'), 'spec', 'replicas')).toBe(2);
    expect(ofKind(rendered, 'PersistentVolumeClaim')).toEqual([]);
    const volumes = podSpec(named(rendered, 'Deployment', 'rel-hecate-worker-gpu')).volumes as YamlMap[];
    expect(volumes.find((volume) => volume.name === 'workspaces')).toEqual({ name: 'workspaces', persistentVolumeClaim: { claimName: 'shared-workspaces' } });
  });

  it('renders a storageClassName of "" for storageClass "-" and nothing for worker.enabled=false', () => {
    const claim = render(existingSecret, { workspaces: { persistence: { enabled: true, storageClass: '-' } } }).documents.find(
      (doc) => doc.kind === 'PersistentVolumeClaim',
    );
    expect(dig(claim, 'spec', 'storageClassName')).toBe('');
    const noWorkers = render(existingSecret, { worker: { enabled: false }, workspaces: { persistence: { enabled: true } }, networkPolicy: { enabled: true } });
    expect(names(noWorkers.documents.filter((doc) => dig(doc, 'metadata', 'labels', 'app.kubernetes.io/component') !== 'api'))).toEqual([
      'rel-hecate',
      'rel-hecate-migrate',
    ]);
  });

  it.each([
    ['ci/values-ci.yaml', [ciFile('values-ci.yaml')]],
    ['ci/values-pools.yaml', [ciFile('values-pools.yaml')]],
    ['a preStop sleep and a long grace', [existingSecret, { config: { shutdownGraceMs: 90500 }, api: { preStopSleepSeconds: 10 }, worker: { preStopSleepSeconds: 3 } }]],
  ] as Array<[string, Array<string | YamlMap>]>)(
    'drains gracefully (%s): every pod outlasts preStop + GATEWAY_SHUTDOWN_GRACE_MS, which comes from one value',
    (_name, values) => {
      for (const deployment of ofKind(render(...values), 'Deployment')) {
        const graceMs = Number(env(deployment).GATEWAY_SHUTDOWN_GRACE_MS);
        const preStop = Number(dig(container(deployment), 'lifecycle', 'preStop', 'exec', 'command', 1) ?? 0);
        expect(podSpec(deployment).terminationGracePeriodSeconds).toBe(preStop + Math.ceil(graceMs / 1000) + 15);
      }
    },
  );

  it.each([
    ['two pools with one name', { worker: { pools: [{ name: 'a' }, { name: 'a' }] } }, /worker\.pools: two pools are named "a"/],
    ['KEDA without a Prometheus address', { worker: { keda: { enabled: true } } }, /worker\.pools\[default\]\.keda\.serverAddress is required/],
    ['KEDA min above max', { worker: { keda: { enabled: true, serverAddress: 'http://p:9090', minReplicaCount: 5, maxReplicaCount: 2 } } }, /minReplicaCount must not exceed/],
    ['the shutdown grace through env', { env: { GATEWAY_SHUTDOWN_GRACE_MS: '60000' } }, /GATEWAY_SHUTDOWN_GRACE_MS is set by the chart from config\.shutdownGraceMs/],
    ['queues through a pool’s extraEnv', { worker: { pools: [{ name: 'x', extraEnv: [{ name: 'WORKER_QUEUES', value: 'runs' }] }] } }, /worker\.pools\[x\]\.env \/ extraEnv: WORKER_QUEUES/],
    ['the workspaces dir through worker.env', { worker: { env: { GATEWAY_WORKSPACES_DIR: '/w' } } }, /GATEWAY_WORKSPACES_DIR is set by the chart from workspaces\.path/],
    ['an HPA whose min exceeds max', { worker: { pools: [{ name: 'x', autoscaling: { enabled: true, minReplicas: 4, maxReplicas: 2 } }] } }, /worker\.pools\[x\]\.autoscaling\.minReplicas/],
  ] as Array<[string, YamlMap, RegExp]>)('refuses %s', (_name, values, message) => {
    expect(() => render(existingSecret, values)).toThrow(message);
  });
});

function key(doc: YamlMap): string {
  return `${String(doc.kind)}/${String(dig(doc, 'metadata', 'name'))}`;
}
