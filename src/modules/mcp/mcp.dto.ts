import { ApiSchema } from '@nestjs/swagger';
import type { Assert, Documents, Returned } from '@core/http/openapi';
import type { ProbeTool } from './mcp-bus';
import type { McpCacheStatsService } from './mcp-cache-stats.service';
import type { McpApprovalPolicy, McpServerSpec } from './mcp-server-spec';

/**
 * One MCP server entry (docs/api.md §4 `mcp_servers`): stdio (`command`, `args`, `env`) or Streamable HTTP (`url`,
 * `headers`). Values may be literals or `$VAR` references. Validated by the service (its messages name the field).
 */
@ApiSchema({ name: 'McpServerEntry' })
export class McpServerEntryDto {
  /** `^[a-zA-Z0-9_-]{1,64}$`, unique within a task. */
  name!: string;
  command?: string;
  args?: string[];
  env?: Record<string, string>;
  url?: string;
  headers?: Record<string, string>;
  approval_policy?: McpApprovalPolicy;
}

@ApiSchema({ name: 'McpProbeTool' })
export class McpProbeToolDto {
  /** As the server names it (un-namespaced). */
  name!: string;
  description?: string;
  input_schema!: Record<string, unknown>;
}

@ApiSchema({ name: 'McpProbe' })
export class McpProbeDto {
  tools!: McpProbeToolDto[];
}

@ApiSchema({ name: 'McpCacheStats' })
export class McpCacheStatsDto {
  checked_at!: string;
  /** false: no client cache is wired; the counters are zero. */
  configured!: boolean;
  entries!: number;
  /** The sum of refcounts across entries. */
  in_use!: number;
  idle!: number;
  workers!: number;
}

type _EntryDocumented = Assert<Documents<McpServerEntryDto, McpServerSpec>>;
type _ToolDocumented = Assert<Documents<McpProbeToolDto, ProbeTool>>;
type _CacheDocumented = Assert<Documents<McpCacheStatsDto, Returned<McpCacheStatsService['collect']>>>;
