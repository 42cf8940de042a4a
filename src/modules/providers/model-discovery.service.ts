import { Injectable, OnModuleInit } from '@nestjs/common';
import { AppConfig } from '@core/config/app-config';
import { LlmClient } from './llm-client';
import { ProviderRegistryService } from './provider-registry.service';
import type { RuntimeProvider } from './runtime-provider';
import { UpstreamError, UpstreamFailureKind } from './upstream-error';
import type { UrlBlockReason } from '@core/net/outbound-url-policy';

export interface DiscoveryState {
  ok: boolean;
  models: string[];
  modelSet: ReadonlySet<string>;
  fetchedAt: number;
  expiresAt: number;
  /** When !ok: what went wrong. `credential_missing` means discovery was not attempted. */
  errorKind?: UpstreamFailureKind | 'credential_missing' | 'disabled';
  error?: string;
  status?: number;
  blockReason?: UrlBlockReason;
}

const DISCOVERY_TIMEOUT_MS = 5_000;
const EMPTY: ReadonlySet<string> = new Set();
const UNCONFIGURED_CLOUD_TTL_MS = 10 * 60_000;

/** Parses `/models` (OpenAI, Anthropic) or `/api/tags` (Ollama) into ids. */
export function parseModelList(body: unknown): string[] {
  const b = body as { data?: unknown; models?: unknown };
  const rows = Array.isArray(b?.data) ? b.data : Array.isArray(b?.models) ? b.models : [];
  const ids: string[] = [];
  for (const row of rows as Array<Record<string, unknown>>) {
    const id = row?.id ?? row?.name ?? row?.model;
    if (typeof id === 'string' && id.length > 0) ids.push(id);
  }
  return [...new Set(ids)];
}

/**
 * Lazy, cached model discovery (`GET {base}/models`, Ollama `/api/tags`). The hot path reads `peek()`,
 * which never waits once a list is cached and refreshes stale entries in the background.
 */
@Injectable()
export class ModelDiscoveryService implements OnModuleInit {
  private readonly states = new Map<string, DiscoveryState>();
  private readonly inflight = new Map<string, Promise<DiscoveryState>>();

  constructor(
    private readonly config: AppConfig,
    private readonly registry: ProviderRegistryService,
  ) {}

  onModuleInit(): void {
    this.registry.onChange((ids) => {
      for (const id of ids) this.states.delete(id);
    });
    // Warm the cache without holding up boot.
    for (const p of this.registry.list()) void this.ensure(p);
  }

  /** The cached state (possibly stale; a refresh is started). Undefined before the first discovery ends. */
  peek(provider: RuntimeProvider): DiscoveryState | undefined {
    const state = this.states.get(provider.id);
    if (!state || state.expiresAt <= Date.now()) void this.ensure(provider);
    return state;
  }

  /** Waits for a list when none is cached yet; otherwise like `peek`. */
  async ensure(provider: RuntimeProvider): Promise<DiscoveryState> {
    const state = this.states.get(provider.id);
    if (state && state.expiresAt > Date.now()) return state;
    const running = this.inflight.get(provider.id);
    if (running) return state ?? running;
    const p = this.discover(provider).finally(() => this.inflight.delete(provider.id));
    this.inflight.set(provider.id, p);
    return state ?? p;
  }

  /** Forces a fresh discovery (`?refresh=1`). */
  refresh(provider: RuntimeProvider): Promise<DiscoveryState> {
    const running = this.inflight.get(provider.id);
    if (running) return running;
    const p = this.discover(provider).finally(() => this.inflight.delete(provider.id));
    this.inflight.set(provider.id, p);
    return p;
  }

  private async discover(provider: RuntimeProvider): Promise<DiscoveryState> {
    const now = Date.now();
    const ttl = this.config.gateway.discoveryTtlMs;
    let state: DiscoveryState;
    if (provider.credentialState === 'missing') {
      state = {
        ok: false,
        models: [],
        modelSet: EMPTY,
        fetchedAt: now,
        expiresAt: now + UNCONFIGURED_CLOUD_TTL_MS,
        errorKind: 'credential_missing',
        error: 'no API key configured',
      };
    } else {
      try {
        const body = await LlmClient.getJson(provider, provider.modelsPath, DISCOVERY_TIMEOUT_MS);
        const models = parseModelList(body);
        state = { ok: true, models, modelSet: new Set(models), fetchedAt: now, expiresAt: Date.now() + ttl };
      } catch (err) {
        const e = err instanceof UpstreamError ? err : undefined;
        const failureTtl = provider.kind === 'local' ? Math.min(ttl, 30_000) : ttl;
        state = {
          ok: false,
          models: [],
          modelSet: EMPTY,
          fetchedAt: now,
          expiresAt: Date.now() + failureTtl,
          errorKind: e?.kind ?? 'network',
          error: e?.message ?? String(err),
          status: e?.info.status,
          blockReason: e?.info.blockReason,
        };
      }
    }
    // A provider edited meanwhile: its new configuration discovers on its own.
    if (this.registry.get(provider.id) === provider) this.states.set(provider.id, state);
    return state;
  }
}
