import { AsyncLocalStorage } from 'node:async_hooks';
import { randomHex } from './random-hex';

export type PrincipalKind = 'operator' | 'api_key' | 'local_operator' | 'system';

export interface Principal {
  kind: PrincipalKind;
  tenantId: string;
  apiKeyId?: string;
  scopes: readonly string[];
}

/** Ambient per-request (or per-job) state. Works in HTTP handlers and in workers alike. */
export interface RequestContextStore {
  requestId: string;
  traceId?: string;
  principal?: Principal;
}

export const DEFAULT_TENANT_ID = 'default';

const storage = new AsyncLocalStorage<RequestContextStore>();

export const RequestContext = {
  run<T>(store: RequestContextStore, fn: () => T): T {
    return storage.run(store, fn);
  },
  enterWith(store: RequestContextStore): void {
    storage.enterWith(store);
  },
  current(): RequestContextStore | undefined {
    return storage.getStore();
  },
  requestId(): string | undefined {
    return storage.getStore()?.requestId;
  },
  newRequestId(): string {
    return `req_${randomHex(16)}`;
  },
};
