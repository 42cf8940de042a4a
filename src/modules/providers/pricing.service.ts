import { Inject, Injectable, OnModuleInit } from '@nestjs/common';
import { EventBus } from '@core/bus/event-bus.port';
import { catalogPrice, Price } from './model-catalog';
import { ModelSettingsRepository } from './model-settings.repository';
import type { PricingOverrideEntity } from './pricing-override.entity';
import type { PutPriceDto } from './pricing.dto';
import { announceChange, reloadOnChange } from './settings-sync';
import { busChannels } from '@core/bus';

export type PriceSource = 'manual' | 'builtin' | 'local' | 'unpriced';

export interface EffectivePrice extends Price {
  source: PriceSource;
}

export interface TokenUsage {
  inputTokens: number;
  outputTokens: number;
  /** Part of inputTokens read from the provider's prompt cache. */
  cachedInputTokens: number;
}

const key = (provider: string, model: string): string => `${provider}\u0000${model}`;
const ZERO: EffectivePrice = { input: 0, output: 0, cachedInput: 0, source: 'unpriced' };
const LOCAL: EffectivePrice = { input: 0, output: 0, cachedInput: 0, source: 'local' };

export const toPriceRecord = (provider: string, model: string, p: EffectivePrice, updatedAt?: Date) => ({
  provider,
  model,
  input_micros_usd_per_million_tokens: p.input,
  output_micros_usd_per_million_tokens: p.output,
  cached_input_micros_usd_per_million_tokens: p.cachedInput,
  source: p.source,
  ...(updatedAt ? { updated_at: updatedAt.toISOString() } : {}),
});

/**
 * Prices in micro-USD per 1M tokens: operator overrides > built-in table (common cloud models); local providers
 * cost 0. Cost of a call = uncached input × input + cached × cached_input + output × output, over 1M.
 */
@Injectable()
export class PricingService implements OnModuleInit {
  private overrides = new Map<string, PricingOverrideEntity>();
  /** Effective prices by provider/model (the catalog is a regex scan): cleared whenever overrides reload. */
  private readonly cache = new Map<string, EffectivePrice>();

  constructor(
    private readonly repo: ModelSettingsRepository,
    @Inject(EventBus) private readonly bus: EventBus,
  ) {}

  async onModuleInit(): Promise<void> {
    await this.reload();
    await reloadOnChange(this.bus, busChannels.pricingChanged, () => this.reload());
  }

  private async reload(): Promise<void> {
    this.overrides = new Map((await this.repo.listPrices()).map((r) => [key(r.provider, r.model), r]));
    this.cache.clear();
  }

  price(provider: string, providerKind: 'cloud' | 'local', model: string): EffectivePrice {
    const k = `${providerKind}\u0000${key(provider, model)}`;
    let p = this.cache.get(k);
    if (!p) {
      if (this.cache.size > 10_000) this.cache.clear();
      p = this.resolve(provider, providerKind, model);
      this.cache.set(k, p);
    }
    return p;
  }

  private resolve(provider: string, providerKind: 'cloud' | 'local', model: string): EffectivePrice {
    const o = this.overrides.get(key(provider, model));
    if (o) return { input: Number(o.input), output: Number(o.output), cachedInput: Number(o.cachedInput), source: 'manual' };
    if (providerKind === 'local') return LOCAL;
    const builtin = catalogPrice(model);
    return builtin ? { ...builtin, source: 'builtin' } : ZERO;
  }

  /** Cost in micro-USD (rounded up to whole micros so a paid call never costs 0). */
  costMicros(price: Price, usage: TokenUsage): number {
    const cached = Math.min(usage.cachedInputTokens, usage.inputTokens);
    const total = (usage.inputTokens - cached) * price.input + cached * price.cachedInput + usage.outputTokens * price.output;
    return total === 0 ? 0 : Math.ceil(total / 1_000_000);
  }

  listOverrides() {
    return [...this.overrides.values()].map((o) =>
      toPriceRecord(
        o.provider,
        o.model,
        { input: Number(o.input), output: Number(o.output), cachedInput: Number(o.cachedInput), source: 'manual' },
        o.updatedAt,
      ),
    );
  }

  async put(provider: string, model: string, dto: PutPriceDto) {
    const row: PricingOverrideEntity = {
      provider,
      model,
      input: dto.input_micros_usd_per_million_tokens,
      output: dto.output_micros_usd_per_million_tokens,
      cachedInput: dto.cached_input_micros_usd_per_million_tokens ?? dto.input_micros_usd_per_million_tokens,
      updatedAt: new Date(),
    };
    await this.repo.upsertPrice(row);
    await this.changed();
    return toPriceRecord(provider, model, { input: row.input, output: row.output, cachedInput: row.cachedInput, source: 'manual' }, row.updatedAt);
  }

  async remove(provider: string, model: string): Promise<boolean> {
    const removed = await this.repo.deletePrice({ provider, model });
    await this.changed();
    return removed;
  }

  private async changed(): Promise<void> {
    await this.reload();
    await announceChange(this.bus, busChannels.pricingChanged);
  }
}
