import { Body, Controller, Get, HttpCode, Post } from '@nestjs/common';
import type { Principal } from '@core/context/request-context';
import { CurrentPrincipal } from '@core/http/auth/current-principal.decorator';
import { RequireScope } from '@core/http/auth/require-scope.decorator';
import { InvalidRequestError } from '@core/http/domain-error';
import { ApiEnvelope } from '@core/http/openapi';
import { ApiBody, ApiOperation } from '@nestjs/swagger';
import { McpCacheStatsDto, McpProbeDto, McpServerEntryDto } from './mcp.dto';
import { McpCacheStatsService } from './mcp-cache-stats.service';
import { McpProbeService } from './mcp-probe.service';

/** MCP client surface (docs/api.md §4): dry-run discovery of a server entry, and the deployment's MCP client cache. */
@Controller('hecate/v1')
export class McpController {
  constructor(
    private readonly probes: McpProbeService,
    private readonly cache: McpCacheStatsService,
  ) {}

  @ApiEnvelope('mcp_probe', McpProbeDto)
  @ApiBody({ type: McpServerEntryDto })
  @ApiOperation({ summary: 'Probe an MCP server' })
  @Post('mcp/probe')
  // A probe starts the entry's command (or calls its URL) on a worker with no task, run or approval around it: `admin`.
  @RequireScope('admin')
  @HttpCode(200)
  async probe(@CurrentPrincipal() caller: Principal, @Body() body: unknown) {
    if (!body || typeof body !== 'object' || Array.isArray(body)) throw new InvalidRequestError('the body must be one MCP server entry (a JSON object)');
    return { object: 'mcp_probe', data: await this.probes.probe(caller.tenantId, body as Record<string, unknown>, { operator: caller.kind !== 'api_key' }) };
  }

  @ApiEnvelope('mcp_cache_stats', McpCacheStatsDto)
  @ApiOperation({ summary: "Get the MCP client cache's stats" })
  @Get('system/mcp/cache')
  async cacheStats() {
    return { object: 'mcp_cache_stats', data: await this.cache.collect() };
  }
}
