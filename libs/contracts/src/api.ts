/** `{object, data}` envelope of the product API. */
export interface ApiEnvelope<T> {
  object: string;
  data: T;
}

export interface ApiKeyResource {
  id: string;
  name: string;
  prefix: string;
  tenant_id: string;
  scopes: ApiKeyScope[];
  created_at: string;
  last_used_at: string | null;
  revoked_at: string | null;
}

/** `admin`: settings every tenant shares (providers and their keys, pricing, capabilities, retention, system operations). */
export type ApiKeyScope = 'inference' | 'operator' | 'admin';

export interface CreatedApiKeyResource extends ApiKeyResource {
  /** Returned exactly once, at creation. */
  secret: string;
}

export interface SystemStats {
  queue_backend: 'bullmq' | 'in_process';
  queue_depth: number;
  queue_counts: Record<string, Record<string, number>>;
  workers: number;
  storage_backend: 'postgres' | 'pglite';
  version: string;
  uptime_s: number;
  [extra: string]: unknown;
}
