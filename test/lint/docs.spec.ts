import 'reflect-metadata';
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { declaredVariables } from '@core/config/config-warnings';
import { AgentEnv } from '@core/config/groups/agent.env';
import { ChatEnv } from '@core/config/groups/chat.env';
import { GatewayEnv } from '@core/config/groups/gateway.env';
import { McpEnv } from '@core/config/groups/mcp.env';
import { PlatformEnv } from '@core/config/groups/platform.env';
import { SandboxLimitsEnv } from '@core/config/groups/sandbox-limits.env';
import { TasksEnv } from '@core/config/groups/tasks.env';

const root = resolve(__dirname, '../..');
const read = (p: string) => readFileSync(join(root, p), 'utf8');

/** `GATEWAY_RETENTION_*_MAX_AGE` in the docs covers `GATEWAY_RETENTION_RUN_EVENTS_MAX_AGE`; `…_MAX_COUNT` after a full name covers its sibling. */
function documented(name: string, doc: string): boolean {
  if (new RegExp(`\\b${name}\\b`).test(doc)) return true;
  const patterns = doc.match(/[A-Z][A-Z0-9_]*\*[A-Z0-9_*]*/g) ?? [];
  if (patterns.some((p) => new RegExp(`^${p.replaceAll('*', '[A-Z0-9_]*')}$`).test(name))) return true;
  // "`GATEWAY_X_MAX_AGE` / `_MAX_COUNT`" and "`PROVIDER_<NAME>_BASE_URL`, `_API_KEY`": a suffix after a documented stem.
  const suffixes = [...doc.matchAll(/`(_[A-Z0-9_]+)`/g)].map((m) => m[1]);
  return suffixes.some((s) => name.endsWith(s) && doc.includes(name.slice(0, name.length - s.length)));
}

describe('the documents in docs/ are true', () => {
  it('docs/configuration.md names every variable the loader declares', () => {
    const doc = read('docs/configuration.md');
    const names = declaredVariables([PlatformEnv, GatewayEnv, ChatEnv, TasksEnv, AgentEnv, SandboxLimitsEnv, McpEnv]);
    expect(names.length).toBeGreaterThan(50);
    expect(names.filter((n) => !documented(n, doc))).toEqual([]);
  });

  it('every relative link of the README and docs/ reaches a file', () => {
    const pages = [
      'README.md',
      ...readdirSync(join(root, 'docs'))
        .filter((f) => f.endsWith('.md'))
        .map((f) => `docs/${f}`),
    ];
    const broken: string[] = [];
    for (const page of pages) {
      for (const [, target] of read(page).matchAll(/\]\(([^)#\s]+)(?:#[^)]*)?\)/g)) {
        if (/^[a-z]+:/.test(target)) continue;
        if (!existsSync(resolve(root, dirname(page), target))) broken.push(`${page} → ${target}`);
      }
    }
    expect(broken).toEqual([]);
  });

  it("the README's module table names every folder of src/modules, and only those", () => {
    const readme = read('README.md');
    const table = readme.slice(readme.indexOf('The modules and who builds them'), readme.indexOf('`WorkerModule.workerOnlyModules`'));
    const named = [...table.matchAll(/^\s*\| `([a-z/-]+)`/gm)].map((m) => m[1]);
    const folders = readdirSync(join(root, 'src/modules'), { withFileTypes: true }).filter((d) => d.isDirectory());
    expect(named.filter((n) => !n.includes('/')).sort()).toEqual(folders.map((d) => d.name).sort());
    // A row for a part of a module (`tasks/runners`) names a folder that exists too.
    for (const part of named.filter((n) => n.includes('/'))) expect([part, existsSync(join(root, 'src/modules', part))]).toEqual([part, true]);
  });

  it("path templates in the README, the SDK README and docs/ are the OpenAPI document's, parameters spelt as it spells them", () => {
    // The document `npm run build` writes (the same one GET /openapi.json serves).
    const document = JSON.parse(read('libs/sdk/openapi.json')) as { paths: Record<string, unknown> };
    const paths = Object.keys(document.paths);
    const names = new Set(paths.flatMap((p) => [...p.matchAll(/\{([^}]*)\}/g)].map((m) => m[1])));
    const pages = [
      'README.md',
      'libs/sdk/README.md',
      ...readdirSync(join(root, 'docs'))
        .filter((f) => f.endsWith('.md'))
        .map((f) => `docs/${f}`),
    ];
    const wrong: string[] = [];
    let checked = 0;
    for (const page of pages) {
      // `/hecate/v1/…` and `/v1/…` templates, and the `…/{x}/…` shorthand of the tables.
      for (const [template] of read(page).matchAll(/(?:…|\/hecate\/v1|(?<![\w:/])\/v1)\/[^\s`|]*\{[^\s`|]*/g)) {
        checked++;
        const unknown = [...template.matchAll(/\{([^}]*)\}/g)].map((m) => m[1]).filter((name) => !names.has(name));
        if (unknown.length > 0) wrong.push(`${page}: ${template} ({${unknown.join('}, {')}} is no path parameter of the document)`);
        const full = template.match(/^\/(?:hecate\/)?v1\/[\w/{}.-]*/)?.[0].replace(/\/$/, '');
        if (full && !paths.some((p) => p === full || p.startsWith(`${full}/`))) wrong.push(`${page}: ${full} is no path of the document`);
      }
    }
    expect(checked).toBeGreaterThan(40);
    expect([...names].filter((name) => !/^[a-z][a-z0-9_]*$/.test(name))).toEqual([]);
    expect(wrong).toEqual([]);
  });

  it('comments in src/ and libs/ cite documents in the repository, never the seeds, DESIGN, STYLE or an issue', () => {
    const out = execFileSync(process.execPath, [join(root, 'test/lint/code-metrics.mjs'), '--json'], { encoding: 'utf8' });
    const metrics = JSON.parse(out) as { outsideDocCitationSites: string[] };
    expect(metrics.outsideDocCitationSites).toEqual([]);
  });
});
