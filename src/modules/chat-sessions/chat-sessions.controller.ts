import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post, Put, Query } from '@nestjs/common';
import { ApiOperation } from '@nestjs/swagger';
import { CurrentPrincipal } from '@core/http/auth/current-principal.decorator';
import type { Principal } from '@core/context/request-context';
import { ApiEnvelope } from '@core/http/openapi';
import { ChatInflightService } from './chat-inflight.service';
import {
  CreateChatSessionDto,
  GetChatSessionQueryDto,
  ListChatSessionsQueryDto,
  queryFlag,
  SetActiveLeafDto,
  StopChatSessionDto,
  UpdateChatSessionDto,
} from './chat-session.dto';
import { ChatSessionsService } from './chat-sessions.service';
import { ChatSessionDeletedDto, ChatSessionDto, ChatSessionResolutionDto, ChatSessionStopDto, ChatSessionSummaryDto } from './chat-session-view.dto';

/** docs/api.md §1 session CRUD, docs/api.md §3 tree view / branch switch / stop, docs/api.md §2 resolve. */
@Controller('hecate/v1/chat/sessions')
export class ChatSessionsController {
  constructor(
    private readonly sessions: ChatSessionsService,
    private readonly inflight: ChatInflightService,
  ) {}

  @ApiEnvelope('chat_sessions', [ChatSessionSummaryDto], {
    extra: { has_more: { type: 'boolean' }, next_cursor: { type: ['string', 'null'], description: 'Pass as `cursor` for the next page.' } },
  })
  @ApiOperation({ summary: 'List chat sessions' })
  @Get()
  async list(@CurrentPrincipal() caller: Principal, @Query() q: ListChatSessionsQueryDto) {
    const page = await this.sessions.list(caller.tenantId, { includeSnapshots: queryFlag(q.include_snapshots), limit: q.limit, cursor: q.cursor });
    return { object: 'chat_sessions', ...page };
  }

  @ApiEnvelope('chat_session', ChatSessionDto)
  @ApiOperation({ summary: 'Create a chat session' })
  @Post()
  @HttpCode(201)
  async create(@CurrentPrincipal() caller: Principal, @Body() dto: CreateChatSessionDto) {
    return { object: 'chat_session', data: await this.sessions.create(caller.tenantId, dto) };
  }

  @ApiEnvelope('chat_session', ChatSessionDto)
  @ApiOperation({ summary: 'Get a chat session' })
  @Get(':session_id')
  async get(@CurrentPrincipal() caller: Principal, @Param('session_id') id: string, @Query() q: GetChatSessionQueryDto) {
    return { object: 'chat_session', data: await this.sessions.get(caller.tenantId, id, q.view) };
  }

  @ApiEnvelope('chat_session', ChatSessionSummaryDto)
  @ApiOperation({ summary: 'Update a chat session' })
  @Patch(':session_id')
  async update(@CurrentPrincipal() caller: Principal, @Param('session_id') id: string, @Body() dto: UpdateChatSessionDto) {
    return { object: 'chat_session', data: await this.sessions.update(caller.tenantId, id, dto) };
  }

  @ApiEnvelope('chat_session_deleted', ChatSessionDeletedDto)
  @ApiOperation({ summary: 'Delete a chat session' })
  @Delete(':session_id')
  async delete(@CurrentPrincipal() caller: Principal, @Param('session_id') id: string) {
    return { object: 'chat_session_deleted', data: await this.sessions.delete(caller.tenantId, id) };
  }

  @ApiEnvelope('chat_session_resolution', ChatSessionResolutionDto)
  @ApiOperation({ summary: "Resolve a chat session's canonical session" })
  @Get(':session_id/resolve')
  async resolve(@CurrentPrincipal() caller: Principal, @Param('session_id') id: string) {
    return { object: 'chat_session_resolution', data: await this.sessions.resolve(caller.tenantId, id) };
  }

  @ApiEnvelope('chat_session', ChatSessionDto)
  @ApiOperation({ summary: "Switch a chat session's branch" })
  @Put(':session_id/active-leaf')
  async setActiveLeaf(@CurrentPrincipal() caller: Principal, @Param('session_id') id: string, @Body() dto: SetActiveLeafDto) {
    return { object: 'chat_session', data: await this.sessions.setActiveLeaf(caller.tenantId, id, dto.message_id) };
  }

  @ApiEnvelope('chat_session_stop', ChatSessionStopDto)
  @ApiOperation({ summary: "Stop a chat session's reply" })
  @Post(':session_id/stop')
  @HttpCode(200)
  async stop(@CurrentPrincipal() caller: Principal, @Param('session_id') id: string, @Body() dto: StopChatSessionDto) {
    return { object: 'chat_session_stop', data: await this.inflight.stop(caller.tenantId, id, dto?.message_id) };
  }
}
