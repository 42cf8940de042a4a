import { Body, Controller, Delete, Get, HttpCode, Param, Post, Query } from '@nestjs/common';
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
  @Get('sessions/:id/approvals')
  async list(@CurrentPrincipal() p: Principal, @Param('id') id: string, @Query() q: ListAgentChatApprovalsDto) {
    return { object: 'agent_chat_approvals', data: await this.approvals.list(p.tenantId, id, q.status) };
  }

  @ApiEnvelope('agent_chat_approval', AgentChatApprovalDto)
  @Get('sessions/:id/approvals/:approvalId')
  async get(@CurrentPrincipal() p: Principal, @Param('id') id: string, @Param('approvalId') approvalId: string) {
    return { object: 'agent_chat_approval', data: await this.approvals.get(p.tenantId, id, approvalId) };
  }

  @ApiEnvelope('agent_chat_approval', AgentChatApprovalDto)
  @Post('sessions/:id/approvals/:approvalId/resolve')
  @HttpCode(200)
  async resolve(@CurrentPrincipal() p: Principal, @Param('id') id: string, @Param('approvalId') approvalId: string, @Body() dto: ResolveAgentChatApprovalDto) {
    return { object: 'agent_chat_approval', data: await this.approvals.resolve(p.tenantId, id, approvalId, dto) };
  }

  @ApiEnvelope('agent_chat_approval', AgentChatApprovalDto)
  @Post('sessions/:id/approvals/:approvalId/cancel')
  @HttpCode(200)
  async cancel(@CurrentPrincipal() p: Principal, @Param('id') id: string, @Param('approvalId') approvalId: string) {
    return { object: 'agent_chat_approval', data: await this.approvals.cancel(p.tenantId, id, approvalId) };
  }

  @ApiEnvelope('agent_chat_grants', [AgentChatGrantDto])
  @Get('grants')
  async grants(@CurrentPrincipal() p: Principal, @Query() q: ListAgentChatGrantsDto) {
    return { object: 'agent_chat_grants', data: await this.approvals.grants(p.tenantId, q) };
  }

  @ApiEnvelope('agent_chat_grant', AgentChatGrantRevokedDto)
  @Delete('grants/:grantId')
  async revoke(@CurrentPrincipal() p: Principal, @Param('grantId') grantId: string) {
    return { object: 'agent_chat_grant', data: await this.approvals.revokeGrant(p.tenantId, grantId) };
  }
}
