import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post, Put, Query } from '@nestjs/common';
import { CurrentPrincipal } from '@core/http/auth/current-principal.decorator';
import type { Principal } from '@core/context/request-context';
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

/** Seed 000 session CRUD, seed 002 tree view / branch switch / stop, seed 001 resolve. */
@Controller('hecate/v1/chat/sessions')
export class ChatSessionsController {
  constructor(
    private readonly sessions: ChatSessionsService,
    private readonly inflight: ChatInflightService,
  ) {}

  @Get()
  async list(@CurrentPrincipal() caller: Principal, @Query() q: ListChatSessionsQueryDto) {
    const page = await this.sessions.list(caller.tenantId, { includeSnapshots: queryFlag(q.include_snapshots), limit: q.limit, cursor: q.cursor });
    return { object: 'chat_sessions', ...page };
  }

  @Post()
  @HttpCode(201)
  async create(@CurrentPrincipal() caller: Principal, @Body() dto: CreateChatSessionDto) {
    return { object: 'chat_session', data: await this.sessions.create(caller.tenantId, dto) };
  }

  @Get(':id')
  async get(@CurrentPrincipal() caller: Principal, @Param('id') id: string, @Query() q: GetChatSessionQueryDto) {
    return { object: 'chat_session', data: await this.sessions.get(caller.tenantId, id, q.view) };
  }

  @Patch(':id')
  async update(@CurrentPrincipal() caller: Principal, @Param('id') id: string, @Body() dto: UpdateChatSessionDto) {
    return { object: 'chat_session', data: await this.sessions.update(caller.tenantId, id, dto) };
  }

  @Delete(':id')
  async delete(@CurrentPrincipal() caller: Principal, @Param('id') id: string) {
    return { object: 'chat_session_deleted', data: await this.sessions.delete(caller.tenantId, id) };
  }

  @Get(':id/resolve')
  async resolve(@CurrentPrincipal() caller: Principal, @Param('id') id: string) {
    return { object: 'chat_session_resolution', data: await this.sessions.resolve(caller.tenantId, id) };
  }

  @Put(':id/active-leaf')
  async setActiveLeaf(@CurrentPrincipal() caller: Principal, @Param('id') id: string, @Body() dto: SetActiveLeafDto) {
    return { object: 'chat_session', data: await this.sessions.setActiveLeaf(caller.tenantId, id, dto.message_id) };
  }

  @Post(':id/stop')
  @HttpCode(200)
  async stop(@CurrentPrincipal() caller: Principal, @Param('id') id: string, @Body() dto: StopChatSessionDto) {
    return { object: 'chat_session_stop', data: await this.inflight.stop(caller.tenantId, id, dto?.message_id) };
  }
}
