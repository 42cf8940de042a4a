import { ApiSchema } from '@nestjs/swagger';
import type { Assert, Documents } from '@core/http/openapi';
import type { AdapterHealth, AdapterRow } from './agent-adapters.types';

/** An external agent adapter (ACP) and whether this deployment can launch it (docs/api.md §4 `agent_adapters`). */
@ApiSchema({ name: 'AgentAdapter' })
export class AgentAdapterDto {
  id!: string;
  name!: string;
  kind!: 'acp';
  command!: string;
  args?: string[];
  managed?: boolean;
  managed_package?: string;
  available!: boolean;
  status!: 'available' | 'missing';
  path?: string;
  error?: string;
  cost_mode!: 'external' | 'gateway';
  version?: string;
  supported_range?: string;
  version_outside_range?: boolean;
  auth_status?: 'ok' | 'unauthenticated' | 'billing' | 'unknown';
  auth_error?: string;
}

/** An end-to-end probe's classification (spawn → initialize → new session; never a prompt). */
@ApiSchema({ name: 'AgentAdapterHealth' })
export class AgentAdapterHealthDto {
  adapter_id!: string;
  status!: 'ready' | 'not_installed' | 'auth_required' | 'error';
  /** The step that completed (ready) or failed. */
  stage!: 'lookup' | 'spawn' | 'initialize' | 'new_session' | 'ready';
  path?: string;
  error?: string;
  stderr?: string;
  hint?: string;
  duration_ms!: number;
}

@ApiSchema({ name: 'AgentAdapterProbe' })
export class AgentAdapterProbeDto {
  adapter!: AgentAdapterDto;
  health!: AgentAdapterHealthDto;
}

type _AdapterDocumented = Assert<Documents<AgentAdapterDto, AdapterRow>>;
type _HealthDocumented = Assert<Documents<AgentAdapterHealthDto, AdapterHealth>>;
