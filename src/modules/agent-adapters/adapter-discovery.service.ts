import { existsSync, readdirSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { Inject, Injectable } from '@nestjs/common';
import { AppConfig } from '@core/config/app-config';
import { readProcessEnv } from '@core/config/env';
import { rootLogger } from '@core/logging/logger';
import { COMMAND_SANDBOX, type CommandSandbox } from '@modules/workspaces';
import { AcpProcess, AcpProtocolError, type Acp } from './acp-process';
import { type AdapterDefinition, firstVersion, satisfies } from './adapter-definitions';
import { adapterEnv, adapterHome, resolveAdapter, runVersion, sandboxedArgv, writeLauncher, type ResolvedAdapter } from './adapter-launch';
import { AdapterCatalog } from './adapter-catalog';
import type { AdapterHealth, AdapterRow } from './agent-adapters.types';

/** The tenant whose homes the operator's probes and version checks use. */
const PROBE_TENANT = '_probe';

/** How long a worker reuses what it found out about an adapter (the list is cheap to ask for again). */
const DISCOVERY_TTL_MS = 30_000;

const AUTH_SHAPED = /auth|log ?in|api[ _-]?key|credit balance|billing|401|403|unauthori[sz]ed|forbidden|credentials/i;

/**
 * Worker side of `/hecate/v1/agent-adapters` (docs/design.md §11.2: the api never spawns an adapter): what is installed here
 * and how (launcher, package, PATH), its version and supported range, a passive auth hint, and the ACP probe —
 * spawn → initialize → session/new in a throwaway workspace → terminate, classified, never a prompt.
 */
@Injectable()
export class AdapterDiscoveryService {
  private readonly cache = new Map<string, { row: AdapterRow; at: number }>();

  constructor(
    private readonly config: AppConfig,
    private readonly catalog: AdapterCatalog,
    @Inject(COMMAND_SANDBOX) private readonly sandbox: CommandSandbox,
  ) {}

  private get dir(): string {
    return this.config.agent.adapters.dir;
  }

  /** How to start the adapter here; a managed launcher left pointing at a removed checkout is repaired on the way. */
  resolve(def: AdapterDefinition): ResolvedAdapter {
    const resolved = resolveAdapter(def, this.dir, this.config.tasks.childEnv.PATH ?? '');
    if (resolved.repairedFrom) {
      this.cache.delete(def.id);
      rootLogger().warn(
        { adapter_id: def.id, launcher: join(this.dir, def.command), missing: resolved.repairedFrom, now: resolved.path ?? null },
        resolved.source === 'launcher'
          ? 'agent adapter launcher pointed at a path that no longer exists; rewritten for this installation'
          : 'agent adapter launcher pointed at a path that no longer exists and nothing here can replace it; removed',
      );
    }
    return resolved;
  }

  /** The tenant's home of the adapter, owned by whoever the adapter in `workspace` runs as (never root). */
  home(def: AdapterDefinition, workspace: string, tenantId: string): string {
    return adapterHome(this.dir, def, this.sandbox.identityFor(workspace, true), tenantId);
  }

  env(def: AdapterDefinition, home: string, extra: Record<string, string> = {}): Record<string, string> {
    return adapterEnv(def, home, this.config.tasks.childEnv, readProcessEnv(), extra);
  }

  argv(resolved: ResolvedAdapter, workspace: string, home: string): string[] {
    return sandboxedArgv(this.sandbox, resolved, workspace, home);
  }

  async list(): Promise<AdapterRow[]> {
    return Promise.all(this.catalog.all().map((def) => this.row(def, false)));
  }

  async row(def: AdapterDefinition, fresh: boolean): Promise<AdapterRow> {
    const hit = this.cache.get(def.id);
    if (!fresh && hit && Date.now() - hit.at < DISCOVERY_TTL_MS) return hit.row;
    const resolved = this.resolve(def);
    const row: AdapterRow = {
      id: def.id,
      name: def.name,
      kind: def.kind,
      command: def.command,
      ...(def.args.length ? { args: def.args } : {}),
      ...(def.managed ? { managed: true, managed_package: def.managedPackage } : {}),
      available: resolved.available,
      status: resolved.available ? 'available' : 'missing',
      ...(resolved.path ? { path: resolved.path } : {}),
      ...(resolved.error ? { error: resolved.error } : {}),
      cost_mode: def.costMode,
    };
    if (resolved.available) {
      const version = await this.version(def, resolved);
      if (version) row.version = version;
    }
    if (def.supportedRange) row.supported_range = def.supportedRange;
    row.version_outside_range = satisfies(row.version, def.supportedRange) === false;
    Object.assign(row, this.authStatus(def));
    this.cache.set(def.id, { row, at: Date.now() });
    return row;
  }

  /** `--version` in the sandbox (first semver token), else the installed package's version. */
  private async version(def: AdapterDefinition, resolved: ResolvedAdapter): Promise<string | undefined> {
    const scratch = await this.sandbox.scratchWorkspace('adapter-probes');
    try {
      const home = this.home(def, scratch, PROBE_TENANT);
      const out = this.sandbox.refusal() ? undefined : await runVersion(this.argv(resolved, scratch, home), this.env(def, home), scratch);
      return (out && firstVersion(out)) ?? resolved.packageVersion;
    } finally {
      await removeScratch(scratch, def);
    }
  }

  /** A hint from known env vars and login files, without spawning (docs/api.md §4 `auth_status`). */
  private authStatus(def: AdapterDefinition): Pick<AdapterRow, 'auth_status' | 'auth_error'> {
    const env = readProcessEnv();
    if (def.auth.env.some((name) => !!env[name])) return { auth_status: 'ok' };
    // Any of the adapter's homes (one per tenant and identity it runs as) with a login file.
    const homes = join(this.dir, 'homes');
    const list = (d: string) => (existsSync(d) ? readdirSync(d) : []);
    const mine = list(homes).flatMap((t) =>
      list(join(homes, t))
        .filter((d) => d === def.id || d.startsWith(`${def.id}.`))
        .map((d) => join(homes, t, d)),
    );
    if (mine.some((d) => def.auth.files.some((f) => existsSync(join(d, f))))) return { auth_status: 'ok' };
    if (def.auth.env.length === 0 && def.auth.files.length === 0) return { auth_status: 'unknown' };
    return { auth_status: def.auth.opaque ? 'unknown' : 'unauthenticated', auth_error: def.auth.hint };
  }

  refreshLauncher(def: AdapterDefinition): void {
    writeLauncher(def, this.dir, this.config.tasks.childEnv.PATH ?? '');
    this.cache.delete(def.id);
  }

  /** The end-to-end ACP probe (docs/api.md §4 `/health`): lookup → spawn → initialize → new_session → ready, bounded in time. */
  async probe(def: AdapterDefinition): Promise<AdapterHealth> {
    const started = Date.now();
    const done = (h: Omit<AdapterHealth, 'adapter_id' | 'duration_ms'>): AdapterHealth => ({ adapter_id: def.id, ...h, duration_ms: Date.now() - started });
    const resolved = this.resolve(def);
    if (!resolved.available) {
      return done({
        status: 'not_installed',
        stage: 'lookup',
        error: resolved.error,
        hint: `Install ${def.managedPackage ?? def.command}, or put ${def.command} on the worker's PATH.`,
      });
    }
    const refusal = this.sandbox.refusal();
    if (refusal) return done({ status: 'error', stage: 'spawn', path: resolved.path, error: refusal });
    const scratch = await this.sandbox.scratchWorkspace('adapter-probes');
    let proc: AcpProcess | undefined;
    let stage: AdapterHealth['stage'] = 'spawn';
    const timeoutMs = this.config.agent.adapters.probeTimeoutMs;
    const deadline = Date.now() + timeoutMs;
    const left = () => Math.max(1, deadline - Date.now());
    try {
      const home = this.home(def, scratch, PROBE_TENANT);
      proc = await AcpProcess.start(
        { argv: this.argv(resolved, scratch, home), cwd: scratch, env: this.env(def, home), maxMessageBytes: this.config.agent.adapters.maxMessageBytes },
        { onUpdate: () => undefined, onPermission: () => Promise.resolve({ outcome: { outcome: 'cancelled' } }) },
      );
      stage = 'initialize';
      await proc.request<Acp.InitializeResponse>('initialize', initializeRequest(), left());
      stage = 'new_session';
      await proc.request<Acp.NewSessionResponse>('session/new', { cwd: scratch, mcpServers: [] }, left());
      return done({ status: 'ready', stage: 'ready', path: resolved.path });
    } catch (err) {
      const message = err instanceof Error ? err.message : String(err);
      const stderr = proc?.stderrTail().slice(-2000);
      const auth = stage !== 'spawn' && !(err instanceof AcpProtocolError) && (AUTH_SHAPED.test(message) || (err as { code?: number }).code === -32000);
      return done({
        status: auth ? 'auth_required' : 'error',
        stage,
        path: resolved.path,
        error: message,
        ...(stderr ? { stderr } : {}),
        hint: auth
          ? "Adapter started but failed authentication. Try the adapter's CLI login flow or set its API-key env var."
          : err instanceof AcpProtocolError && err.kind === 'timeout'
            ? `The adapter did not finish ${stage} within ${Math.round(timeoutMs / 1000)} s.`
            : 'The adapter failed to start; error and stderr carry its diagnostic.',
      });
    } finally {
      await proc?.close();
      await removeScratch(scratch, def);
    }
  }
}

/** Removes a probe's scratch directory; nothing else ever deletes one left behind, so its path is logged for the operator. */
async function removeScratch(scratch: string, def: AdapterDefinition): Promise<void> {
  await rm(scratch, { recursive: true, force: true }).catch((err: unknown) =>
    rootLogger().warn({ adapter_id: def.id, path: scratch, err: String(err) }, 'removing an adapter probe directory failed; it stays on disk'),
  );
}

/** What Hecate says about itself in `initialize`: ACP v1, no fs or terminal callbacks (the agent uses its own tools). */
export const initializeRequest = (): Acp.InitializeRequest => ({
  protocolVersion: 1,
  clientCapabilities: { fs: { readTextFile: false, writeTextFile: false }, terminal: false },
  clientInfo: { name: 'hecate', version: '0.1.0' },
});
