import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { readProcessEnv } from '@core/config/env';
import { BUILT_IN_ADAPTERS, type AdapterDefinition } from './adapter-definitions';
import { resolveAdapter } from './adapter-launch';

const codex = BUILT_IN_ADAPTERS.find((def) => def.id === 'codex')!;
/** This checkout's codex-acp (the platform binary npm installed), what a repaired launcher must run. */
const CODEX_BINARY = resolve(__dirname, '../../../node_modules', codex.installed!.package, codex.installed!.file);
/** The PATH the server would hand resolveAdapter: the environment as core/config reads it. */
const PATH = readProcessEnv().PATH ?? '';

const tmp = (prefix: string): string => mkdtempSync(join(tmpdir(), prefix));

/** A launcher as another installation wrote it: `exec` of the adapter installed in that checkout's node_modules. */
function launcherFromOtherCheckout(def: AdapterDefinition, adaptersDir: string, checkout: string): string {
  const binary = join(checkout, 'node_modules', def.installed!.package, def.installed!.file);
  mkdirSync(dirname(binary), { recursive: true });
  writeFileSync(binary, '#!/bin/sh\necho "the other checkout\'s adapter"\n');
  chmodSync(binary, 0o755);
  const launcher = join(adaptersDir, def.command);
  writeFileSync(
    launcher,
    `#!/bin/sh\n# Hecate-managed launcher for ${def.name} (${def.managedPackage}); recreated by POST /hecate/v1/agent-adapters/${def.id}/refresh-launcher\nexec '${binary}' "$@"\n`,
  );
  chmodSync(launcher, 0o755);
  return launcher;
}

describe('managed adapter launchers', () => {
  it('are prerequisites of this test: codex-acp is installed in this checkout', () => {
    expect(existsSync(CODEX_BINARY)).toBe(true);
  });

  it('repair one left pointing into a removed checkout: rewritten for this installation, and the adapter starts through it', () => {
    const adaptersDir = tmp('hecate-adapters-');
    const otherCheckout = tmp('hecate-other-checkout-');
    const launcher = launcherFromOtherCheckout(codex, adaptersDir, otherCheckout);
    expect(spawnSync(launcher, [], { encoding: 'utf8' }).stdout).toBe("the other checkout's adapter\n");

    rmSync(otherCheckout, { recursive: true, force: true });
    // What every installation sharing the launcher saw: exit 127 at spawn.
    expect(spawnSync(launcher, ['--help'], { encoding: 'utf8' }).status).toBe(127);

    const resolved = resolveAdapter(codex, adaptersDir, PATH);
    expect(resolved).toMatchObject({ available: true, source: 'launcher', path: launcher, argv: [launcher] });
    expect(resolved.repairedFrom).toBe(join(otherCheckout, 'node_modules', codex.installed!.package, codex.installed!.file));
    expect(readFileSync(launcher, 'utf8')).toContain(`exec ${CODEX_BINARY} "$@"`);
    const run = spawnSync(launcher, ['--help'], { encoding: 'utf8', timeout: 20_000 });
    expect([run.status, run.stdout]).toEqual([0, expect.stringContaining('codex-acp')]);

    // Repaired once: the next lookup finds a sound launcher and leaves it as it is.
    expect(resolveAdapter(codex, adaptersDir, PATH).repairedFrom).toBeUndefined();
  });

  it('remove a stale one when nothing here can start the adapter: not installed, with the reason', () => {
    const ghost: AdapterDefinition = {
      ...codex,
      id: 'ghost_acp',
      command: 'ghost-acp',
      managedPackage: '@nowhere/ghost-acp',
      installed: { package: '@nowhere/ghost-acp', file: 'bin/ghost-acp', runner: 'binary' },
    };
    const adaptersDir = tmp('hecate-adapters-');
    const otherCheckout = tmp('hecate-other-checkout-');
    const launcher = launcherFromOtherCheckout(ghost, adaptersDir, otherCheckout);
    rmSync(otherCheckout, { recursive: true, force: true });

    const resolved = resolveAdapter(ghost, adaptersDir, '');
    expect(resolved).toMatchObject({ available: false, error: expect.stringContaining('@nowhere/ghost-acp is not installed') });
    expect(resolved.repairedFrom).toContain(otherCheckout);
    expect(existsSync(launcher)).toBe(false);
  });

  it('leave a launcher Hecate did not write alone, even when what it runs is gone', () => {
    const adaptersDir = tmp('hecate-adapters-');
    const launcher = join(adaptersDir, codex.command);
    const script = '#!/bin/sh\n# the operator\'s own\nexec /nonexistent/codex-acp "$@"\n';
    writeFileSync(launcher, script);
    chmodSync(launcher, 0o755);
    const resolved = resolveAdapter(codex, adaptersDir, PATH);
    expect(resolved).toMatchObject({ available: true, source: 'launcher', path: launcher });
    expect(resolved.repairedFrom).toBeUndefined();
    expect(readFileSync(launcher, 'utf8')).toBe(script);
  });
});
