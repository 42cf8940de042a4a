import { mkdirSync, mkdtempSync, symlinkSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { loadConfig } from '../config.loader';
import { installationRoot } from '../installation';
import { defaultAdaptersDir } from './agent.env';

describe('agent config: the adapters directory', () => {
  const cache = join(homedir(), '.cache');

  it('is one per installation by default: two install roots, two launcher directories', () => {
    const machine = mkdtempSync(join(tmpdir(), 'hecate-installs-'));
    const first = join(machine, 'one', 'hecate-server');
    const second = join(machine, 'two', 'hecate-server');
    for (const root of [first, second]) mkdirSync(root, { recursive: true });
    const [a, b] = [defaultAdaptersDir(first, cache), defaultAdaptersDir(second, cache)];
    expect(a).not.toBe(b);
    for (const dir of [a, b]) expect(dir).toMatch(new RegExp(`^${cache}/hecate/agent-adapters/hecate-server-[0-9a-f]{12}$`));
    // The same installation reached through a symlink is the same installation.
    symlinkSync(first, join(machine, 'link'));
    expect(defaultAdaptersDir(join(machine, 'link'), cache)).toBe(a);
  });

  it("defaults to this installation's directory, never the per-user one every installation shared", () => {
    const root = installationRoot();
    expect(root).toBe(resolve(__dirname, '../../../..'));
    const dir = loadConfig({}).agent.adapters.dir;
    expect(dir).toBe(defaultAdaptersDir(root!, process.env.XDG_CACHE_HOME ?? cache));
    expect(dir).not.toBe(join(process.env.XDG_CACHE_HOME ?? cache, 'hecate', 'agent-adapters'));
  });

  it("is the operator's when set (either name)", () => {
    expect(loadConfig({ GATEWAY_AGENT_ADAPTERS_DIR: '/srv/adapters' }).agent.adapters.dir).toBe('/srv/adapters');
    expect(loadConfig({ HECATE_AGENT_ADAPTERS_DIR: '/srv/adapters' }).agent.adapters.dir).toBe('/srv/adapters');
  });
});
