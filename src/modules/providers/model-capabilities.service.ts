import { Inject, Injectable, OnModuleInit } from '@nestjs/common';
import { EventBus } from '@core/bus/event-bus.port';
import { catalogCapabilities, ImageInput, ToolCalling } from './model-catalog';
import { CapabilitySource, ModelCapabilityEntity } from './model-capability.entity';
import { ModelSettingsRepository } from './model-settings.repository';
import { CapabilityOverrideDto, CapabilityProbeDto } from './model-capabilities.dto';
import { announceChange, reloadOnChange } from './settings-sync';
import { busChannels } from '@core/bus';

export type EffectiveSource = CapabilitySource | 'catalog' | 'provider' | 'unknown';

export interface EffectiveCapabilities {
  tool_calling: ToolCalling;
  streaming: boolean;
  max_context_tokens: number | null;
  image_input: ImageInput;
  /**
   * Whether the model continues a trailing assistant message (a prefill) rather than answering anew; null: not known
   * for this model, the protocol's default applies (see `continuesPrefill`).
   */
  assistant_prefill: boolean | null;
  source: EffectiveSource;
}

/**
 * Whether a call that ends in a partial assistant reply makes the model continue it (docs/takeover.md): the model's
 * `assistant_prefill` capability, else the protocol's default — OpenAI-protocol chat completions (and most compatible
 * servers) answer anew, Anthropic's Messages API continues a prefill. Never with thinking on: recent Anthropic models
 * refuse a prefill then, and a continued reply would lack its thinking.
 */
export function continuesPrefill(caps: Pick<EffectiveCapabilities, 'assistant_prefill'>, protocol: 'openai' | 'anthropic', thinking: boolean): boolean {
  if (thinking) return false;
  return caps.assistant_prefill ?? protocol === 'anthropic';
}

const key = (provider: string, model: string): string => `${provider}\u0000${model}`;

export const toCapabilityRecord = (row: ModelCapabilityEntity) => ({
  provider: row.provider,
  model: row.model,
  tool_calling: row.toolCalling,
  streaming: row.streaming,
  max_context_tokens: row.maxContextTokens,
  image_input: row.imageInput,
  assistant_prefill: row.assistantPrefill,
  source: row.source,
  note: row.note,
  updated_at: row.updatedAt.toISOString(),
});

/**
 * Effective model capabilities with the API contract's precedence: operator override > manual probe > catalog >
 * provider-discovered defaults, merged field by field. Rows are cached in memory and reloaded on
 * `gateway.capabilities.changed`, so the router never queries Postgres.
 */
@Injectable()
export class ModelCapabilitiesService implements OnModuleInit {
  private rows = new Map<string, { operator_override?: ModelCapabilityEntity; manual_probe?: ModelCapabilityEntity }>();
  private readonly cache = new Map<string, EffectiveCapabilities>();

  constructor(
    private readonly repo: ModelSettingsRepository,
    @Inject(EventBus) private readonly bus: EventBus,
  ) {}

  async onModuleInit(): Promise<void> {
    await this.reload();
    await reloadOnChange(this.bus, busChannels.capabilitiesChanged, () => this.reload());
  }

  private async reload(): Promise<void> {
    const next = new Map<string, { operator_override?: ModelCapabilityEntity; manual_probe?: ModelCapabilityEntity }>();
    for (const row of await this.repo.listCapabilities()) {
      const k = key(row.provider, row.model);
      const entry = next.get(k) ?? {};
      entry[row.source] = row;
      next.set(k, entry);
    }
    this.rows = next;
    this.cache.clear();
  }

  effective(provider: string, model: string): EffectiveCapabilities {
    const k = key(provider, model);
    let caps = this.cache.get(k);
    if (!caps) {
      if (this.cache.size > 10_000) this.cache.clear();
      caps = this.resolve(provider, model);
      this.cache.set(k, caps);
    }
    return { ...caps };
  }

  private resolve(provider: string, model: string): EffectiveCapabilities {
    const stored = this.rows.get(key(provider, model));
    const catalog = catalogCapabilities(model);
    const layers: Array<{ source: EffectiveSource; row: Partial<EffectiveCapabilities> }> = [];
    if (stored?.operator_override) layers.push({ source: 'operator_override', row: fromRow(stored.operator_override) });
    if (stored?.manual_probe) layers.push({ source: 'manual_probe', row: fromRow(stored.manual_probe) });
    if (catalog) layers.push({ source: 'catalog', row: catalog });
    layers.push({ source: 'provider', row: { tool_calling: 'unknown', streaming: true, max_context_tokens: null, image_input: 'unknown' } });
    const pick = <K extends keyof EffectiveCapabilities>(field: K): EffectiveCapabilities[K] => {
      for (const l of layers) {
        const v = l.row[field];
        if (v !== undefined && v !== null) return v as EffectiveCapabilities[K];
      }
      return null as EffectiveCapabilities[K];
    };
    return {
      tool_calling: pick('tool_calling'),
      streaming: pick('streaming'),
      max_context_tokens: pick('max_context_tokens') ?? null,
      image_input: pick('image_input'),
      assistant_prefill: pick('assistant_prefill') ?? null,
      source: layers[0].source,
    };
  }

  async setOverride(dto: CapabilityOverrideDto) {
    return this.store('operator_override', dto);
  }

  async recordProbe(dto: CapabilityProbeDto) {
    return this.store('manual_probe', dto);
  }

  /** Removes the override; answers the capability that now applies. */
  async deleteOverride(provider: string, model: string): Promise<{ removed: boolean; effective: EffectiveCapabilities }> {
    const removed = await this.repo.deleteCapability({ provider, model, source: 'operator_override' });
    await this.changed();
    return { removed, effective: this.effective(provider, model) };
  }

  private async store(source: CapabilitySource, dto: CapabilityOverrideDto | CapabilityProbeDto) {
    const row: ModelCapabilityEntity = {
      provider: dto.provider,
      model: dto.model,
      source,
      toolCalling: dto.tool_calling ?? null,
      streaming: dto.streaming ?? null,
      maxContextTokens: dto.max_context_tokens ?? null,
      imageInput: dto.image_input ?? null,
      assistantPrefill: dto.assistant_prefill ?? null,
      note: dto.note ?? null,
      updatedAt: new Date(),
    };
    await this.repo.upsertCapability(row);
    await this.changed();
    return toCapabilityRecord(row);
  }

  private async changed(): Promise<void> {
    await this.reload();
    await announceChange(this.bus, busChannels.capabilitiesChanged);
  }
}

function fromRow(row: ModelCapabilityEntity): Partial<EffectiveCapabilities> {
  return {
    tool_calling: (row.toolCalling as ToolCalling | null) ?? undefined,
    streaming: row.streaming ?? undefined,
    max_context_tokens: row.maxContextTokens ?? undefined,
    image_input: (row.imageInput as ImageInput | null) ?? undefined,
    assistant_prefill: row.assistantPrefill ?? undefined,
  };
}
