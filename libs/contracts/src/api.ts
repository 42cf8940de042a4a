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

/** `inference`: /v1; `operator`: the tenant's own /hecate/v1 resources; `admin`: settings every tenant shares. */
export type ApiKeyScope = 'inference' | 'operator' | 'admin';

export const API_KEY_SCOPES: readonly ApiKeyScope[] = ['inference', 'operator', 'admin'];

/** `GET /hecate/v1/whoami`: who the credential of the request is, so a client shows only what its scopes allow. */
export interface CallerResource {
  /** `operator`: the operator token; `local_operator`: no token configured, a loopback caller; `api_key`: a tenant's key. */
  kind: 'operator' | 'local_operator' | 'api_key';
  tenant_id: string;
  scopes: ApiKeyScope[];
  /** The key's id when `kind` is `api_key`, else null. */
  api_key_id: string | null;
}

export interface CreatedApiKeyResource extends ApiKeyResource {
  /** Returned exactly once, at creation. */
  secret: string;
}

export interface SystemStats {
  queue_backend: 'bullmq' | 'in_process';
  queue_depth: number;
  queue_counts: Record<string, Record<string, number>>;
  /** Per queue, the jobs the live workers run at once (each worker's GATEWAY_TASK_QUEUE_WORKERS, summed). */
  queue_capacity: Record<string, number>;
  workers: number;
  storage_backend: 'postgres' | 'pglite';
  version: string;
  uptime_s: number;
  [extra: string]: unknown;
}
