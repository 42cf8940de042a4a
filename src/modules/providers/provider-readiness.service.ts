import { Injectable } from '@nestjs/common';
import { DiscoveryState, ModelDiscoveryService } from './model-discovery.service';
import { ProviderHealthService } from './provider-health.service';
import { ProviderRegistryService } from './provider-registry.service';
import type { RuntimeProvider } from './runtime-provider';

export type CheckStatus = 'ok' | 'warning' | 'blocked' | 'unknown';
export type RoutingBlockReason = 'credential_missing' | 'provider_disabled' | 'provider_rate_limited' | 'circuit_open' | 'provider_unhealthy' | 'no_models';

export interface ReadinessCheck {
  name: 'credentials' | 'models' | 'health' | 'routing';
  status: CheckStatus;
  reason: string;
  message: string;
  operator_action?: string;
}

const ACTION = {
  credentials: (p: RuntimeProvider) => `Add or rotate credentials: set ${p.apiKeyEnv} or PUT /hecate/v1/settings/providers/${p.id}/api-key.`,
  noModels: 'Start the provider and load at least one model, then refresh discovery (GET /hecate/v1/providers/status?refresh=1).',
  cooldown: 'Wait for cooldown or route elsewhere.',
  unhealthy: (p: RuntimeProvider) => `Start the provider or fix its base URL (${p.baseUrl}), then refresh discovery.`,
  url: 'Point the provider at an allowed address: cloud-metadata and link-local targets are always refused; loopback/private targets need kind=local or GATEWAY_ALLOW_PRIVATE_PROVIDER_URLS=true.',
  selfRef: "Point the provider at the upstream's URL, not at this gateway.",
  disabled: (p: RuntimeProvider) => `Enable it with PATCH /hecate/v1/settings/providers/${p.id} {"enabled":true}.`,
};

/** The models a provider can serve now: discovered ids, else its default model when discovery failed. */
export function servedModels(p: RuntimeProvider, d: DiscoveryState | undefined): { models: string[]; source: 'provider' | 'default_model' | 'none' } {
  if (d?.ok) return { models: d.models, source: 'provider' };
  if (p.defaultModel) return { models: [p.defaultModel], source: 'default_model' };
  return { models: [], source: 'none' };
}

/**
 * Provider readiness (docs/api.md, "GET /hecate/v1/providers/status"): one checklist per provider with the API contract's
 * vocabulary. Built from configuration, cached discovery and passive health; never sends a completion.
 */
@Injectable()
export class ProviderReadinessService {
  constructor(
    private readonly registry: ProviderRegistryService,
    private readonly discovery: ModelDiscoveryService,
    private readonly health: ProviderHealthService,
  ) {}

  /** Why routing skips the provider right now, or undefined when it is routable. Cheap: used per request. */
  routingBlock(p: RuntimeProvider, d: DiscoveryState | undefined, now = Date.now()): RoutingBlockReason | undefined {
    if (!p.enabled) return 'provider_disabled';
    if (p.credentialState === 'missing') return 'credential_missing';
    const admission = this.health.wouldAdmit(p.id, now);
    if (!admission.ok) return admission.reason;
    if (!p.urlVerdict.ok || d?.errorKind === 'url_blocked') return 'provider_unhealthy';
    if (d && !d.ok && (d.errorKind === 'network' || d.errorKind === 'timeout') && (this.health.snapshot(p.id, now).lastSuccessAt ?? 0) < d.fetchedAt) {
      return 'provider_unhealthy';
    }
    if (d?.ok && d.models.length === 0) return 'no_models';
    if (!d?.ok && !p.defaultModel && d !== undefined) return 'no_models';
    return undefined;
  }

  async statusAll(refresh: boolean) {
    const providers = this.registry.list();
    const states = await Promise.all(providers.map((p) => (refresh ? this.discovery.refresh(p) : this.discovery.ensure(p))));
    return providers.map((p, i) => this.status(p, states[i]));
  }

  status(p: RuntimeProvider, d: DiscoveryState | undefined) {
    const now = Date.now();
    const h = this.health.snapshot(p.id, now);
    const served = servedModels(p, d);
    const credentials = this.credentialsCheck(p, d);
    const models = this.modelsCheck(p, d);
    const healthCheck = this.healthCheck(p, d, now);
    const block = this.routingBlock(p, d, now);
    const routing: ReadinessCheck = block
      ? { name: 'routing', status: 'blocked', reason: block, message: routingMessage(block), operator_action: routingAction(p, block) }
      : { name: 'routing', status: 'ok', reason: 'routable', message: 'Provider is eligible for routing.' };
    const healthy = healthCheck.status === 'ok' || healthCheck.status === 'warning' || healthCheck.status === 'unknown';
    return {
      name: p.id,
      kind: p.kind,
      protocol: p.protocol,
      status: healthStatusWord(healthCheck, h.status),
      healthy: healthCheck.status !== 'blocked' && healthy,
      base_url: p.baseUrl,
      default_model: p.defaultModel ?? null,
      models: served.models,
      model_count: served.models.length,
      discovery_source: served.source,
      credential_state: p.credentialState,
      credential_ready: credentials.status === 'ok',
      routing_ready: block === undefined,
      ...(block ? { routing_blocked_reason: block } : {}),
      circuit_state: h.circuit,
      ...(h.openUntil ? { cooldown_until: new Date(h.openUntil).toISOString() } : {}),
      ...(h.latencyMs !== undefined ? { latency_ms: Math.round(h.latencyMs) } : {}),
      ...(h.lastError ? { last_error: h.lastError } : {}),
      readiness_checks: [credentials, models, healthCheck, routing],
    };
  }

  private credentialsCheck(p: RuntimeProvider, d: DiscoveryState | undefined): ReadinessCheck {
    if (p.credentialState === 'missing') {
      return {
        name: 'credentials',
        status: 'blocked',
        reason: 'credential_missing',
        message: 'No API key is configured for this provider.',
        operator_action: ACTION.credentials(p),
      };
    }
    if (d?.errorKind === 'http' && (d.status === 401 || d.status === 403)) {
      return {
        name: 'credentials',
        status: 'blocked',
        reason: 'credential_rejected',
        message: `The provider rejected the credentials (HTTP ${d.status}).`,
        operator_action: ACTION.credentials(p),
      };
    }
    if (p.credentialState === 'not_required')
      return { name: 'credentials', status: 'ok', reason: 'not_required', message: 'No credentials are required for this provider.' };
    return { name: 'credentials', status: 'ok', reason: 'configured', message: 'An API key is configured.' };
  }

  private modelsCheck(p: RuntimeProvider, d: DiscoveryState | undefined): ReadinessCheck {
    const blocked = this.urlBlock(p, d);
    if (blocked) return { name: 'models', status: 'blocked', ...blocked };
    if (!d) return { name: 'models', status: 'unknown', reason: 'discovery_pending', message: 'Model discovery has not finished yet.' };
    if (d.errorKind === 'credential_missing') {
      return {
        name: 'models',
        status: 'unknown',
        reason: 'credential_missing',
        message: 'Model discovery needs credentials.',
        operator_action: ACTION.credentials(p),
      };
    }
    if (d.ok && d.models.length > 0) {
      return { name: 'models', status: 'ok', reason: 'models_discovered', message: `${d.models.length} model${d.models.length === 1 ? '' : 's'} discovered.` };
    }
    if (d.ok) return { name: 'models', status: 'blocked', reason: 'no_models', message: 'The provider reports no models.', operator_action: ACTION.noModels };
    if (p.defaultModel) {
      return {
        name: 'models',
        status: 'warning',
        reason: 'default_model_only',
        message: `Model discovery failed (${d.error ?? 'unknown error'}); routing uses the default model ${p.defaultModel}.`,
        operator_action: ACTION.noModels,
      };
    }
    return {
      name: 'models',
      status: 'blocked',
      reason: 'discovery_failed',
      message: `Model discovery failed: ${d.error ?? 'unknown error'}.`,
      operator_action: ACTION.noModels,
    };
  }

  private healthCheck(p: RuntimeProvider, d: DiscoveryState | undefined, now: number): ReadinessCheck {
    const blocked = this.urlBlock(p, d);
    if (blocked) return { name: 'health', status: 'blocked', ...blocked };
    const h = this.health.snapshot(p.id, now);
    if (h.circuit === 'open') {
      const until = new Date(h.openUntil ?? now).toISOString();
      return h.openReason === 'rate_limited'
        ? {
            name: 'health',
            status: 'blocked',
            reason: 'provider_rate_limited',
            message: `The provider answered 429; routing skips it until ${until}.`,
            operator_action: ACTION.cooldown,
          }
        : {
            name: 'health',
            status: 'blocked',
            reason: 'circuit_open',
            message: `${h.consecutiveFailures} consecutive failures opened the circuit until ${until}.`,
            operator_action: ACTION.cooldown,
          };
    }
    if (h.circuit === 'half_open')
      return { name: 'health', status: 'warning', reason: 'half_open', message: 'Cooldown ended; the next request probes the provider.' };
    if (d && !d.ok && (d.errorKind === 'network' || d.errorKind === 'timeout') && (h.lastSuccessAt ?? 0) < d.fetchedAt) {
      return {
        name: 'health',
        status: 'blocked',
        reason: 'provider_unhealthy',
        message: `The provider did not answer: ${d.error ?? 'unreachable'}.`,
        operator_action: ACTION.unhealthy(p),
      };
    }
    if (h.status === 'degraded') {
      return {
        name: 'health',
        status: 'warning',
        reason: 'provider_slow',
        message: `Average latency ${Math.round(h.latencyMs ?? 0)} ms is above the degraded threshold.`,
      };
    }
    if (h.status === 'unknown' && !d?.ok) return { name: 'health', status: 'unknown', reason: 'no_signal', message: 'No traffic or discovery result yet.' };
    return { name: 'health', status: 'ok', reason: 'healthy', message: 'Provider health checks are passing.' };
  }

  private urlBlock(p: RuntimeProvider, d: DiscoveryState | undefined): { reason: string; message: string; operator_action: string } | undefined {
    const reason = !p.urlVerdict.ok ? p.urlVerdict.reason : d?.errorKind === 'url_blocked' ? (d.blockReason ?? 'url_blocked') : undefined;
    if (!reason) return undefined;
    const message = (!p.urlVerdict.ok ? p.urlVerdict.message : d?.error) ?? 'The provider address is refused by the outbound URL policy.';
    return { reason, message, operator_action: reason === 'self_referential' ? ACTION.selfRef : ACTION.url };
  }
}

function routingMessage(reason: RoutingBlockReason): string {
  switch (reason) {
    case 'credential_missing':
      return 'Routing skips this provider: no API key is configured.';
    case 'provider_disabled':
      return 'Routing skips this provider: it is disabled.';
    case 'provider_rate_limited':
      return 'Routing skips this provider while its rate-limit cooldown runs.';
    case 'circuit_open':
      return 'Routing skips this provider while its circuit is open.';
    case 'provider_unhealthy':
      return 'Routing skips this provider: it is unreachable or its address is refused.';
    case 'no_models':
      return 'Routing skips this provider: it has no models.';
  }
}

function routingAction(p: RuntimeProvider, reason: RoutingBlockReason): string {
  switch (reason) {
    case 'credential_missing':
      return ACTION.credentials(p);
    case 'provider_disabled':
      return ACTION.disabled(p);
    case 'provider_rate_limited':
    case 'circuit_open':
      return ACTION.cooldown;
    case 'provider_unhealthy':
      return ACTION.unhealthy(p);
    case 'no_models':
      return ACTION.noModels;
  }
}

function healthStatusWord(check: ReadinessCheck, status: string): string {
  if (check.status === 'blocked') return check.reason === 'provider_rate_limited' ? 'rate_limited' : check.reason === 'circuit_open' ? 'open' : 'unhealthy';
  if (check.reason === 'half_open') return 'half_open';
  if (check.reason === 'provider_slow') return 'degraded';
  if (check.status === 'unknown') return 'unknown';
  return status === 'unknown' ? 'healthy' : status;
}
