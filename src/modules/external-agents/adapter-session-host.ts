import { Inject, Injectable, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { busChannels, EventBus, type SessionDoorbell, type Unsubscribe } from '@core/bus';
import { AppConfig } from '@core/config/app-config';
import { keepLease, LEASE_OWNER, newLeaseToken, type WorkerRequestContext, WorkerRequestHandler } from '@core/lease';
import { rootLogger } from '@core/logging/logger';
import { AdapterProcessesGauge } from '@core/health/system-info.decorator';
import { type AdapterProcesses, MetricsService } from '@core/metrics/metrics.service';
import { type Acp, AcpProcess, AdapterCatalog, type AdapterDefinition, AdapterDiscoveryService, initializeRequest } from '@modules/agent-adapters';
import { ignoreFailure } from '@core/logging/ignore-failure';
import { AdapterSessionRepository } from './adapter-session.repository';
import { adapterStartFailed } from './external-agents.errors';
import { ADAPTER_OPEN_REQUEST, type AdapterOpenRequest, type AdapterSessionRow } from './external-agents.types';
import { SessionKeysRepository } from './session-keys.repository';

/** What the turn running on an adapter wants to hear (one turn at a time per session). */
export interface AdapterTurnHandlers {
  onUpdate(update: Acp.SessionUpdate, raw: Acp.SessionNotification): void;
  onPermission(request: Acp.RequestPermissionRequest, signal: AbortSignal): Promise<Acp.RequestPermissionResponse>;
}

/** An adapter process this worker holds for a session, under the session's adapter lease. */
export interface LiveAdapter {
  sessionId: string;
  adapterId: string;
  proc: AcpProcess;
  nativeId: string;
  token: string;
  agentCapabilities: Acp.AgentCapabilities;
  turn: AdapterTurnHandlers | null;
  /** It talks to this gateway with this key of the session (its model traffic is metered here); null: its own login. */
  gatewayKeyId: string | null;
  stopBeat: () => void;
  idle: NodeJS.Timeout | undefined;
}

/** How the adapter was made ready for this turn. */
export type Restored = 'kept' | 'new' | 'loaded' | 'resumed' | 'reset';

/** Milliseconds an adapter gets to start and open (or load) its session. */
const START_TIMEOUT_MS = 60_000;

/**
 * External Agent adapter processes on a worker (docs/design.md §11.2–11.3). A session's adapter lives on the one worker that
 * holds the session's adapter lease; that worker runs its turns. Another worker takes the lease once it expires (the
 * holder died or drained), starts the adapter again and restores the native session with `session/load` when the agent
 * offers it, else opens a new one (`reset`: the turn tells the transcript and recaps it to the agent). Idle processes
 * are ended after GATEWAY_AGENT_ADAPTER_IDLE_TIMEOUT; close, delete, a lost lease and shutdown end them too, process
 * group and all.
 */
@Injectable()
export class AdapterSessionHost implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly live = new Map<string, LiveAdapter>();
  private readonly starting = new Map<string, Promise<{ live: LiveAdapter; restored: Restored } | { owner: string }>>();
  private control: Promise<Unsubscribe> | undefined;

  constructor(
    private readonly config: AppConfig,
    private readonly catalog: AdapterCatalog,
    private readonly discovery: AdapterDiscoveryService,
    private readonly rows: AdapterSessionRepository,
    private readonly keys: SessionKeysRepository,
    @Inject(EventBus) private readonly bus: EventBus,
    private readonly metrics: MetricsService,
  ) {}

  private get leaseMs(): number {
    return this.config.tasks.leaseSeconds * 1000;
  }

  /** `hecate_adapter_processes{adapter}` of this worker, read at each scrape: every catalogued adapter, at 0 when none runs. */
  @AdapterProcessesGauge()
  adapterProcesses(): AdapterProcesses {
    const running = new Map<string, number>();
    for (const live of this.live.values()) running.set(live.adapterId, (running.get(live.adapterId) ?? 0) + 1);
    return { running, known: this.catalog.all().map((d) => d.id) };
  }

  onApplicationBootstrap(): void {
    // `close` / `delete` of an External Agent session, rung to every worker: the one holding its adapter acts.
    this.control = this.bus.listen(busChannels.agentChatAdapterControl, (m) => {
      if (this.live.has(m.session_id)) void this.end(m.session_id, m.action);
    });
  }

  async onApplicationShutdown(): Promise<void> {
    // Unsubscribing on shutdown: the connection goes with the process; a failure here has nothing left to act on.
    if (this.control) await (await this.control)().catch(() => undefined);
    await Promise.all([...this.live.keys()].map((id) => this.end(id, 'shutdown')));
  }

  /** Adapter processes this worker holds (for /healthz and the process-count tests). */
  count(): number {
    return this.live.size;
  }

  /**
   * The session's adapter on this worker, started (or restored) when nobody holds it; `owner` when another live
   * worker holds it (the turn belongs there).
   */
  acquire(session: AdapterSessionRow): Promise<{ live: LiveAdapter; restored: Restored } | { owner: string }> {
    const have = this.live.get(session.id);
    // Kept only while the row still names our lease: a close, or a lease another worker took, makes it stale.
    if (have?.proc.alive && session.adapter_token === have.token) {
      this.touch(have);
      return Promise.resolve({ live: have, restored: 'kept' });
    }
    let pending = this.starting.get(session.id);
    if (!pending) {
      pending = this.claimAndStart(session).finally(() => this.starting.delete(session.id));
      this.starting.set(session.id, pending);
    }
    return pending;
  }

  private async claimAndStart(session: AdapterSessionRow): Promise<{ live: LiveAdapter; restored: Restored } | { owner: string }> {
    const stale = this.live.get(session.id);
    if (stale) await this.end(session.id, 'lost');
    const token = newLeaseToken();
    // The row (as read) names another holder: a successful claim takes over its expired lease.
    const heldElsewhere = session.adapter_token !== null && session.adapter_owner !== LEASE_OWNER;
    if (await this.rows.claim(session.id, LEASE_OWNER, token, this.leaseMs)) {
      if (heldElsewhere) this.metrics.leaseReclaimed('adapter');
    } else {
      const owner = await this.rows.liveOwner(session.id);
      if (owner && owner !== LEASE_OWNER) return { owner };
      // Ours from an earlier life of this process, or it expired meanwhile: one more try.
      if (!(await this.rows.claim(session.id, LEASE_OWNER, token, this.leaseMs))) return { owner: owner ?? 'unknown' };
    }
    try {
      return await this.start(session, token);
    } catch (err) {
      await this.rows
        .release(session.id, token)
        .catch(ignoreFailure('adapter lease release after a failed start', 'the lease expires without heartbeats; the next turn claims it then'));
      throw err;
    }
  }

  private async start(session: AdapterSessionRow, token: string): Promise<{ live: LiveAdapter; restored: Restored }> {
    const def = this.catalog.find(session.adapter_id);
    if (!def) throw new Error(`agent adapter "${session.adapter_id}" is not registered on this worker`);
    const resolved = this.discovery.resolve(def);
    if (!resolved.available) throw new Error(resolved.error ?? `${def.name} is not installed on this worker`);
    const home = this.discovery.home(def, session.workspace, session.tenant_id);
    const holder: { live?: LiveAdapter } = {};
    const env = await this.adapterEnvironment(def, session, home);
    let proc: AcpProcess;
    try {
      proc = await AcpProcess.start(
        {
          argv: [...this.discovery.argv(resolved, session.workspace, home), ...env.args],
          cwd: session.workspace,
          env: env.vars,
          maxMessageBytes: this.config.agent.adapters.maxMessageBytes,
        },
        {
          onUpdate: (n) => holder.live?.turn?.onUpdate(n.update, n),
          onPermission: (req, signal) =>
            holder.live?.turn ? holder.live.turn.onPermission(req, signal) : Promise.resolve({ outcome: { outcome: 'cancelled' } as const }),
        },
      );
    } catch (err) {
      if (env.keyId)
        await this.keys
          .revoke(env.keyId)
          .catch(ignoreFailure('gateway key revoke after a failed start', 'the recovery pass revokes session keys no adapter holds'));
      throw err;
    }
    try {
      const { caps, nativeId, restored } = await this.handshake(proc, session, def);
      if (!(await this.rows.setNative(session.id, token, nativeId, 'ready'))) throw new Error('the session was closed or deleted while its adapter started');
      const live: LiveAdapter = {
        sessionId: session.id,
        adapterId: def.id,
        proc,
        nativeId,
        token,
        agentCapabilities: caps,
        turn: null,
        gatewayKeyId: env.keyId,
        idle: undefined,
        stopBeat: keepLease(() => this.rows.heartbeat(session.id, token, this.leaseMs), {
          leaseMs: this.leaseMs,
          what: { session_id: session.id, adapter_id: def.id },
          onLost: () => void this.end(session.id, 'lost'),
        }),
      };
      holder.live = live;
      this.live.set(session.id, live);
      void proc.exited.then(() => {
        // The process ended on its own (a crash): the next turn starts it again, here or elsewhere.
        if (this.live.get(session.id) === live && !live.turn) void this.end(session.id, 'exited');
      });
      this.touch(live);
      rootLogger().info({ session_id: session.id, adapter_id: def.id, pid: proc.pid, restored }, 'external agent adapter ready');
      return { live, restored };
    } catch (err) {
      await proc.close();
      if (env.keyId)
        await this.keys
          .revoke(env.keyId)
          .catch(ignoreFailure('gateway key revoke after a failed start', 'the recovery pass revokes session keys no adapter holds'));
      throw err;
    }
  }

  /**
   * ACP's handshake: `initialize`; the native session resumed (`session/resume`, when the agent offers it: no replay of
   * the conversation) or loaded (`session/load`), else a new one; the initial mode set.
   */
  private async handshake(
    proc: AcpProcess,
    session: AdapterSessionRow,
    def: AdapterDefinition,
  ): Promise<{ caps: Acp.AgentCapabilities; nativeId: string; restored: Restored }> {
    const init = await proc.request<Acp.InitializeResponse>('initialize', initializeRequest(), START_TIMEOUT_MS);
    const caps = init.agentCapabilities ?? {};
    let nativeId = '';
    let restored: Restored = 'new';
    const ways: Array<['session/resume' | 'session/load', Restored]> = [];
    if (caps.sessionCapabilities?.resume) ways.push(['session/resume', 'resumed']);
    if (caps.loadSession) ways.push(['session/load', 'loaded']);
    for (const [method, how] of session.native_session_id ? ways : []) {
      try {
        await proc.request(method, { sessionId: session.native_session_id, cwd: session.workspace, mcpServers: [] }, START_TIMEOUT_MS);
        nativeId = session.native_session_id;
        restored = how;
        break;
      } catch (err) {
        rootLogger().info({ session_id: session.id, method, err: String(err) }, 'adapter could not restore its native session this way');
      }
    }
    if (!nativeId) {
      const created = await proc.request<Acp.NewSessionResponse>('session/new', { cwd: session.workspace, mcpServers: [] }, START_TIMEOUT_MS);
      nativeId = created.sessionId;
      if (session.native_session_id) restored = 'reset';
    }
    if (def.initialMode) {
      // Permission requests must reach the coordinator: an adapter that starts in a mode deciding on its own is
      // switched to the one that asks (a refusal is logged; the mode the agent reports stays).
      await proc
        .request('session/set_mode', { sessionId: nativeId, modeId: def.initialMode }, START_TIMEOUT_MS)
        .catch((err: unknown) => rootLogger().warn({ session_id: session.id, err: String(err) }, 'adapter refused its initial mode'));
    }
    return { caps, nativeId, restored };
  }

  /**
   * The adapter's environment: its allowlisted variables, and — for an adapter that can be pointed at a model endpoint,
   * in a session with a model, when this gateway is reachable — this gateway's ingress with a key minted for the
   * session (revoked when the process ends), every model variable set to the session's model, and the adapter's own
   * vendor credentials removed: its model traffic is metered here and its provider key never reaches it.
   */
  private async adapterEnvironment(
    def: AdapterDefinition,
    session: AdapterSessionRow,
    home: string,
  ): Promise<{ vars: Record<string, string>; args: string[]; keyId: string | null }> {
    const url = this.gatewayUrl();
    if (!def.gateway || !session.model || !url) return { vars: this.discovery.env(def, home), args: [], keyId: null };
    const key = await this.keys.mint(session.tenant_id, session.id);
    const wiring = def.gateway;
    const extra: Record<string, string> = { [wiring.keyEnv]: key.secret };
    if (wiring.baseUrlEnv) extra[wiring.baseUrlEnv] = url;
    for (const name of wiring.modelEnvs) extra[name] = session.model;
    const vars = this.discovery.env(def, home, extra);
    for (const name of wiring.clearEnvs) delete vars[name];
    return { vars, args: wiring.args?.(url, session.model) ?? [], keyId: key.id };
  }

  private gatewayUrl(): string {
    const configured = this.config.agent.adapters.gatewayUrl;
    if (configured) return configured;
    return this.config.mode === 'embedded' ? `http://127.0.0.1:${this.config.server.port}` : '';
  }

  /** The `agent_chat.adapter_open` worker request (ExternalAgentSessions.open asks it when a session is created). */
  @WorkerRequestHandler(ADAPTER_OPEN_REQUEST)
  async openRequest(request: AdapterOpenRequest, ctx: WorkerRequestContext): Promise<Record<string, never>> {
    await this.open(request.session_id, ctx.tenantId);
    return {};
  }

  /**
   * Starts the new session's adapter (session/new) and rings the session; an adapter that cannot start answers 502 with
   * its diagnostic (stored on the session too).
   */
  async open(sessionId: string, tenantId: string): Promise<void> {
    const session = await this.rows.find(sessionId);
    let error = session ? session.adapter_error : 'the session was deleted';
    try {
      if (session?.adapter_state === 'starting') {
        try {
          const r = await this.acquire(session);
          if ('owner' in r) throw new Error(`the adapter is already held by ${r.owner}`);
          return;
        } catch (err) {
          rootLogger().info({ session_id: sessionId, adapter_id: session.adapter_id, err: String(err) }, 'external agent adapter did not start');
          error = err instanceof Error ? err.message : String(err);
          await this.rows.markFailed(sessionId, error);
        }
      } else if (session?.adapter_state === 'ready') return;
      throw adapterStartFailed(session?.adapter_id ?? '', error);
    } finally {
      const bell: SessionDoorbell = { tenant_id: tenantId, session_id: sessionId, status: 'adapter' };
      await this.bus
        .send(busChannels.agentChatSession.of(sessionId), bell)
        .catch(ignoreFailure('adapter-state doorbell', 'the adapter state is in Postgres; the doorbell only wakes its readers sooner'));
    }
  }

  /** Restarts the idle timer (a turn in progress is never idle). */
  touch(live: LiveAdapter): void {
    clearTimeout(live.idle);
    const ms = this.config.agent.adapters.idleTimeoutMs;
    if (ms <= 0) return;
    live.idle = setTimeout(() => {
      if (!live.turn) void this.end(live.sessionId, 'idle');
      else this.touch(live);
    }, ms);
    live.idle.unref();
  }

  /**
   * Ends the session's adapter here: `close`/`delete` close the native session first when the agent can, then the
   * process group goes and the lease is released (the native session id stays for a later `session/load`).
   */
  async end(sessionId: string, why: 'close' | 'delete' | 'idle' | 'lost' | 'exited' | 'shutdown' | 'failed'): Promise<void> {
    const live = this.live.get(sessionId);
    if (!live) return;
    this.live.delete(sessionId);
    live.stopBeat();
    clearTimeout(live.idle);
    if ((why === 'close' || why === 'delete') && live.proc.alive && live.agentCapabilities.sessionCapabilities?.close) {
      await live.proc
        .request('session/close', { sessionId: live.nativeId }, 5_000)
        .catch(ignoreFailure('native session/close', 'the adapter process is closed next either way'));
    }
    await live.proc.close();
    // Its own key only: after a lost lease, the worker that took the session over holds a newer one.
    if (live.gatewayKeyId)
      await this.keys.revoke(live.gatewayKeyId).catch(ignoreFailure('gateway key revoke', 'the recovery pass revokes session keys no adapter holds'));
    if (why !== 'lost') await this.rows.release(sessionId, live.token).catch(ignoreFailure('adapter lease release', 'the lease expires without heartbeats'));
    rootLogger().info({ session_id: sessionId, adapter_id: live.adapterId, why }, 'external agent adapter ended');
  }
}
