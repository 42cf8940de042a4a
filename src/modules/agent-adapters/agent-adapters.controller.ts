import { Controller, Get, HttpCode, Param, Post } from '@nestjs/common';
import { ApiOperation } from '@nestjs/swagger';
import { RequireScope } from '@core/http/auth/require-scope.decorator';
import { ApiEnvelope } from '@core/http/openapi';
import { AgentAdaptersService } from './agent-adapters.service';
import { AgentAdapterDto, AgentAdapterHealthDto, AgentAdapterProbeDto } from './agent-adapters.dto';

/**
 * External coding-agent adapters (docs/api.md §4 `/hecate/v1/agent-adapters`): catalog, health, probe, managed launchers.
 * The catalog is readable with `operator`; health and probe start the adapter (with the operator's credentials for it)
 * and refresh-launcher rewrites the launcher every tenant runs, so they need `admin`.
 */
@Controller('hecate/v1/agent-adapters')
export class AgentAdaptersController {
  constructor(private readonly adapters: AgentAdaptersService) {}

  @ApiEnvelope('agent_adapters', [AgentAdapterDto])
  @ApiOperation({ summary: 'List the agent adapters' })
  @Get()
  async list() {
    return { object: 'agent_adapters', data: await this.adapters.list() };
  }

  @ApiEnvelope('agent_adapter_health', AgentAdapterHealthDto)
  @ApiOperation({ summary: "Check an agent adapter's health" })
  @Get(':adapter_id/health')
  @RequireScope('admin')
  async health(@Param('adapter_id') id: string) {
    return { object: 'agent_adapter_health', data: await this.adapters.health(id) };
  }

  @ApiEnvelope('agent_adapter_probe', AgentAdapterProbeDto)
  @ApiOperation({ summary: 'Probe an agent adapter' })
  @Post(':adapter_id/probe')
  @RequireScope('admin')
  @HttpCode(200)
  async probe(@Param('adapter_id') id: string) {
    return { object: 'agent_adapter_probe', data: await this.adapters.probe(id) };
  }

  @ApiEnvelope('agent_adapters', [AgentAdapterDto])
  @ApiOperation({ summary: "Refresh an agent adapter's launcher" })
  @Post(':adapter_id/refresh-launcher')
  @RequireScope('admin')
  @HttpCode(200)
  async refreshLauncher(@Param('adapter_id') id: string) {
    return { object: 'agent_adapters', data: await this.adapters.refreshLauncher(id) };
  }
}
