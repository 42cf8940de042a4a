import { createHash } from 'node:crypto';
import { accessSync, chmodSync, chownSync, constants, existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { delimiter, dirname, join } from 'node:path';
import { installationRoot } from '@core/config/installation';
import { type CommandSandbox, SupervisedProcess } from '@modules/workspaces';
import type { AdapterDefinition } from './adapter-definitions';

/** Where the adapter was found (docs/api.md §4 catalog `path`, `managed`): a launcher script, an installed package, PATH. */
export interface ResolvedAdapter {
  available: boolean;
  source?: 'launcher' | 'installed' | 'path';
  path?: string;
  /** The argv that starts it (before the sandbox wraps it). */
  argv?: string[];
  /** Host paths it must read besides the system (its package tree, the launcher directory). */
  readPaths: string[];
  /** The installed package's own version (when `--version` prints none). */
  packageVersion?: string;
  error?: string;
  /** The launcher pointed at this path, which is gone: it was rewritten (or removed, with nothing to point at). */
  repairedFrom?: string;
}

const executable = (p: string): boolean => {
  try {
    accessSync(p, constants.X_OK);
    return true;
  } catch {
    return false;
  }
};

/** The node_modules directories an installed adapter package is looked for in: the adapters dir's, then the server's. */
function moduleRoots(adaptersDir: string): string[] {
  const root = installationRoot();
  return [join(adaptersDir, 'node_modules'), ...(root ? [join(root, 'node_modules')] : [])];
}

function onPath(command: string, pathEnv: string): string | undefined {
  if (command.includes('/')) return executable(command) ? command : undefined;
  for (const dir of pathEnv.split(delimiter)) if (dir && executable(join(dir, command))) return join(dir, command);
  return undefined;
}

/**
 * Finds how to start the adapter on this worker: a managed launcher in GATEWAY_AGENT_ADAPTERS_DIR, the managed
 * package installed (in that dir's node_modules or the server's), else its command on PATH.
 */
export function resolveAdapter(def: AdapterDefinition, adaptersDir: string, pathEnv: string): ResolvedAdapter {
  const repairedFrom = def.managed ? repairStaleLauncher(def, adaptersDir, pathEnv) : undefined;
  const repair = repairedFrom ? { repairedFrom } : {};
  if (def.managed) {
    const launcher = join(adaptersDir, def.command);
    if (executable(launcher)) {
      const readPaths = [adaptersDir, ...moduleRoots(adaptersDir)];
      return { available: true, source: 'launcher', path: launcher, argv: [launcher, ...def.args], readPaths, ...repair };
    }
  }
  const installed = installedLaunch(def, adaptersDir);
  if (installed) return { ...installed, ...repair };
  const found = onPath(def.command, pathEnv);
  if (found) return { available: true, source: 'path', path: found, argv: [found, ...def.args], readPaths: [dirname(found)], ...repair };
  const managed = def.managed
    ? `; managed launcher unavailable: ${def.managedPackage} is not installed in ${adaptersDir} and no launcher script exists there`
    : '';
  return { available: false, readPaths: [], error: `exec: "${def.command}": executable file not found in $PATH${managed}`, ...repair };
}

/**
 * A managed launcher whose `exec` names a path that no longer exists (the checkout or node it was written from is
 * gone; it would exit 127 at spawn) is rewritten for this installation, or removed when nothing can start the
 * adapter here. Returns the missing path when it did either. Launchers Hecate did not write are left alone.
 */
export function repairStaleLauncher(def: AdapterDefinition, adaptersDir: string, pathEnv: string): string | undefined {
  const launcher = join(adaptersDir, def.command);
  const missing = missingTarget(launcher);
  if (!missing) return undefined;
  try {
    writeLauncher(def, adaptersDir, pathEnv);
  } catch {
    // nothing to point it at: writeLauncher removed it, and the adapter resolves as not installed
  }
  return missing;
}

function missingTarget(launcher: string): string | undefined {
  let script: string;
  try {
    script = readFileSync(launcher, 'utf8');
  } catch {
    return undefined;
  }
  if (!script.includes(LAUNCHER_MARK)) return undefined;
  const exec = script.split('\n').find((line) => line.startsWith('exec '));
  return exec ? shellWords(exec.slice(5)).find((word) => word.startsWith('/') && !existsSync(word)) : undefined;
}

/** The words of a line written with shellQuote: plain, '…' (a quote inside as '\''), "…". */
function shellWords(line: string): string[] {
  const words: string[] = [];
  let word: string | undefined;
  for (let i = 0; i < line.length; i++) {
    const c = line[i];
    if (c === ' ' || c === '\t') {
      if (word !== undefined) words.push(word);
      word = undefined;
    } else if (c === "'" || c === '"') {
      const end = line.indexOf(c, i + 1);
      word = (word ?? '') + line.slice(i + 1, end < 0 ? line.length : end);
      i = end < 0 ? line.length : end;
    } else if (c === '\\') word = (word ?? '') + (line[++i] ?? '');
    else word = (word ?? '') + c;
  }
  if (word !== undefined) words.push(word);
  return words;
}

function installedLaunch(def: AdapterDefinition, adaptersDir: string): ResolvedAdapter | undefined {
  if (!def.installed || !def.managedPackage) return undefined;
  for (const root of moduleRoots(adaptersDir)) {
    const file = join(root, def.installed.package, def.installed.file);
    if (!existsSync(file)) continue;
    let packageVersion: string | undefined;
    try {
      packageVersion = (JSON.parse(readFileSync(join(root, def.managedPackage, 'package.json'), 'utf8')) as { version?: string }).version;
    } catch {
      // no version to report
    }
    const argv = def.installed.runner === 'node' ? [process.execPath, file, ...def.args] : [file, ...def.args];
    return { available: true, source: 'installed', path: file, argv, readPaths: [root], packageVersion };
  }
  return undefined;
}

/**
 * `POST …/refresh-launcher`: deletes and recreates the managed launcher script — `exec` of the installed package when
 * there is one, else the package runner (`npx -y <package>`). Throws (→ 409) when neither exists.
 */
export function writeLauncher(def: AdapterDefinition, adaptersDir: string, pathEnv: string): string {
  const launcher = join(adaptersDir, def.command);
  const installed = installedLaunch(def, adaptersDir);
  let line: string;
  if (installed?.argv) line = `exec ${installed.argv.map(shellQuote).join(' ')} "$@"`;
  else {
    const npx = onPath('npx', pathEnv);
    if (!npx) {
      rmSync(launcher, { force: true });
      throw new Error(`no local package runner found for ${def.managedPackage} (npx is not on PATH and the package is not installed)`);
    }
    line = `exec ${shellQuote(npx)} -y ${shellQuote(def.managedPackage!)} ${def.args.map(shellQuote).join(' ')} "$@"`;
  }
  mkdirSync(adaptersDir, { recursive: true });
  // Mounted read-only into the sandbox as it is: the adapter's unprivileged uid must be able to enter it.
  chmodSync(adaptersDir, 0o755);
  // Written beside and renamed into place: another worker of this installation never starts a half-written launcher.
  const partial = `${launcher}.${process.pid}.partial`;
  writeFileSync(
    partial,
    `#!/bin/sh\n${LAUNCHER_MARK} ${def.name} (${def.managedPackage}); recreated by POST /hecate/v1/agent-adapters/${def.id}/refresh-launcher\n${line}\n`,
  );
  chmodSync(partial, 0o755);
  renameSync(partial, launcher);
  return launcher;
}

const LAUNCHER_MARK = '# Hecate-managed launcher for';

const VERSION_TIMEOUT_MS = 5000;

const shellQuote = (s: string): string => (/^[A-Za-z0-9_@%+=:,./-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`);

/** Whose homes sit together: a tenant's id, readable and collision-free as a directory name. */
export const tenantHomeKey = (tenantId: string): string =>
  `${tenantId.replace(/[^A-Za-z0-9_.-]/g, '_').slice(0, 40)}-${createHash('sha256').update(tenantId).digest('hex').slice(0, 12)}`;

/**
 * The adapter's own home on this worker (its login files, CODEX_HOME, its state, whatever it writes about its
 * prompts): one per tenant, adapter and identity its commands run as, mode 0700, owned by that identity. The sandbox
 * hides `homes/` from every command and binds only this one, so another tenant's adapter never sees it — even one
 * running as the same uid.
 */
export function adapterHome(adaptersDir: string, def: AdapterDefinition, owner: { uid: number; gid: number } | null, tenantId: string): string {
  const homes = join(adaptersDir, 'homes');
  mkdirSync(homes, { recursive: true, mode: 0o700 });
  chmodSync(homes, 0o700);
  const tenantDir = join(homes, tenantHomeKey(tenantId));
  mkdirSync(tenantDir, { recursive: true, mode: 0o700 });
  const home = join(tenantDir, owner ? `${def.id}.${owner.uid}` : def.id);
  for (const d of [home, join(home, 'tmp'), join(home, '.codex')]) {
    mkdirSync(d, { recursive: true, mode: 0o700 });
    chmodSync(d, 0o700);
    if (owner) chownSync(d, owner.uid, owner.gid);
  }
  return home;
}

/** The environment an adapter gets: the child baseline, its home, and only the worker variables its allowlist names. */
export function adapterEnv(
  def: AdapterDefinition,
  home: string,
  base: Record<string, string>,
  workerEnv: Record<string, string | undefined>,
  extra: Record<string, string> = {},
): Record<string, string> {
  const env: Record<string, string> = { ...base, HOME: home, TMPDIR: join(home, 'tmp'), CODEX_HOME: join(home, '.codex') };
  for (const name of def.envAllowlist) {
    const v = workerEnv[name];
    if (v !== undefined && v !== '') env[name] = v;
  }
  return { ...env, ...extra };
}

/**
 * The argv that runs the adapter in the command sandbox: network on (it calls its model), workspace and its own home
 * writable, its install read-only, never as root (a root-owned workspace means the sandbox uid).
 */
export function sandboxedArgv(sandbox: CommandSandbox, resolved: ResolvedAdapter, workspace: string, home: string): string[] {
  return sandbox.wrap(resolved.argv!, {
    workspace,
    cwd: workspace,
    readOnly: false,
    network: true,
    readPaths: resolved.readPaths,
    writePaths: [home],
    unprivileged: true,
  });
}

/** `<adapter> --version` (sandboxed, 5 s, stdin closed; SIGKILL to its group after that): its first line of output, or undefined. */
export async function runVersion(argv: string[], env: Record<string, string>, cwd: string): Promise<string | undefined> {
  const proc = SupervisedProcess.spawn({ argv: [...argv, '--version'], cwd, env, stdin: 'ignore', graceMs: 0 });
  let out = '';
  const timer = setTimeout(() => proc.signal('SIGKILL'), VERSION_TIMEOUT_MS);
  proc.child.stdout!.on('data', (c: Buffer) => (out = (out + c.toString('utf8')).slice(0, 4096)));
  proc.child.stderr!.on('data', () => undefined);
  const ran = await proc.started().then(
    () => true,
    () => false,
  );
  const exit = await proc.exited;
  clearTimeout(timer);
  return ran && exit.code === 0 ? out : undefined;
}
