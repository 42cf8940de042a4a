import { spawnSync } from 'node:child_process';
import { lstatSync, mkdtempSync, readlinkSync, realpathSync, rmSync, statSync } from 'node:fs';
import { chown, mkdir, mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, resolve, sep } from 'node:path';
import { Injectable, OnModuleDestroy, OnModuleInit } from '@nestjs/common';
import { AppConfig } from '@core/config/app-config';
import { Liveness } from '@core/health/system-info.decorator';
import { rootLogger } from '@core/logging/logger';
import type { CommandSandbox, SandboxPolicy } from '../command-sandbox';
import { EgressProxy, egressSettings } from './egress-proxy';
import { behindLifeline } from './lifeline';
import { describeLimits, limitArgv, limitsFor, tmpSizeArgs } from './sandbox-limits';
import { serverCodePaths, writePathArgs } from './sandbox-paths';

/**
 * `bwrap`: commands run under bubblewrap. `none`: the operator opted out (GATEWAY_TASK_SANDBOX=none).
 * `unavailable`: no OS isolation here and no opt-out, so commands are refused.
 */
export type SandboxLayer = 'bwrap' | 'none' | 'unavailable';

export interface RunIdentity {
  uid: number;
  gid: number;
}

/** System directories a command needs to run programs; everything else on the host is absent from its view. */
const SYSTEM_DIRS = ['/usr', '/etc', '/opt'];
const SYSTEM_LINKS = ['/bin', '/sbin', '/lib', '/lib32', '/lib64', '/libx32'];
/**
 * Host directories of sockets and shared scratch, and root's home, covered when a workspace (an operator's `/`) holds
 * them: root's home is 0700, so a node runtime or read path under it (a node in ~/.cache) gets traversable parents.
 */
const HOST_STATE_DIRS = ['/run', '/var/run', '/var/tmp', '/var/lib/postgresql', '/var/lib/redis', '/root'];

const isRoot = (): boolean => process.getuid?.() === 0;
const inside = (child: string, parent: string): boolean => child === parent || child.startsWith(parent.endsWith(sep) ? parent : parent + sep);
const exists = (p: string): boolean => {
  try {
    lstatSync(p);
    return true;
  } catch {
    return false;
  }
};
const real = (p: string): string => {
  try {
    return realpathSync(p);
  } catch {
    return resolve(p);
  }
};

/**
 * OS isolation for every command run for a task — shell, git, workspace clones, and later agent tools and MCP
 * stdio servers (docs/security.md). Under bubblewrap a command sees only the system directories (read-only), the node
 * runtime, the paths the operator lists, and its own workspace (the only writable place); it has its own PID
 * namespace and /proc (the worker's environment is not there to read), no network unless the task asks, and dies
 * with the worker (`--die-with-parent`, PID 1 of its namespace). The server's data directory and secret files
 * are never mounted (hidden even when they sit inside a mounted path). When the worker runs as root the command
 * runs as an unprivileged uid (GATEWAY_TASK_SANDBOX_UID, 65534), or as the owner of an in-place workspace.
 *
 * Without bubblewrap, `auto` and `bwrap` refuse to run commands unless the operator opts out with
 * GATEWAY_TASK_SANDBOX=none (then commands still run as the unprivileged uid, with no mount or PID isolation).
 * Worker-only (WorkspacesWorkerModule): the probe runs in the worker's init hook, never in the api.
 */
@Injectable()
export class SandboxService implements OnModuleInit, OnModuleDestroy, CommandSandbox {
  private detected: SandboxLayer | undefined;
  /** The only way out of a sandbox with network (its own network namespace either way). */
  private egress: EgressProxy | undefined;
  private setpriv = false;
  private unavailableReason = '';

  constructor(private readonly config: AppConfig) {}

  async onModuleInit(): Promise<void> {
    const mode = this.config.tasks.sandbox;
    this.setpriv = isRoot() && spawnSync('setpriv', ['--version'], { stdio: 'ignore', timeout: 5000 }).status === 0;
    if (mode === 'none') {
      this.detected = 'none';
      rootLogger().warn(
        { sandbox: this.describe() },
        'GATEWAY_TASK_SANDBOX=none: task commands run WITHOUT OS isolation (no mount or PID namespace); the operator opted out',
      );
      return;
    }
    const problem = this.probe();
    if (!problem) {
      this.detected = 'bwrap';
      rootLogger().info({ sandbox: this.describe() }, 'task commands run under bubblewrap');
      // Until it listens a command granted network has none (its own namespace either way): fail closed.
      this.egress = await EgressProxy.start(egressSettings(this.config));
      return;
    }
    if (mode === 'bwrap') throw new Error(`GATEWAY_TASK_SANDBOX=bwrap but bubblewrap cannot isolate commands here: ${problem}`);
    this.detected = 'unavailable';
    this.unavailableReason = problem;
    rootLogger().error(
      { sandbox: this.describe(), problem },
      'no OS isolation for task commands (bubblewrap unavailable): shell, git and tool commands are REFUSED; install bubblewrap, or set GATEWAY_TASK_SANDBOX=none to run them without isolation',
    );
  }

  async onModuleDestroy(): Promise<void> {
    await this.egress?.close();
  }

  get layer(): SandboxLayer {
    if (!this.detected) throw new Error('SandboxService used before the worker initialised it');
    return this.detected;
  }

  get osIsolation(): boolean {
    return this.layer === 'bwrap';
  }

  /** `/healthz` and the startup log: what protects the host from a task's commands. */
  @Liveness('sandbox')
  describe(): Record<string, unknown> {
    const layer = this.detected ?? 'unknown';
    return {
      os_isolation: layer === 'bwrap',
      layer,
      commands: layer === 'unavailable' ? 'refused' : 'allowed',
      run_as: isRoot() ? (this.setpriv ? `uid ${this.config.tasks.sandboxIdentity.uid}` : 'root without capabilities') : 'server user',
      limits: describeLimits(this.config.sandboxLimits),
    };
  }

  /** Why commands cannot run here (null when they can). */
  refusal(): string | null {
    if (this.layer !== 'unavailable') return null;
    return `no OS isolation on this worker (${this.unavailableReason}): install bubblewrap, or set GATEWAY_TASK_SANDBOX=none to run task commands without isolation`;
  }

  /**
   * Who commands in `workspace` run as: the unprivileged uid for managed workspaces, the owner of an in-place one. A
   * root-owned in-place workspace means the sandbox uid when it is `unprivileged` (adapters) or under
   * GATEWAY_WORKSPACE_ROOTS (where API keys may point), else (an operator's directory) root without capabilities.
   */
  identityFor(workspace: string, unprivileged = false): RunIdentity | null {
    if (!isRoot() || !this.setpriv) return null;
    try {
      const st = statSync(workspace);
      if (st.uid !== 0) return { uid: st.uid, gid: st.gid };
    } catch {
      // not there yet: the managed identity
    }
    // A root-owned directory a tenant can reach (under GATEWAY_WORKSPACE_ROOTS) never gets a root command: only the
    // operator's own in-place directories elsewhere run as root without capabilities.
    const at = real(workspace);
    const tenantReachable = this.config.tasks.workspaceRoots.some((root) => inside(at, real(root)));
    return unprivileged || tenantReachable || inside(at, real(this.config.tasks.workspacesDir)) ? this.config.tasks.sandboxIdentity : null;
  }

  workspaceIdentity(): RunIdentity | null {
    return isRoot() && this.setpriv ? this.config.tasks.sandboxIdentity : null;
  }

  async scratchWorkspace(purpose: string): Promise<string> {
    const parent = join(this.config.tasks.workspacesDir, `.${purpose}`);
    await mkdir(parent, { recursive: true });
    const dir = await mkdtemp(join(parent, 'probe-'));
    const identity = this.workspaceIdentity();
    if (identity) await chown(dir, identity.uid, identity.gid);
    return dir;
  }

  /** The argv that runs `argv` under the policy. Throws when commands are refused here. */
  wrap(argv: string[], policy: SandboxPolicy): string[] {
    const refusal = this.refusal();
    if (refusal) throw new Error(refusal);
    const identity = this.identityFor(policy.workspace, policy.unprivileged);
    const limits = limitArgv(limitsFor(this.config.sandboxLimits, identity?.uid ?? null, this.config.tasks.sandboxIdentity.uid));
    if (this.egress && policy.network) argv = this.egress.command(argv);
    // Killed with the worker, whenever that happens (./lifeline.ts).
    const guarded = behindLifeline(argv, this.layer === 'none' ? 'group' : 'namespace');
    const command = identity
      ? [
          ...limits,
          'setpriv',
          '--reuid',
          String(identity.uid),
          '--regid',
          String(identity.gid),
          '--clear-groups',
          '--no-new-privs',
          '--inh-caps=-all',
          '--bounding-set=-all',
          '--',
          ...guarded,
        ]
      : [...limits, ...guarded];
    if (this.layer === 'none') return command;
    return [this.config.tasks.sandboxBwrap, ...this.bwrapArgs(policy, identity === null && isRoot()), '--', ...command];
  }

  private bwrapArgs(policy: SandboxPolicy, dropCaps: boolean): string[] {
    const args = ['--unshare-pid', '--unshare-ipc', '--unshare-uts', '--unshare-cgroup-try', '--die-with-parent', '--new-session'];
    // Always a network namespace of its own: with network, its only way out is the egress proxy.
    args.push('--unshare-net');
    if (dropCaps) args.push('--cap-drop', 'ALL');
    const mounted: string[] = [];
    const ws = real(policy.workspace);
    const bindWorkspace = [policy.readOnly ? '--ro-bind' : '--bind', policy.workspace, policy.workspace];
    // A workspace that holds the system directories (an operator's `/`) goes first, everything else over it: its own
    // /dev, /proc and /tmp, the system read-only, the read paths reachable.
    const workspaceFirst = [...SYSTEM_DIRS, '/dev', '/proc', '/tmp'].some((d) => inside(d, ws));
    if (workspaceFirst) args.push(...bindWorkspace);
    for (const dir of SYSTEM_DIRS) {
      if (!exists(dir)) continue;
      args.push('--ro-bind', dir, dir);
      mounted.push(real(dir));
    }
    for (const link of SYSTEM_LINKS) {
      if (!exists(link)) continue;
      const st = lstatSync(link);
      if (st.isSymbolicLink()) {
        if (!workspaceFirst) args.push('--symlink', readlinkSync(link), link); // else the workspace holds it already
      } else if (st.isDirectory()) {
        args.push('--ro-bind', link, link);
        mounted.push(real(link));
      }
    }
    // A private /tmp, bounded, writable by whoever the command runs as (sticky, like the host's).
    args.push('--dev', '/dev', '--proc', '/proc', ...tmpSizeArgs(this.config.sandboxLimits), '--perms', '1777', '--tmpfs', '/tmp');
    // A workspace holding the host's runtime sockets (Postgres, Redis, D-Bus under /run) and shared scratch gets empty ones.
    if (workspaceFirst) for (const d of HOST_STATE_DIRS) if (inside(d, ws) && exists(d) && !lstatSync(d).isSymbolicLink()) args.push('--tmpfs', d);
    // The node runtime this worker runs on (tools such as npx-started MCP servers need it), then the operator's paths.
    const nodePrefix = dirname(dirname(process.execPath));
    // Mount points get their parents as plain 0755 directories (bubblewrap's default would be 0700, which the
    // unprivileged uid could not traverse to reach its own workspace).
    const created = new Set(['/', '/tmp', '/dev', '/proc']);
    const parents = (p: string) => {
      const chain: string[] = [];
      for (let d = dirname(p); !created.has(d) && !mounted.some((m) => inside(d, m)); d = dirname(d)) chain.unshift(d);
      for (const d of chain) {
        args.push('--perms', '0755', '--dir', d);
        created.add(d);
      }
    };
    for (const p of [nodePrefix, ...this.config.tasks.sandboxReadPaths, ...(policy.readPaths ?? [])]) {
      if (!exists(p) || mounted.some((m) => inside(real(p), m))) continue;
      parents(p);
      args.push('--ro-bind', p, p);
      mounted.push(real(p));
    }
    if (!workspaceFirst) {
      parents(policy.workspace);
      args.push(...bindWorkspace);
    }
    mounted.push(ws);
    // Never visible, even inside a mounted path (an in-place workspace that holds the data directory, say).
    const covered: string[] = [];
    for (const hidden of this.hiddenPaths(policy.workspace)) {
      if (!exists(hidden) || !mounted.some((m) => inside(hidden, m)) || inside(real(policy.workspace), hidden)) continue;
      if (statSync(hidden).isDirectory()) {
        args.push('--tmpfs', hidden);
        covered.push(hidden);
      } else args.push('--ro-bind', '/dev/null', hidden);
    }
    // After the hiding: an adapter's own home lives under the (hidden) homes of all adapters.
    for (const p of policy.writePaths ?? []) {
      if (!covered.some((c) => inside(real(p), c))) parents(p);
      args.push(...writePathArgs(real(p), covered));
      mounted.push(real(p));
    }
    // Last, over everything (a workspace at `/` and its emptied /run included): the egress socket.
    if (policy.network && this.egress) args.push(...this.egress.bwrapArgs());
    args.push('--chdir', policy.cwd);
    return args;
  }

  /**
   * The server's data directory, its secret files, the workspaces of other runs, the adapters' homes (each adapter gets
   * only its own, mounted after), and the server's code (unless the workspace is the server's checkout itself).
   */
  private hiddenPaths(workspace: string): string[] {
    return [
      this.config.database.dataDir,
      ...this.config.secretFiles,
      this.config.tasks.workspacesDir,
      join(this.config.agent.adapters.dir, 'homes'),
      ...serverCodePaths(real(workspace)),
    ].map(real);
  }

  /** Runs `true` under the full argument set once; returns the problem, or null when it works. */
  private probe(): string | null {
    let dir: string | undefined;
    try {
      dir = mkdtempSync(join(tmpdir(), 'hecate-sandbox-probe-'));
      const bwrap = this.config.tasks.sandboxBwrap;
      const r = spawnSync(
        bwrap,
        [
          ...this.bwrapArgs({ workspace: dir, cwd: dir, readOnly: false, network: false }, false),
          '--',
          ...limitArgv(limitsFor(this.config.sandboxLimits, null, -1)),
          'true',
        ],
        {
          timeout: 5000,
          encoding: 'utf8',
          stdio: ['ignore', 'ignore', 'pipe'],
        },
      );
      if (r.error) return `${bwrap}: ${(r.error as NodeJS.ErrnoException).code ?? r.error.message}`;
      if (r.status !== 0) return `${bwrap} exited ${r.status ?? r.signal}: ${r.stderr.trim().slice(0, 300)}`;
      return null;
    } finally {
      if (dir) rmSync(dir, { recursive: true, force: true });
    }
  }
}
