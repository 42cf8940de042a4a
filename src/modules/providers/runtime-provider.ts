import { createHash } from 'node:crypto';
import type { ProviderKind, ProviderProtocol } from '@core/config/groups/gateway.env';
import { checkUrlStatically, UrlPolicyContext, UrlVerdict } from '@core/net/outbound-url-policy';
import { apiKeyEnvName, presetById } from './provider-presets';
import { EndpointTimeouts, UpstreamEndpoint } from './upstream-transport';

export type CredentialState = 'configured' | 'missing' | 'not_required';

export const ANTHROPIC_VERSION = '2023-06-01';

export interface RuntimeProviderInit {
  id: string;
  presetId: string | null;
  customName: string | null;
  kind: ProviderKind;
  protocol: ProviderProtocol;
  baseUrl: string;
  defaultModel: string | undefined;
  apiKey: string | undefined;
  enabled: boolean;
  source: 'env' | 'settings';
  envConfigured: boolean;
  createdAt: Date;
  updatedAt: Date;
}

/**
 * A provider as the router sees it: resolved configuration plus its upstream endpoint. The API key lives in a
 * private field (never serialised, never inspected); only `authHeaders()` hands it to the transport.
 */
export class RuntimeProvider {
  readonly id: string;
  readonly presetId: string | null;
  readonly customName: string | null;
  readonly kind: ProviderKind;
  readonly protocol: ProviderProtocol;
  readonly baseUrl: string;
  readonly defaultModel: string | undefined;
  readonly enabled: boolean;
  readonly source: 'env' | 'settings';
  readonly envConfigured: boolean;
  readonly createdAt: Date;
  readonly updatedAt: Date;
  readonly urlVerdict: UrlVerdict;
  readonly credentialState: CredentialState;
  /** Request paths (base path included). */
  readonly chatPath: string;
  readonly modelsPath: string;
  /** `${base}/responses` on providers that speak the OpenAI Responses API (the `openai` preset); else undefined. */
  readonly responsesPath: string | undefined;
  readonly isOllama: boolean;
  /** Short digest of the key, to notice key changes without holding the key anywhere else. */
  readonly keyFingerprint: string;
  readonly #apiKey: string | undefined;
  readonly #headers: Record<string, string>;
  #endpoint: UpstreamEndpoint | undefined;

  constructor(
    init: RuntimeProviderInit,
    private readonly policy: UrlPolicyContext,
    private readonly timeouts: EndpointTimeouts,
  ) {
    this.id = init.id;
    this.presetId = init.presetId;
    this.customName = init.customName;
    this.kind = init.kind;
    this.protocol = init.protocol;
    this.baseUrl = init.baseUrl.replace(/\/+$/, '');
    this.defaultModel = init.defaultModel || undefined;
    this.enabled = init.enabled;
    this.source = init.source;
    this.envConfigured = init.envConfigured;
    this.createdAt = init.createdAt;
    this.updatedAt = init.updatedAt;
    this.#apiKey = init.apiKey || undefined;
    this.keyFingerprint = this.#apiKey ? createHash('sha256').update(this.#apiKey).digest('hex').slice(0, 12) : '';
    this.urlVerdict = checkUrlStatically(this.baseUrl, policy);
    this.credentialState = this.#apiKey ? 'configured' : init.kind === 'local' ? 'not_required' : 'missing';
    const basePath = safePath(this.baseUrl);
    this.chatPath = `${basePath}${init.protocol === 'anthropic' ? '/messages' : '/chat/completions'}`;
    this.responsesPath = init.presetId === 'openai' && init.protocol === 'openai' ? `${basePath}/responses` : undefined;
    this.isOllama = init.presetId === 'ollama';
    this.modelsPath = this.isOllama ? '/api/tags' : `${basePath}/models`;
    this.#headers = { 'content-type': 'application/json', accept: 'application/json' };
    if (init.protocol === 'anthropic') {
      this.#headers['anthropic-version'] = ANTHROPIC_VERSION;
      if (this.#apiKey) this.#headers['x-api-key'] = this.#apiKey;
    } else if (this.#apiKey) {
      this.#headers.authorization = `Bearer ${this.#apiKey}`;
    }
  }

  get name(): string {
    return this.id;
  }

  get apiKeyEnv(): string {
    return apiKeyEnvName(this.id);
  }

  get displayName(): string {
    return this.customName ?? presetById(this.presetId)?.name ?? this.id;
  }

  /** Base headers for a JSON call (content-type, accept, credentials). A fresh object the caller may extend. */
  authHeaders(): Record<string, string> {
    return { ...this.#headers };
  }

  /** For scrubbing upstream messages: the literal key, so it can be replaced wherever it appears. */
  scrub(text: string): string {
    return this.#apiKey && this.#apiKey.length >= 4 ? text.split(this.#apiKey).join('***') : text;
  }

  /** Same configuration as `other` for the transport (so the pool can be reused across reloads). */
  sameTransport(other: RuntimeProvider): boolean {
    return other.baseUrl === this.baseUrl && other.kind === this.kind;
  }

  adoptEndpoint(from: RuntimeProvider): void {
    this.#endpoint = from.#endpoint;
    from.#endpoint = undefined;
  }

  endpoint(): UpstreamEndpoint {
    this.#endpoint ??= new UpstreamEndpoint(this.baseUrl, this.policy, this.timeouts);
    return this.#endpoint;
  }

  closeEndpoint(): void {
    this.#endpoint?.close();
    this.#endpoint = undefined;
  }

  toJSON(): Record<string, unknown> {
    return { id: this.id, kind: this.kind, protocol: this.protocol, base_url: this.baseUrl };
  }
}

function safePath(baseUrl: string): string {
  try {
    return new URL(baseUrl).pathname.replace(/\/+$/, '');
  } catch {
    return '';
  }
}
