// The chart's Grafana dashboards, statically: well-formed, one per board the issue names, datasource as a variable,
// and queries whose metric names parse. That every name is really exposed is checked end to end
// (test/e2e/platform/metrics.e2e-spec.ts scrapes a loaded api and worker).
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { load } from 'js-yaml';
import { DASHBOARDS_DIR, dashboardQueries, loadDashboards, metricNamesOf } from '../support/dashboards';
import { dig, renderChart } from '../support/helm';

const chartDir = resolve(__dirname, '../../helm/hecate');

describe('helm chart: Grafana dashboards', () => {
  const dashboards = loadDashboards();

  it('ships the gateway, runtime, agents and events-feed boards with unique uids and titles', () => {
    expect(dashboards.map((d) => d.file)).toEqual(['agents.json', 'events.json', 'gateway.json', 'runtime.json']);
    expect(new Set(dashboards.map((d) => d.uid)).size).toBe(dashboards.length);
    expect(new Set(dashboards.map((d) => d.title)).size).toBe(dashboards.length);
    for (const d of dashboards) expect(d.uid).toMatch(/^hecate-[a-z-]+$/);
  });

  it('every panel query uses the datasource variable and names at least one hecate_ or gen_ai_ metric', () => {
    for (const d of dashboards) {
      expect(d.templating?.list?.find((v) => v.name === 'datasource')).toMatchObject({ query: 'prometheus' });
      const text = JSON.stringify(d.panels);
      expect(text).not.toMatch(/"uid":\s*"(?!\$\{datasource\})/);
    }
    const queries = dashboardQueries(dashboards);
    expect(queries.length).toBeGreaterThan(60);
    for (const q of queries) {
      const names = metricNamesOf(q.expr);
      expect({ ...q, names: names.filter((n) => /^(hecate_|gen_ai_)/.test(n)).length > 0 }).toMatchObject({ names: true });
    }
  });

  it('parses metric names out of PromQL (functions, label matchers, grouping, ranges and variables left out)', () => {
    expect(
      metricNamesOf(
        'histogram_quantile(0.95, sum by (le, route) (rate(hecate_http_request_duration_seconds_bucket{route=~"/v1/.*"}[$__rate_interval])))',
      ),
    ).toEqual(['hecate_http_request_duration_seconds_bucket']);
    expect(metricNamesOf('max by (queue) (a_jobs{state="active"}) / sum by (queue) (b_capacity) * 3600')).toEqual(['a_jobs', 'b_capacity']);
    expect(metricNamesOf('sum(increase(c_total[$__range])) or vector(0)')).toEqual(['c_total']);
    const variable = dashboardQueries().find((q) => q.dashboard === 'gateway.json' && q.panel === '$provider');
    expect(variable?.expr).toBe('hecate_gateway_requests_total');
  });

  it('are shipped as sidecar ConfigMaps only when dashboards.enabled, labelled grafana_dashboard by default', () => {
    const values = load(readFileSync(resolve(chartDir, 'values.yaml'), 'utf8')) as { dashboards: Record<string, unknown> };
    expect(values.dashboards).toEqual({ enabled: false, labels: { grafana_dashboard: '1' }, annotations: {} });
    const template = readFileSync(resolve(chartDir, 'templates/dashboards-configmap.yaml'), 'utf8');
    expect(template).toMatch(/^\{\{- if \.Values\.dashboards\.enabled \}\}/);
    expect(template).toContain('.Files.Glob "dashboards/*.json"');
    expect(template).toContain('$.Files.Get $path');
    expect(template).toContain('$.Values.dashboards.labels');
    expect(template).toContain('$.Values.dashboards.annotations');
  });

  it('render with helm as one ConfigMap per board holding the file as shipped, with the labels and annotations asked for', () => {
    const existingSecret = { secrets: { existingSecret: 'hecate-credentials' } };
    expect(renderChart(existingSecret).documents.filter((doc) => doc.kind === 'ConfigMap')).toEqual([]);
    const rendered = renderChart(existingSecret, { dashboards: { enabled: true, annotations: { 'grafana.example/folder': 'Hecate' } } });
    const configMaps = rendered.documents.filter((doc) => doc.kind === 'ConfigMap');
    expect(configMaps.map((doc) => dig(doc, 'metadata', 'name'))).toEqual(dashboards.map((d) => `rel-hecate-dashboards-${d.file.replace(/\.json$/, '')}`));
    for (const [i, configMap] of configMaps.entries()) {
      const file = dashboards[i].file;
      expect(dig(configMap, 'metadata', 'labels')).toMatchObject({ grafana_dashboard: '1', 'app.kubernetes.io/component': 'dashboards' });
      expect(dig(configMap, 'metadata', 'annotations')).toEqual({ 'grafana.example/folder': 'Hecate' });
      const data = dig(configMap, 'data') as Record<string, string>;
      expect(Object.keys(data)).toEqual([`hecate-${file}`]);
      expect(data[`hecate-${file}`]).toBe(readFileSync(resolve(DASHBOARDS_DIR, file), 'utf8').replace(/\n$/, ''));
    }
  });
});
