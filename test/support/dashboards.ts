import { readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

/** The chart's Grafana dashboards (helm/hecate/dashboards/*.json), as shipped. */
export const DASHBOARDS_DIR = resolve(__dirname, '../../helm/hecate/dashboards');

export interface DashboardQuery {
  dashboard: string;
  panel: string;
  expr: string;
}

interface Panel {
  title?: string;
  targets?: Array<{ expr?: string }>;
  panels?: Panel[];
}

export interface Dashboard {
  file: string;
  uid: string;
  title: string;
  panels: Panel[];
  templating?: { list?: Array<{ name: string; query?: unknown; definition?: string }> };
}

export function loadDashboards(): Dashboard[] {
  return readdirSync(DASHBOARDS_DIR)
    .filter((f) => f.endsWith('.json'))
    .sort()
    .map((file) => ({ file, ...(JSON.parse(readFileSync(join(DASHBOARDS_DIR, file), 'utf8')) as Omit<Dashboard, 'file'>) }));
}

/** Every PromQL expression of every panel (rows' nested panels included) and the selector of every query variable. */
export function dashboardQueries(dashboards = loadDashboards()): DashboardQuery[] {
  const out: DashboardQuery[] = [];
  for (const d of dashboards) {
    const walk = (panels: Panel[]) => {
      for (const p of panels) {
        for (const t of p.targets ?? []) if (t.expr) out.push({ dashboard: d.file, panel: p.title ?? '', expr: t.expr });
        walk(p.panels ?? []);
      }
    };
    walk(d.panels);
    // A query variable `label_values(<selector>, <label>)` reads the selector's metric.
    for (const v of d.templating?.list ?? []) {
      if (v.definition) out.push({ dashboard: d.file, panel: `$${v.name}`, expr: v.definition.replace(/^label_values\((.*),\s*\w+\)$/, '$1') });
    }
  }
  return out;
}

const KEYWORDS = new Set(['by', 'without', 'on', 'ignoring', 'group_left', 'group_right', 'bool', 'and', 'or', 'unless', 'offset', 'inf', 'nan']);

/**
 * The metric names a PromQL expression reads: identifiers outside label matchers, grouping clauses, strings, ranges and
 * Grafana variables, that are not functions (followed by `(`) or keywords.
 */
export function metricNamesOf(expr: string): string[] {
  const stripped = expr
    .replace(/"(?:[^"\\]|\\.)*"/g, '""')
    .replace(/\{[^}]*\}/g, ' ')
    .replace(/\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, ' ')
    .replace(/\[[^\]]*\]/g, ' ')
    .replace(/\$\{?\w+\}?/g, ' ');
  const names = new Set<string>();
  for (const m of stripped.matchAll(/[A-Za-z_:][A-Za-z0-9_:]*/g)) {
    const after = stripped.slice(m.index + m[0].length).trimStart();
    if (after.startsWith('(') || KEYWORDS.has(m[0].toLowerCase())) continue;
    names.add(m[0]);
  }
  return [...names];
}
