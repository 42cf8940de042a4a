import type { DiscoveryState } from '@modules/providers/model-discovery.service';
import type { EffectiveCapabilities } from '@modules/providers/model-capabilities.service';
import { RuntimeProvider } from '@modules/providers/runtime-provider';
import { ModelNotConfiguredError, RouteImpossibleError, UnknownProviderError } from './inference.errors';
import { PlannerContext, planRoute, suggestModels } from './route-planner';

const provider = (id: string, opts: Partial<{ defaultModel: string; apiKey: string; kind: 'cloud' | 'local' }> = {}) =>
  new RuntimeProvider(
    {
      id,
      presetId: null,
      customName: null,
      kind: opts.kind ?? 'local',
      protocol: 'openai',
      baseUrl: `http://127.0.0.1:9/${id}/v1`,
      defaultModel: opts.defaultModel,
      apiKey: opts.apiKey,
      enabled: true,
      source: 'env',
      envConfigured: true,
      createdAt: new Date(0),
      updatedAt: new Date(0),
    },
    { allowPrivate: true, selfPort: 1 },
    { connectMs: 1000, firstByteMs: 1000, idleMs: 1000 },
  );

const discovered = (models: string[]): DiscoveryState => ({ ok: true, models, modelSet: new Set(models), fetchedAt: 0, expiresAt: Infinity });
const failed: DiscoveryState = { ok: false, models: [], modelSet: new Set(), fetchedAt: 0, expiresAt: Infinity, errorKind: 'http', status: 404 };
const caps = (tool_calling: EffectiveCapabilities['tool_calling'] = 'unknown'): EffectiveCapabilities => ({
  tool_calling,
  streaming: true,
  max_context_tokens: null,
  image_input: 'unknown',
  assistant_prefill: null,
  source: 'provider',
});

function ctx(over: Partial<PlannerContext> & { states: Record<string, DiscoveryState | undefined> }): PlannerContext {
  return {
    providers: over.providers ?? [],
    discovery: (p) => over.states[p.id],
    block: over.block ?? (() => undefined),
    order: over.order ?? (() => [0, 0, 0]),
    capabilities: over.capabilities ?? (() => caps()),
    defaultModel: over.defaultModel,
    failover: over.failover ?? true,
  };
}

const req = (r: { provider?: string; model?: string; tools?: boolean }) => ({
  provider: r.provider,
  model: r.model,
  needsTools: r.tools ?? false,
  needsImages: false,
});

describe('planRoute', () => {
  const a = provider('alpha');
  const b = provider('beta');
  const states = { alpha: discovered(['m1', 'shared']), beta: discovered(['shared']) };

  it('routes a requested model to every provider that lists it, ordered by health/stability/latency then name', () => {
    const plan = planRoute(ctx({ providers: [b, a], states, order: (p) => (p.id === 'alpha' ? [0, 2, 0] : [0, 0, 0]) }), req({ model: 'shared' }));
    expect(plan.reason).toBe('requested_model');
    expect(plan.pinned).toBe(false);
    expect(plan.candidates.map((c) => c.provider.id)).toEqual(['beta', 'alpha']);
  });

  it('pins a provider (with and without a model) and never fails over', () => {
    const p1 = planRoute(ctx({ providers: [a, b], states }), req({ provider: 'beta', model: 'shared' }));
    expect(p1).toMatchObject({ reason: 'pinned_provider_model', pinned: true });
    expect(p1.candidates.map((c) => c.provider.id)).toEqual(['beta']);
    const withDefault = provider('gamma', { defaultModel: 'g1' });
    const p2 = planRoute(ctx({ providers: [withDefault], states: { gamma: discovered(['g1', 'g2']) } }), req({ provider: 'gamma' }));
    expect(p2).toMatchObject({ reason: 'pinned_provider', candidates: [{ model: 'g1' }] });
  });

  it('uses the provider default model, else GATEWAY_DEFAULT_MODEL, when no model is requested', () => {
    const withDefault = provider('gamma', { defaultModel: 'g1' });
    expect(planRoute(ctx({ providers: [a, withDefault], states: { ...states, gamma: failed } }), req({})).reason).toBe('provider_default_model');
    const plan = planRoute(ctx({ providers: [a, b], states, defaultModel: 'shared' }), req({}));
    expect(plan.reason).toBe('global_default_model');
    expect(plan.candidates).toHaveLength(2);
  });

  it('answers model_not_configured with close suggestions', () => {
    let err: unknown;
    try {
      planRoute(ctx({ providers: [a, b], states }), req({ model: 'sharde' }));
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ModelNotConfiguredError);
    expect((err as ModelNotConfiguredError).status).toBe(422);
    expect((err as ModelNotConfiguredError).details.suggested_models).toEqual(expect.arrayContaining(['shared']));
    expect(((err as ModelNotConfiguredError).details.suggested_models as string[])[0]).toBe('shared');
    expect(() => planRoute(ctx({ providers: [a], states }), req({ provider: 'alpha', model: 'nope' }))).toThrow(ModelNotConfiguredError);
  });

  it('serves only the default model of a provider whose discovery failed (pinned requests get the benefit of the doubt)', () => {
    const d = provider('delta', { defaultModel: 'd1' });
    expect(planRoute(ctx({ providers: [d], states: { delta: failed } }), req({ model: 'd1' })).candidates).toHaveLength(1);
    expect(() => planRoute(ctx({ providers: [d], states: { delta: failed } }), req({ model: 'other' }))).toThrow(ModelNotConfiguredError);
    expect(planRoute(ctx({ providers: [d], states: { delta: failed } }), req({ provider: 'delta', model: 'other' })).candidates[0].model).toBe('other');
  });

  it('skips blocked providers with the readiness vocabulary and fails with route_impossible when none is left', () => {
    const plan = planRoute(ctx({ providers: [a, b], states, block: (p) => (p.id === 'alpha' ? 'circuit_open' : undefined) }), req({ model: 'shared' }));
    expect(plan.candidates.map((c) => c.provider.id)).toEqual(['beta']);
    expect(plan.considered).toEqual(expect.arrayContaining([expect.objectContaining({ provider: 'alpha', status: 'skipped', skip_reason: 'circuit_open' })]));
    expect(() => planRoute(ctx({ providers: [a, b], states, block: () => 'credential_missing' }), req({ model: 'shared' }))).toThrow(RouteImpossibleError);
  });

  it('skips a model whose tool calling is explicitly none when tools are requested', () => {
    const plan = planRoute(
      ctx({ providers: [a, b], states, capabilities: (p) => caps(p === 'alpha' ? 'none' : 'unknown') }),
      req({ model: 'shared', tools: true }),
    );
    expect(plan.candidates.map((c) => c.provider.id)).toEqual(['beta']);
  });

  it('keeps only the first candidate when failover is disabled', () => {
    expect(planRoute(ctx({ providers: [a, b], states, failover: false }), req({ model: 'shared' })).candidates).toHaveLength(1);
  });

  it('rejects an unknown pinned provider', () => {
    expect(() => planRoute(ctx({ providers: [a], states }), req({ provider: 'zzz', model: 'm1' }))).toThrow(UnknownProviderError);
  });

  it('suggests models by prefix and edit distance', () => {
    expect(suggestModels('gpt-4o-mni', ['llama3.2', 'gpt-4o-mini', 'gpt-4o', 'claude-3'])[0]).toBe('gpt-4o-mini');
  });
});
