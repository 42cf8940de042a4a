import { Inject, Injectable, OnApplicationShutdown, OnModuleInit } from '@nestjs/common';
import { AppConfig } from '@core/config/app-config';
import type { EnvProviderSpec } from '@core/config/groups/gateway.env';
import { EventBus, Unsubscribe } from '@core/bus/event-bus.port';
import { rootLogger } from '@core/logging/logger';
import { presetById } from './provider-presets';
import type { ProviderEntity } from './provider.entity';
import { ProviderRepository } from './provider.repository';
import { ProviderSecretsService } from './provider-secrets.service';
import { RuntimeProvider, RuntimeProviderInit } from './runtime-provider';
import { announceChange, reloadOnChange } from './settings-sync';
import { busChannels } from '@core/bus';

/**
 * The in-memory provider set the hot path reads (no Postgres per request). Built from `PROVIDER_<NAME>_*`
 * (held in memory) and the settings table (which wins for a provider of the same name), rebuilt when an
 * operator changes providers in any process (`gateway.providers.changed` on the EventBus).
 */
@Injectable()
export class ProviderRegistryService implements OnModuleInit, OnApplicationShutdown {
  private providers = new Map<string, RuntimeProvider>();
  private sorted: RuntimeProvider[] = [];
  private readonly envSpecs: Map<string, EnvProviderSpec>;
  private readonly listeners = new Set<(changed: string[]) => void>();
  private unsubscribe: Unsubscribe | undefined;
  private reloading: Promise<void> | undefined;
  private reloadAgain = false;

  constructor(
    private readonly config: AppConfig,
    private readonly repo: ProviderRepository,
    private readonly secrets: ProviderSecretsService,
    @Inject(EventBus) private readonly bus: EventBus,
  ) {
    this.envSpecs = new Map(config.gateway.providers.map((s) => [s.name, s]));
  }

  async onModuleInit(): Promise<void> {
    await this.reload();
    this.unsubscribe = await reloadOnChange(this.bus, busChannels.providersChanged, () => this.reload());
  }

  async onApplicationShutdown(): Promise<void> {
    await this.unsubscribe?.();
    for (const p of this.providers.values()) p.closeEndpoint();
  }

  list(): readonly RuntimeProvider[] {
    return this.sorted;
  }

  get(id: string): RuntimeProvider | undefined {
    return this.providers.get(id);
  }

  envSpec(id: string): EnvProviderSpec | undefined {
    return this.envSpecs.get(id);
  }

  /** Called with the ids whose configuration changed (added, removed or edited). */
  onChange(listener: (changed: string[]) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Tells every process (this one included, synchronously) that providers changed. */
  async changed(): Promise<void> {
    await this.reload();
    await announceChange(this.bus, busChannels.providersChanged);
  }

  /** Rebuilds the set; concurrent calls coalesce into one extra pass. */
  reload(): Promise<void> {
    if (this.reloading) {
      this.reloadAgain = true;
      return this.reloading;
    }
    this.reloading = (async () => {
      try {
        do {
          this.reloadAgain = false;
          await this.rebuild();
        } while (this.reloadAgain);
      } catch (err) {
        rootLogger().warn({ err: err instanceof Error ? err.message : String(err) }, 'provider reload failed; keeping the previous set');
      } finally {
        this.reloading = undefined;
      }
    })();
    return this.reloading;
  }

  private async rebuild(): Promise<void> {
    const rows = await this.repo.list();
    const inits = new Map<string, RuntimeProviderInit>();
    for (const spec of this.envSpecs.values()) {
      const init = this.fromEnv(spec);
      if (init) inits.set(init.id, init);
    }
    for (const row of rows) inits.set(row.id, this.fromRow(row, inits.get(row.id)));
    const next = new Map<string, RuntimeProvider>();
    const changed: string[] = [];
    for (const init of inits.values()) {
      const provider = new RuntimeProvider(
        init,
        { allowPrivate: init.kind === 'local' || this.config.gateway.allowPrivateProviderUrls, selfPort: this.config.server.port },
        this.config.gateway.timeouts,
      );
      const previous = this.providers.get(init.id);
      if (previous && previous.sameTransport(provider)) provider.adoptEndpoint(previous);
      if (!previous || fingerprint(previous) !== fingerprint(provider)) changed.push(init.id);
      next.set(init.id, provider);
    }
    for (const [id, old] of this.providers) {
      old.closeEndpoint();
      if (!next.has(id)) changed.push(id);
    }
    this.providers = next;
    this.sorted = [...next.values()].sort((a, b) => a.id.localeCompare(b.id));
    if (changed.length > 0) for (const l of this.listeners) l(changed);
  }

  private fromEnv(spec: EnvProviderSpec): RuntimeProviderInit | undefined {
    const preset = presetById(spec.name);
    const baseUrl = spec.baseUrl ?? preset?.baseUrl;
    if (!baseUrl) {
      rootLogger().warn({ provider: spec.name }, `PROVIDER_${spec.name.toUpperCase()}_BASE_URL is required for a provider that is not a preset; skipped`);
      return undefined;
    }
    const at = this.config.startedAt;
    return {
      id: spec.name,
      presetId: preset?.id ?? null,
      customName: null,
      kind: spec.kind ?? preset?.kind ?? 'cloud',
      protocol: spec.protocol ?? preset?.protocol ?? 'openai',
      baseUrl,
      defaultModel: spec.defaultModel ?? (preset?.defaultModel || undefined),
      apiKey: spec.apiKey,
      enabled: true,
      source: 'env',
      envConfigured: true,
      createdAt: at,
      updatedAt: at,
    };
  }

  private fromRow(row: ProviderEntity, env: RuntimeProviderInit | undefined): RuntimeProviderInit {
    const stored = row.apiKeyCiphertext ? this.secrets.decrypt(row.apiKeyCiphertext, row.id) : undefined;
    return {
      id: row.id,
      presetId: row.presetId,
      customName: row.customName,
      kind: row.kind === 'local' ? 'local' : 'cloud',
      protocol: row.protocol === 'anthropic' ? 'anthropic' : 'openai',
      baseUrl: row.baseUrl,
      defaultModel: row.defaultModel ?? undefined,
      // The env key was given for the env base URL; a row pointing elsewhere does not inherit it.
      apiKey: stored ?? (env && sameUrl(env.baseUrl, row.baseUrl) ? env.apiKey : undefined),
      enabled: row.enabled,
      source: 'settings',
      envConfigured: env !== undefined,
      createdAt: row.createdAt,
      updatedAt: row.updatedAt,
    };
  }
}

const sameUrl = (a: string, b: string): boolean => a.replace(/\/+$/, '') === b.replace(/\/+$/, '');

const fingerprint = (p: RuntimeProvider): string =>
  JSON.stringify([p.baseUrl, p.kind, p.protocol, p.defaultModel, p.enabled, p.credentialState, p.updatedAt.getTime(), p.keyFingerprint]);
