import { Injectable } from '@nestjs/common';
import { InvalidRequestError } from '@core/http/domain-error';
import { presetById } from './provider-presets';
import type { ProviderEntity } from './provider.entity';
import { ProviderRepository } from './provider.repository';
import { ProviderRegistryService } from './provider-registry.service';
import { ProviderSecretsService } from './provider-secrets.service';
import { CreateProviderDto, SetProviderKeyDto, toProviderResponse, UpdateProviderDto } from './provider-settings.dto';
import { EnvProviderError, ProviderExistsError, ProviderNotFoundError } from './providers.errors';

const slug = (s: string): string =>
  s
    .trim()
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '_')
    .replace(/^_+|_+$/g, '');

/** Operator CRUD over providers (`/hecate/v1/settings/providers`). Keys are encrypted and never returned. */
@Injectable()
export class ProviderSettingsService {
  constructor(
    private readonly repo: ProviderRepository,
    private readonly registry: ProviderRegistryService,
    private readonly secrets: ProviderSecretsService,
  ) {}

  list() {
    return this.registry.list().map(toProviderResponse);
  }

  get(id: string) {
    const p = this.registry.get(id);
    if (!p) throw new ProviderNotFoundError(id);
    return toProviderResponse(p);
  }

  async create(dto: CreateProviderDto) {
    const preset = presetById(dto.preset_id ?? (dto.name ? slug(dto.name) : undefined));
    if (dto.preset_id && !preset) throw new InvalidRequestError(`unknown preset_id ${dto.preset_id}; see GET /hecate/v1/providers/presets`);
    const id = slug(dto.custom_name ?? dto.name ?? preset?.id ?? '');
    if (!id) throw new InvalidRequestError('name, custom_name or preset_id is required');
    if (id.length > 64) throw new InvalidRequestError('provider name is too long (64 characters at most)');
    const baseUrl = (dto.base_url ?? preset?.baseUrl)?.replace(/\/+$/, '');
    if (!baseUrl) throw new InvalidRequestError('base_url is required for a provider that is not a preset');
    if (this.registry.get(id) || (await this.repo.find(id))) throw new ProviderExistsError(`provider ${id} already exists`);
    if (!dto.custom_name) {
      const dup = this.registry.list().find((p) => p.baseUrl === baseUrl);
      if (dup) throw new ProviderExistsError(`provider ${dup.id} already uses ${baseUrl}; set custom_name to add another instance`);
    }
    const now = new Date();
    const row: ProviderEntity = {
      id,
      presetId: preset?.id ?? null,
      customName: dto.custom_name ?? null,
      kind: dto.kind ?? preset?.kind ?? 'cloud',
      protocol: dto.protocol ?? preset?.protocol ?? 'openai',
      baseUrl,
      defaultModel: dto.default_model ?? (preset?.defaultModel || null),
      apiKeyCiphertext: dto.api_key ? this.secrets.encrypt(dto.api_key) : null,
      enabled: dto.enabled ?? true,
      createdAt: now,
      updatedAt: now,
    };
    await this.repo.insert(row);
    await this.registry.changed();
    return this.get(id);
  }

  async update(id: string, dto: UpdateProviderDto) {
    const row = await this.rowFor(id);
    if (dto.base_url !== undefined) {
      const baseUrl = dto.base_url.replace(/\/+$/, '');
      // A key belongs to the host it was configured for: a new base_url drops it (an env key no longer applies
      // either, see ProviderRegistryService.fromRow), so nobody can redirect a shared key to a host they control.
      if (baseUrl !== row.baseUrl) row.apiKeyCiphertext = null;
      row.baseUrl = baseUrl;
    }
    if (dto.api_key !== undefined) row.apiKeyCiphertext = this.secrets.encrypt(dto.api_key);
    if (dto.default_model !== undefined) row.defaultModel = dto.default_model || null;
    if (dto.kind !== undefined) row.kind = dto.kind;
    if (dto.protocol !== undefined) row.protocol = dto.protocol;
    if (dto.custom_name !== undefined) row.customName = dto.custom_name;
    if (dto.enabled !== undefined) row.enabled = dto.enabled;
    row.updatedAt = new Date();
    await this.repo.save(row);
    await this.registry.changed();
    return this.get(id);
  }

  async setApiKey(id: string, dto: SetProviderKeyDto) {
    const row = await this.rowFor(id);
    row.apiKeyCiphertext = dto.api_key ? this.secrets.encrypt(dto.api_key) : null;
    row.updatedAt = new Date();
    await this.repo.save(row);
    await this.registry.changed();
    return this.get(id);
  }

  async remove(id: string) {
    const existing = this.registry.get(id);
    const deleted = await this.repo.delete(id);
    if (!deleted) {
      if (existing?.envConfigured) throw new EnvProviderError(id);
      throw new ProviderNotFoundError(id);
    }
    await this.registry.changed();
    return { id, deleted: true };
  }

  /** The stored row, or a new one materialised from the env-configured provider (so edits override it). */
  private async rowFor(id: string): Promise<ProviderEntity> {
    const row = await this.repo.find(id);
    if (row) return row;
    const p = this.registry.get(id);
    if (!p) throw new ProviderNotFoundError(id);
    const now = new Date();
    return {
      id,
      presetId: p.presetId,
      customName: p.customName,
      kind: p.kind,
      protocol: p.protocol,
      baseUrl: p.baseUrl,
      defaultModel: p.defaultModel ?? null,
      apiKeyCiphertext: null,
      enabled: p.enabled,
      createdAt: now,
      updatedAt: now,
    };
  }
}
