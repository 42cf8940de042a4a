/** One row of `GET /hecate/v1/agent-adapters` (seed 003). */
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

/** `GET …/{id}/health` and the `health` half of `POST …/{id}/probe` (seed 003). */
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

/** What the worker answers on the bus to an adapter request. */
export type AdapterReply = { ok: true; rows?: AdapterRow[]; health?: AdapterHealth } | { ok: false; conflict?: boolean; message: string };
