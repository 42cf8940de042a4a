import { Body, Controller, Delete, Get, HttpCode, Param, ParseIntPipe, Patch, Post, Put, Query } from '@nestjs/common';
import { ApiOperation } from '@nestjs/swagger';
import type { Principal } from '@core/context/request-context';
import { CurrentPrincipal } from '@core/http/auth/current-principal.decorator';
import { ApiEnvelope } from '@core/http/openapi';
import { AgentDeletedDto, AgentResponseDto, AgentVersionResponseDto, CreateAgentDto, ListAgentsQueryDto, PatchAgentDto } from './agents.dto';
import { AgentsService } from './agents.service';

const PAGE = { has_more: { type: 'boolean' }, next_cursor: { type: ['string', 'null'], description: 'Pass as `cursor` for the next page.' } };

/** Saved agents: tenant-scoped like tasks and chat sessions (the `operator` scope of /hecate/v1). */
@Controller('hecate/v1/agents')
export class AgentsController {
  constructor(private readonly agents: AgentsService) {}

  @ApiEnvelope('agent', AgentResponseDto)
  @ApiOperation({ summary: 'Create a saved agent' })
  @Post()
  @HttpCode(201)
  async create(@CurrentPrincipal() p: Principal, @Body() dto: CreateAgentDto) {
    return { object: 'agent', data: await this.agents.create(p, dto) };
  }

  @ApiEnvelope('agents', [AgentResponseDto], { extra: PAGE })
  @ApiOperation({ summary: 'List the saved agents' })
  @Get()
  async list(@CurrentPrincipal() p: Principal, @Query() q: ListAgentsQueryDto) {
    return { object: 'agents', ...(await this.agents.list(p.tenantId, q)) };
  }

  @ApiEnvelope('agent', AgentResponseDto)
  @ApiOperation({ summary: 'Get a saved agent' })
  @Get(':agent_id')
  async get(@CurrentPrincipal() p: Principal, @Param('agent_id') id: string) {
    return { object: 'agent', data: await this.agents.get(p.tenantId, id) };
  }

  @ApiEnvelope('agent', AgentResponseDto)
  @ApiOperation({ summary: "Update a saved agent's fields" })
  @Patch(':agent_id')
  async patch(@CurrentPrincipal() p: Principal, @Param('agent_id') id: string, @Body() dto: PatchAgentDto) {
    return { object: 'agent', data: await this.agents.update(p, id, dto, false) };
  }

  @ApiEnvelope('agent', AgentResponseDto)
  @ApiOperation({ summary: "Replace a saved agent's definition" })
  @Put(':agent_id')
  async replace(@CurrentPrincipal() p: Principal, @Param('agent_id') id: string, @Body() dto: CreateAgentDto) {
    return { object: 'agent', data: await this.agents.update(p, id, dto, true) };
  }

  @ApiEnvelope('agent_deleted', AgentDeletedDto)
  @ApiOperation({ summary: 'Delete a saved agent' })
  @Delete(':agent_id')
  async delete(@CurrentPrincipal() p: Principal, @Param('agent_id') id: string) {
    return { object: 'agent_deleted', data: await this.agents.delete(p.tenantId, id) };
  }

  @ApiEnvelope('agent_versions', [AgentVersionResponseDto], { extra: PAGE })
  @ApiOperation({ summary: "List a saved agent's versions" })
  @Get(':agent_id/versions')
  async versions(@CurrentPrincipal() p: Principal, @Param('agent_id') id: string, @Query() q: ListAgentsQueryDto) {
    return { object: 'agent_versions', ...(await this.agents.versions(p.tenantId, id, q)) };
  }

  @ApiEnvelope('agent_version', AgentVersionResponseDto)
  @ApiOperation({ summary: 'Get one version of a saved agent' })
  @Get(':agent_id/versions/:version')
  async version(@CurrentPrincipal() p: Principal, @Param('agent_id') id: string, @Param('version', ParseIntPipe) version: number) {
    return { object: 'agent_version', data: await this.agents.version(p.tenantId, id, version) };
  }
}
