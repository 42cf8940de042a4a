import { Body, Controller, Delete, Get, HttpCode, Param, Post, Query } from '@nestjs/common';
import { ApiOperation } from '@nestjs/swagger';
import type { Principal } from '@core/context/request-context';
import { CurrentPrincipal } from '@core/http/auth/current-principal.decorator';
import { ApiEnvelope } from '@core/http/openapi';
import { AgentChatApprovalsService } from './agent-chat-approvals.service';
import { ListAgentChatApprovalsDto, ListAgentChatGrantsDto, ResolveAgentChatApprovalDto } from '../agent-chat.dto';
import { AgentChatApprovalDto, AgentChatGrantDto, AgentChatGrantRevokedDto } from './approval-responses.dto';

/** External-agent approvals of a session and the grants they leave (docs/api.md §4 `/hecate/v1/agent-chat/…`). */
@Controller('hecate/v1/agent-chat')
export class AgentChatApprovalsController {
  constructor(private readonly approvals: AgentChatApprovalsService) {}

  @ApiEnvelope('agent_chat_approvals', [AgentChatApprovalDto])
  @ApiOperation({ summary: "List an agent chat session's approvals" })
  @Get('sessions/:session_id/approvals')
  async list(@CurrentPrincipal() p: Principal, @Param('session_id') id: string, @Query() q: ListAgentChatApprovalsDto) {
    return { object: 'agent_chat_approvals', data: await this.approvals.list(p.tenantId, id, q.status) };
  }

  @ApiEnvelope('agent_chat_approval', AgentChatApprovalDto)
  @ApiOperation({ summary: 'Get an agent chat approval' })
  @Get('sessions/:session_id/approvals/:approval_id')
  async get(@CurrentPrincipal() p: Principal, @Param('session_id') id: string, @Param('approval_id') approvalId: string) {
    return { object: 'agent_chat_approval', data: await this.approvals.get(p.tenantId, id, approvalId) };
  }

  @ApiEnvelope('agent_chat_approval', AgentChatApprovalDto)
  @ApiOperation({ summary: 'Resolve an agent chat approval' })
  @Post('sessions/:session_id/approvals/:approval_id/resolve')
  @HttpCode(200)
  async resolve(
    @CurrentPrincipal() p: Principal,
    @Param('session_id') id: string,
    @Param('approval_id') approvalId: string,
    @Body() dto: ResolveAgentChatApprovalDto,
  ) {
    return { object: 'agent_chat_approval', data: await this.approvals.resolve(p.tenantId, id, approvalId, dto) };
  }

  @ApiEnvelope('agent_chat_approval', AgentChatApprovalDto)
  @ApiOperation({ summary: 'Cancel an agent chat approval' })
  @Post('sessions/:session_id/approvals/:approval_id/cancel')
  @HttpCode(200)
  async cancel(@CurrentPrincipal() p: Principal, @Param('session_id') id: string, @Param('approval_id') approvalId: string) {
    return { object: 'agent_chat_approval', data: await this.approvals.cancel(p.tenantId, id, approvalId) };
  }

  @ApiEnvelope('agent_chat_grants', [AgentChatGrantDto])
  @ApiOperation({ summary: 'List approval grants' })
  @Get('grants')
  async grants(@CurrentPrincipal() p: Principal, @Query() q: ListAgentChatGrantsDto) {
    return { object: 'agent_chat_grants', data: await this.approvals.grants(p.tenantId, q) };
  }

  @ApiEnvelope('agent_chat_grant', AgentChatGrantRevokedDto)
  @ApiOperation({ summary: 'Revoke an approval grant' })
  @Delete('grants/:grant_id')
  async revoke(@CurrentPrincipal() p: Principal, @Param('grant_id') grantId: string) {
    return { object: 'agent_chat_grant', data: await this.approvals.revokeGrant(p.tenantId, grantId) };
  }
}
