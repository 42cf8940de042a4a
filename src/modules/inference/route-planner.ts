import type { DiscoveryState } from '@modules/providers';
import type { EffectiveCapabilities } from '@modules/providers';
import type { RoutingBlockReason } from '@modules/providers';
import type { RuntimeProvider } from '@modules/providers';
import type { TraceCandidate } from './usage/trace-store.service';
import { ModelNotConfiguredError, RouteImpossibleError, UnknownProviderError } from './inference.errors';

export type RouteReason = 'pinned_provider_model' | 'pinned_provider' | 'requested_model' | 'provider_default_model' | 'global_default_model';

export interface RouteRequest {
  provider?: string;
  model?: string;
  needsTools: boolean;
  needsImages: boolean;
}

export interface RouteCandidate {
  provider: RuntimeProvider;
  model: string;
}

export interface RoutePlan {
  reason: RouteReason;
  pinned: boolean;
  candidates: RouteCandidate[];
  /** Every provider considered, with why it was skipped (trace). */
  considered: TraceCandidate[];
}

/** What the planner reads; all synchronous and in memory. */
export interface PlannerContext {
  providers: readonly RuntimeProvider[];
  discovery: (p: RuntimeProvider) => DiscoveryState | undefined;
  block: (p: RuntimeProvider, d: DiscoveryState | undefined) => RoutingBlockReason | undefined;
  order: (p: RuntimeProvider) => [number, number, number];
  capabilities: (provider: string, model: string) => EffectiveCapabilities;
  defaultModel: string | undefined;
  failover: boolean;
}

/** Does the provider serve the model right now? Discovered ids, else only its default model. */
function serves(p: RuntimeProvider, d: DiscoveryState | undefined, model: string): boolean {
  if (d?.ok) return d.modelSet.has(model);
  return p.defaultModel === model;
}

function compare(ctx: PlannerContext) {
  const keys = new Map<RuntimeProvider, [number, number, number]>();
  const key = (p: RuntimeProvider) => {
    let k = keys.get(p);
    if (!k) keys.set(p, (k = ctx.order(p)));
    return k;
  };
  return (a: RuntimeProvider, b: RuntimeProvider): number => {
    const ka = key(a);
    const kb = key(b);
    return ka[0] - kb[0] || ka[1] - kb[1] || ka[2] - kb[2] || a.id.localeCompare(b.id);
  };
}

function capabilitySkip(ctx: PlannerContext, p: RuntimeProvider, model: string, req: RouteRequest): string | undefined {
  if (!req.needsTools && !req.needsImages) return undefined;
  const caps = ctx.capabilities(p.id, model);
  if (req.needsTools && caps.tool_calling === 'none') return 'tool_calling_unsupported';
  if (req.needsImages && caps.image_input === 'none') return 'image_input_unsupported';
  return undefined;
}

/** Up to five known model ids closest to the requested one (shared prefix, then edit distance). */
export function suggestModels(requested: string | undefined, known: string[]): string[] {
  const unique = [...new Set(known)];
  if (!requested) return unique.slice(0, 5);
  const r = requested.toLowerCase();
  const score = (m: string): number => {
    const s = m.toLowerCase();
    let prefix = 0;
    while (prefix < Math.min(s.length, r.length) && s[prefix] === r[prefix]) prefix++;
    return distance(s, r) - prefix * 2;
  };
  return unique
    .map((m) => [m, score(m)] as const)
    .sort((a, b) => a[1] - b[1] || a[0].localeCompare(b[0]))
    .slice(0, 5)
    .map(([m]) => m);
}

function distance(a: string, b: string): number {
  const row = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    let prev = row[0];
    row[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const tmp = row[j];
      row[j] = Math.min(row[j] + 1, row[j - 1] + 1, prev + (a[i - 1] === b[j - 1] ? 0 : 1));
      prev = tmp;
    }
  }
  return row[b.length];
}

function allKnownModels(ctx: PlannerContext, only?: RuntimeProvider): string[] {
  const out: string[] = [];
  for (const p of only ? [only] : ctx.providers) {
    const d = ctx.discovery(p);
    if (d?.ok) out.push(...d.models);
    else if (p.defaultModel) out.push(p.defaultModel);
  }
  return out;
}

const providerIds = (ctx: PlannerContext): string[] => ctx.providers.map((x) => x.id);

/** A server with no provider at all: the operator is told which variable to set. */
const noProviderError = (model: string | undefined) =>
  new ModelNotConfiguredError('no provider is configured', { ...(model ? { model } : {}), suggested_models: [] }, { noProvider: true });

/**
 * Chooses the ordered candidate list for a request (route reasons of the API contract, docs/api.md). Pinned routes never fail
 * over; otherwise every routable provider serving the model is a candidate, ordered by health, stability,
 * latency, then name.
 */
export function planRoute(ctx: PlannerContext, req: RouteRequest): RoutePlan {
  const considered: TraceCandidate[] = [];
  const cmp = compare(ctx);

  if (req.provider) {
    const p = ctx.providers.find((x) => x.id === req.provider);
    if (!p) throw new UnknownProviderError(req.provider, providerIds(ctx));
    const d = ctx.discovery(p);
    let model = req.model;
    const reason: RouteReason = model ? 'pinned_provider_model' : 'pinned_provider';
    if (!model) model = p.defaultModel ?? (d?.ok ? d.models[0] : undefined) ?? ctx.defaultModel;
    if (!model) {
      throw new ModelNotConfiguredError(`provider ${p.id} has no default model and none was requested`, {
        provider: p.id,
        suggested_models: suggestModels(undefined, allKnownModels(ctx, p)),
      });
    }
    // A pinned provider whose discovery failed gets the benefit of the doubt: the upstream decides.
    if (d?.ok && !d.modelSet.has(model)) {
      throw new ModelNotConfiguredError(`model ${model} is not reported by provider ${p.id}`, {
        model,
        provider: p.id,
        suggested_models: suggestModels(model, allKnownModels(ctx, p)),
      });
    }
    const skip = ctx.block(p, d) ?? capabilitySkip(ctx, p, model, req);
    considered.push({ provider: p.id, model, kind: p.kind, status: skip ? 'skipped' : 'selected', reason, ...(skip ? { skip_reason: skip } : {}) });
    if (skip) throw new RouteImpossibleError(`provider ${p.id} cannot serve ${model} now (${skip})`, considered);
    return { reason, pinned: true, candidates: [{ provider: p, model }], considered };
  }

  if (ctx.providers.length === 0) throw noProviderError(req.model);

  /** Every provider serving `model`, or model_not_configured with suggestions. */
  const servingPairs = (model: string, what: string): RouteCandidate[] => {
    const found = ctx.providers.filter((p) => serves(p, ctx.discovery(p), model)).map((p) => ({ provider: p, model }));
    if (found.length === 0)
      throw new ModelNotConfiguredError(`${what} ${model} is not reported by any configured provider`, {
        model,
        suggested_models: suggestModels(model, allKnownModels(ctx)),
      });
    return found;
  };

  let reason: RouteReason;
  let pairs: RouteCandidate[];
  if (req.model) {
    reason = 'requested_model';
    pairs = servingPairs(req.model, 'model');
  } else {
    const withDefault = ctx.providers.filter((p) => p.defaultModel && ctx.block(p, ctx.discovery(p)) === undefined).sort(cmp);
    if (withDefault.length > 0) {
      reason = 'provider_default_model';
      pairs = withDefault.map((p) => ({ provider: p, model: p.defaultModel as string }));
    } else if (ctx.defaultModel) {
      reason = 'global_default_model';
      pairs = servingPairs(ctx.defaultModel, 'GATEWAY_DEFAULT_MODEL');
    } else {
      throw new ModelNotConfiguredError('no model requested and no default model is configured', {
        suggested_models: suggestModels(undefined, allKnownModels(ctx)),
      });
    }
  }

  const routable: RouteCandidate[] = [];
  for (const c of pairs.sort((a, b) => cmp(a.provider, b.provider))) {
    const skip = ctx.block(c.provider, ctx.discovery(c.provider)) ?? capabilitySkip(ctx, c.provider, c.model, req);
    if (skip) considered.push({ provider: c.provider.id, model: c.model, kind: c.provider.kind, status: 'skipped', skip_reason: skip });
    else {
      routable.push(c);
      considered.push({ provider: c.provider.id, model: c.model, kind: c.provider.kind, status: 'not_tried' });
    }
  }
  if (routable.length === 0) throw new RouteImpossibleError(`no routable provider for ${pairs[0]?.model ?? 'the request'}`, considered);
  const candidates = ctx.failover ? routable : routable.slice(0, 1);
  return { reason, pinned: false, candidates, considered };
}
