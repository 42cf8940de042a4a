/** One row of `GET /hecate/v1/agent-adapters` (docs/api.md §4). */
export interface AdapterRow {
  id: string;
  name: string;
  kind: 'acp';
  command: string;
  args?: string[];
  managed?: boolean;
  managed_package?: string;
  available: boolean;
  status: 'available' | 'missing';
  path?: string;
  error?: string;
  cost_mode: 'external' | 'gateway';
  version?: string;
  supported_range?: string;
  version_outside_range?: boolean;
  auth_status?: 'ok' | 'unauthenticated' | 'billing' | 'unknown';
  auth_error?: string;
}

/** `GET …/{adapter_id}/health` and the `health` half of `POST …/{adapter_id}/probe` (docs/api.md §4). */
export interface AdapterHealth {
  adapter_id: string;
  status: 'ready' | 'not_installed' | 'auth_required' | 'error';
  stage: 'lookup' | 'spawn' | 'initialize' | 'new_session' | 'ready';
  path?: string;
  error?: string;
  stderr?: string;
  hint?: string;
  duration_ms: number;
}

export type AdapterAction = 'list' | 'health' | 'probe' | 'refresh';

/** The worker request of `/hecate/v1/agent-adapters` (core/lease WorkerRequests): the action and its adapter. */
export const ADAPTER_REQUEST = 'agent_adapters.request';
export interface AdapterRequest {
  action: AdapterAction;
  adapterId?: string;
}

/** What the worker answers to an adapter request. */
export interface AdapterAnswer {
  rows?: AdapterRow[];
  health?: AdapterHealth;
}
