import { Body, Controller, Delete, Get, HttpCode, Param, ParseIntPipe, Patch, Post, Put, Query } from '@nestjs/common';
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
  @Post()
  @HttpCode(201)
  async create(@CurrentPrincipal() p: Principal, @Body() dto: CreateAgentDto) {
    return { object: 'agent', data: await this.agents.create(p, dto) };
  }

  @ApiEnvelope('agents', [AgentResponseDto], { extra: PAGE })
  @Get()
  async list(@CurrentPrincipal() p: Principal, @Query() q: ListAgentsQueryDto) {
    return { object: 'agents', ...(await this.agents.list(p.tenantId, q)) };
  }

  @ApiEnvelope('agent', AgentResponseDto)
  @Get(':id')
  async get(@CurrentPrincipal() p: Principal, @Param('id') id: string) {
    return { object: 'agent', data: await this.agents.get(p.tenantId, id) };
  }

  @ApiEnvelope('agent', AgentResponseDto)
  @Patch(':id')
  async patch(@CurrentPrincipal() p: Principal, @Param('id') id: string, @Body() dto: PatchAgentDto) {
    return { object: 'agent', data: await this.agents.update(p, id, dto, false) };
  }

  @ApiEnvelope('agent', AgentResponseDto)
  @Put(':id')
  async replace(@CurrentPrincipal() p: Principal, @Param('id') id: string, @Body() dto: CreateAgentDto) {
    return { object: 'agent', data: await this.agents.update(p, id, dto, true) };
  }

  @ApiEnvelope('agent_deleted', AgentDeletedDto)
  @Delete(':id')
  async delete(@CurrentPrincipal() p: Principal, @Param('id') id: string) {
    return { object: 'agent_deleted', data: await this.agents.delete(p.tenantId, id) };
  }

  @ApiEnvelope('agent_versions', [AgentVersionResponseDto], { extra: PAGE })
  @Get(':id/versions')
  async versions(@CurrentPrincipal() p: Principal, @Param('id') id: string, @Query() q: ListAgentsQueryDto) {
    return { object: 'agent_versions', ...(await this.agents.versions(p.tenantId, id, q)) };
  }

  @ApiEnvelope('agent_version', AgentVersionResponseDto)
  @Get(':id/versions/:version')
  async version(@CurrentPrincipal() p: Principal, @Param('id') id: string, @Param('version', ParseIntPipe) version: number) {
    return { object: 'agent_version', data: await this.agents.version(p.tenantId, id, version) };
  }
}
