import { randomHex } from './random-hex';

export type PrincipalKind = 'operator' | 'api_key' | 'local_operator' | 'system';

export interface Principal {
  kind: PrincipalKind;
  tenantId: string;
  apiKeyId?: string;
  scopes: readonly string[];
}

/**
 * Where a unit of work comes from: the HTTP request's ids, or a job's. Passed explicitly from the controller
 * or job handler to the services that record it (run rows, events, usage rows, traces). Deliberately not an
 * AsyncLocalStorage: on Node 20 one `run()` turns on promise hooks for every promise of the process, about
 * 15 % of the gateway's CPU per request (README, "Request context").
 */
export interface RequestOrigin {
  requestId: string;
  traceId?: string;
  /** The API key that made the request: the spend budgets of the key apply to the model calls it makes (docs/budgets.md). */
  apiKeyId?: string;
}

/** Per-request state kept on the Fastify request (`request.hecate`): the origin and, after auth, the caller. */
export interface RequestContextStore extends RequestOrigin {
  principal?: Principal;
}

export const DEFAULT_TENANT_ID = 'default';

export const newRequestId = (): string => `req_${randomHex(16)}`;

/** The origin recorded for work a job does (`job_<id>`). */
export const jobOrigin = (jobId: string): RequestOrigin => ({ requestId: `job_${jobId}` });
