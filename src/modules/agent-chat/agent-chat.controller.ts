import { Body, Controller, Delete, Get, Headers, HttpCode, Param, Patch, Post, Query, Res } from '@nestjs/common';
import { ApiOperation } from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import type { Principal, RequestOrigin } from '@core/context/request-context';
import { CurrentPrincipal } from '@core/http/auth/current-principal.decorator';
import { Origin } from '@core/http/origin.decorator';
import { ApiEnvelope, ApiEnvelopes, ApiSse, type FrameShape } from '@core/http/openapi';
import { SseService } from '@core/http/sse';
import { LiveDeltaFrameDto, LiveResetFrameDto, ToolProgressFrameDto } from '@modules/inference';
import { isActiveTurn } from './agent-chat-rows';
import { toActiveTurnView } from './agent-chat-view';
import { parseChatCursor, AgentChatStreamService } from './agent-chat-stream.service';
import { AgentChatGuidanceService } from './guidance/agent-chat-guidance.service';
import { AgentChatQueueService } from './queue/agent-chat-queue.service';
import { AgentChatFilesService } from './files/agent-chat-files.service';
import { AgentChatService, type StartedTurn } from './agent-chat.service';
import {
  AddGuidanceDto,
  AgentChatStreamQueryDto,
  CreateAgentChatSessionDto,
  EditLastUserMessageDto,
  RevertFilesDto,
  PatchQueueItemDto,
  RerunDto,
  ListAgentChatSessionsDto,
  ListGuidanceDto,
  PatchGuidanceDto,
  PostAgentChatMessageDto,
} from './agent-chat.dto';
import {
  AgentChatActiveSessionDto,
  AgentChatCancelDto,
  AgentChatChangedFileDiffDto,
  AgentChatChangedFileDto,
  AgentChatDeletedDto,
  AgentChatGuidanceAcceptedDto,
  AgentChatGuidanceConsumedFrameDto,
  AgentChatGuidanceDeletedDto,
  AgentChatGuidanceListDto,
  AgentChatGuidanceMessageFrameDto,
  AgentChatGuidanceUpdatedDto,
  AgentChatQueueItemDto,
  AgentChatRevertDto,
  AgentChatSessionDto,
  AgentChatSessionSummaryDto,
  AgentChatStartedTurnDto,
  AgentChatStreamMessageDto,
  AgentChatToolCallFrameDto,
} from './agent-chat-responses.dto';
import { AgentChatApprovalRequestedFrameDto, AgentChatApprovalResolvedFrameDto } from './approvals/approval-responses.dto';

/** The frames of a turn's stream (`GET …/stream`, and `POST …/messages` with `stream: true`). */
const TURN_FRAMES: Record<string, FrameShape> = {
  snapshot: ['agent_chat_session', AgentChatSessionDto],
  delta: LiveDeltaFrameDto,
  tool_progress: ToolProgressFrameDto,
  tool_call: AgentChatToolCallFrameDto,
  tool_call_update: AgentChatToolCallFrameDto,
  message: { oneOf: [AgentChatStreamMessageDto, AgentChatGuidanceMessageFrameDto] },
  'guidance.consumed': AgentChatGuidanceConsumedFrameDto,
  'approval.requested': AgentChatApprovalRequestedFrameDto,
  'approval.resolved': AgentChatApprovalResolvedFrameDto,
  reset: LiveResetFrameDto,
  done: ['agent_chat_session', AgentChatSessionDto],
};
const TURN_STREAM =
  "With `stream: true`: `snapshot`, the turn's frames (`id: <turn>:<stream>:<index>`), `message` (the settled reply) and `done`; otherwise the session once the turn ended.";

/** `/hecate/v1/agent-chat/*` (docs/api.md §4 Agent Chat, docs/api.md §5 live sessions). */
@Controller('hecate/v1/agent-chat')
export class AgentChatController {
  constructor(
    private readonly chats: AgentChatService,
    private readonly streams: AgentChatStreamService,
    private readonly guidance: AgentChatGuidanceService,
    private readonly queue: AgentChatQueueService,
    private readonly files: AgentChatFilesService,
    private readonly sse: SseService,
  ) {}

  /** Sessions becoming busy or idle, across all api processes (docs/api.md §5 active sessions). */
  @ApiSse('A `snapshot` of the busy sessions, then `session.busy` / `session.idle` as turns start and end.', {
    snapshot: ['agent_chat_active_sessions', [AgentChatActiveSessionDto]],
    'session.busy': AgentChatActiveSessionDto,
    'session.idle': AgentChatActiveSessionDto,
  })
  @ApiOperation({ summary: "Stream agent chat sessions' activity" })
  @Get('active-sessions')
  async active(@CurrentPrincipal() p: Principal, @Res() reply: FastifyReply): Promise<void> {
    await this.streams.serveActive(this.sse.opener(reply, { stream: 'agent_chat_active' }), p.tenantId);
  }

  @ApiEnvelope('agent_chat_sessions', [AgentChatSessionSummaryDto])
  @ApiOperation({ summary: 'List agent chat sessions' })
  @Get('sessions')
  async list(@CurrentPrincipal() p: Principal, @Query() q: ListAgentChatSessionsDto) {
    return { object: 'agent_chat_sessions', data: await this.chats.list(p.tenantId, q.limit ?? 50) };
  }

  @ApiEnvelope('agent_chat_session', AgentChatSessionDto)
  @ApiOperation({ summary: 'Create an agent chat session' })
  @Post('sessions')
  @HttpCode(200)
  async create(@CurrentPrincipal() p: Principal, @Body() dto: CreateAgentChatSessionDto) {
    return { object: 'agent_chat_session', data: await this.chats.create(p, dto) };
  }

  @ApiEnvelope('agent_chat_session', AgentChatSessionDto)
  @ApiOperation({ summary: 'Get an agent chat session' })
  @Get('sessions/:session_id')
  async get(@CurrentPrincipal() p: Principal, @Param('session_id') id: string) {
    return { object: 'agent_chat_session', data: await this.chats.view(p.tenantId, id) };
  }

  @ApiEnvelope('agent_chat_session', AgentChatDeletedDto)
  @ApiOperation({ summary: 'Delete an agent chat session' })
  @Delete('sessions/:session_id')
  async remove(@CurrentPrincipal() p: Principal, @Origin() origin: RequestOrigin, @Param('session_id') id: string) {
    await this.chats.remove(p.tenantId, id, origin);
    return { object: 'agent_chat_session', data: { id, deleted: true } };
  }

  /**
   * A turn: waits for its end — through an agent turn's approvals — and answers 200 with the session (docs/api.md §4), or 202
   * with the turn when the wait timed out first; with `stream: true` answers with the turn's SSE stream, with
   * `wait: false` 202 with the turn at once. `on_busy: enqueue` answers 202 with the queued item.
   */
  @ApiSse(TURN_STREAM, TURN_FRAMES, { status: 200, json: ['agent_chat_session', AgentChatSessionDto] })
  @ApiEnvelopes(
    [
      ['agent_chat_turn', AgentChatStartedTurnDto],
      ['agent_chat_queue_item', AgentChatQueueItemDto],
    ],
    {
      status: 202,
      description:
        '`wait: false`, or the turn still running or awaiting an approval when GATEWAY_AGENT_CHAT_WAIT_TIMEOUT ended the wait: the turn; `on_busy: enqueue` while busy: the queued item.',
    },
  )
  @ApiOperation({ summary: 'Send an agent chat message' })
  @Post('sessions/:session_id/messages')
  async post(
    @CurrentPrincipal() p: Principal,
    @Origin() origin: RequestOrigin,
    @Param('session_id') id: string,
    @Body() dto: PostAgentChatMessageDto,
    @Res() reply: FastifyReply,
  ): Promise<void> {
    const r = await this.queue.startOrQueue(p, origin, id, dto);
    if ('queued' in r) {
      await reply.status(202).send({ object: 'agent_chat_queue_item', data: r.queued });
      return;
    }
    await this.answerTurn(reply, p, r, dto);
  }

  /** docs/api.md §5 rerun: stops a running turn, then re-runs the last user message (or runs `guidance_content`). */
  @ApiSse(TURN_STREAM, TURN_FRAMES, { status: 200, json: ['agent_chat_session', AgentChatSessionDto] })
  @ApiEnvelope('agent_chat_turn', AgentChatStartedTurnDto, {
    status: 202,
    description: '`wait: false`, or the turn still going when GATEWAY_AGENT_CHAT_WAIT_TIMEOUT ended the wait: the turn.',
  })
  @ApiOperation({ summary: 'Rerun the last agent chat message' })
  @Post('sessions/:session_id/rerun')
  async rerun(
    @CurrentPrincipal() p: Principal,
    @Origin() origin: RequestOrigin,
    @Param('session_id') id: string,
    @Body() dto: RerunDto,
    @Res() reply: FastifyReply,
  ): Promise<void> {
    await this.answerTurn(reply, p, await this.chats.rerun(p, origin, id, dto), dto);
  }

  @ApiEnvelope('agent_chat_session', AgentChatSessionDto)
  @ApiOperation({ summary: 'Edit the last user message' })
  @Post('sessions/:session_id/edit-last-user-message')
  @HttpCode(200)
  async editLast(@CurrentPrincipal() p: Principal, @Param('session_id') id: string, @Body() dto: EditLastUserMessageDto) {
    return { object: 'agent_chat_session', data: await this.chats.editLastUserMessage(p.tenantId, id, dto.content) };
  }

  @ApiEnvelope('agent_chat_queue', [AgentChatQueueItemDto])
  @ApiOperation({ summary: "List an agent chat session's queue" })
  @Get('sessions/:session_id/queue')
  async listQueue(@CurrentPrincipal() p: Principal, @Param('session_id') id: string) {
    return { object: 'agent_chat_queue', data: await this.queue.list(p.tenantId, id) };
  }

  @ApiEnvelope('agent_chat_queue_item', AgentChatQueueItemDto)
  @ApiOperation({ summary: 'Update a queued agent chat message' })
  @Patch('sessions/:session_id/queue/:item_id')
  async patchQueue(@CurrentPrincipal() p: Principal, @Param('session_id') id: string, @Param('item_id') itemId: string, @Body() dto: PatchQueueItemDto) {
    return { object: 'agent_chat_queue_item', data: await this.queue.update(p.tenantId, id, itemId, dto) };
  }

  @ApiEnvelope('agent_chat_queue_item', AgentChatDeletedDto)
  @ApiOperation({ summary: 'Remove a queued agent chat message' })
  @Delete('sessions/:session_id/queue/:item_id')
  async deleteQueue(@CurrentPrincipal() p: Principal, @Param('session_id') id: string, @Param('item_id') itemId: string) {
    return { object: 'agent_chat_queue_item', data: await this.queue.remove(p.tenantId, id, itemId) };
  }

  private async answerTurn(reply: FastifyReply, p: Principal, { turn, session }: StartedTurn, dto: { stream?: boolean; wait?: boolean }): Promise<void> {
    if (dto.stream) return this.streams.serveStarted(this.sse.opener(reply, { stream: 'agent_chat' }), session, turn);
    if (dto.wait === false) {
      await reply.status(202).send({ object: 'agent_chat_turn', data: { session_id: turn.session_id, ...toActiveTurnView(turn) } });
      return;
    }
    // docs/api.md §4: the answer comes when the turn finishes, fails or is cancelled — an agent turn waits through its
    // approvals (decided at the task's approval endpoint meanwhile). A turn still going when GATEWAY_AGENT_CHAT_WAIT_TIMEOUT
    // ends the wait answers 202 with the turn (running, or awaiting_approval): never a 200 a client would take as final.
    const waited = await this.chats.waitForTurn(turn.id, turn.session_id, undefined, true);
    if (waited && isActiveTurn(waited.status)) {
      await reply.status(202).send({ object: 'agent_chat_turn', data: { session_id: waited.session_id, ...toActiveTurnView(waited) } });
      return;
    }
    await reply.status(200).send({ object: 'agent_chat_session', data: await this.chats.view(p.tenantId, turn.session_id) });
  }

  /** Snapshot, then the running turn's frames; resumable with `Last-Event-ID` (`<turn>:<stream>:<index>`) or `?last_index=`. */
  @ApiSse("A `snapshot` of the session, then the running (or next) turn's frames, its `message` and `done`.", TURN_FRAMES, {
    lastEventId: 'The id of the last turn frame received, `<turn>:<stream>:<index>` (or `?last_index=` for the current turn).',
  })
  @ApiOperation({ summary: 'Stream an agent chat session' })
  @Get('sessions/:session_id/stream')
  async stream(
    @CurrentPrincipal() p: Principal,
    @Param('session_id') id: string,
    @Query() q: AgentChatStreamQueryDto,
    @Headers('last-event-id') lastEventId: string | undefined,
    @Res() reply: FastifyReply,
  ): Promise<void> {
    await this.streams.serve(this.sse.opener(reply, { stream: 'agent_chat' }), p.tenantId, id, parseChatCursor(lastEventId, q.last_index));
  }

  @ApiEnvelope('agent_chat_cancel', AgentChatCancelDto)
  @ApiOperation({ summary: 'Cancel an agent chat turn' })
  @Post('sessions/:session_id/cancel')
  @HttpCode(202)
  async cancel(@CurrentPrincipal() p: Principal, @Origin() origin: RequestOrigin, @Param('session_id') id: string) {
    return { object: 'agent_chat_cancel', data: await this.chats.cancel(p.tenantId, id, origin) };
  }

  /** docs/api.md §5's interrupt: the same stop as cancel. */
  @ApiEnvelope('agent_chat_cancel', AgentChatCancelDto)
  @ApiOperation({ summary: 'Interrupt an agent chat turn' })
  @Post('sessions/:session_id/interrupt')
  @HttpCode(202)
  async interrupt(@CurrentPrincipal() p: Principal, @Origin() origin: RequestOrigin, @Param('session_id') id: string) {
    return this.cancel(p, origin, id);
  }

  @ApiEnvelope('agent_chat_session', AgentChatSessionDto)
  @ApiOperation({ summary: 'Close an agent chat session' })
  @Post('sessions/:session_id/close')
  @HttpCode(200)
  async close(@CurrentPrincipal() p: Principal, @Origin() origin: RequestOrigin, @Param('session_id') id: string) {
    return { object: 'agent_chat_session', data: await this.chats.close(p.tenantId, id, origin) };
  }

  /** Guidance for the running turn (docs/api.md §5 inject-user-message): consumed before its next model call. */
  @ApiEnvelope('agent_chat_guidance', AgentChatGuidanceAcceptedDto)
  @ApiOperation({ summary: 'Add guidance to the running turn' })
  @Post('sessions/:session_id/guidance')
  @HttpCode(200)
  async addGuidance(@CurrentPrincipal() p: Principal, @Param('session_id') id: string, @Body() dto: AddGuidanceDto) {
    return { object: 'agent_chat_guidance', data: await this.guidance.add(p.tenantId, id, dto) };
  }

  @ApiEnvelope('agent_chat_guidance', AgentChatGuidanceListDto)
  @ApiOperation({ summary: "List an agent chat session's guidance" })
  @Get('sessions/:session_id/guidance')
  async listGuidance(@CurrentPrincipal() p: Principal, @Param('session_id') id: string, @Query() q: ListGuidanceDto) {
    return { object: 'agent_chat_guidance', data: await this.guidance.list(p.tenantId, id, q.status === 'all') };
  }

  @ApiEnvelope('agent_chat_guidance', AgentChatGuidanceUpdatedDto)
  @ApiOperation({ summary: 'Update a guidance message' })
  @Patch('sessions/:session_id/guidance/:guidance_id')
  async patchGuidance(@CurrentPrincipal() p: Principal, @Param('session_id') id: string, @Param('guidance_id') gid: string, @Body() dto: PatchGuidanceDto) {
    return { object: 'agent_chat_guidance', data: await this.guidance.update(p.tenantId, id, gid, dto.content) };
  }

  @ApiEnvelope('agent_chat_guidance', AgentChatGuidanceDeletedDto)
  @ApiOperation({ summary: 'Delete a guidance message' })
  @Delete('sessions/:session_id/guidance/:guidance_id')
  async deleteGuidance(@CurrentPrincipal() p: Principal, @Param('session_id') id: string, @Param('guidance_id') gid: string) {
    return { object: 'agent_chat_guidance', data: await this.guidance.remove(p.tenantId, id, gid) };
  }

  /** Files an agent turn changed (from its captured diff). */
  @ApiEnvelope('agent_chat_changed_files', [AgentChatChangedFileDto])
  @ApiOperation({ summary: 'List the files an agent turn changed' })
  @Get('sessions/:session_id/messages/:message_id/files')
  async changedFiles(@CurrentPrincipal() p: Principal, @Param('session_id') id: string, @Param('message_id') messageId: string) {
    return { object: 'agent_chat_changed_files', data: await this.files.files(p.tenantId, id, messageId) };
  }

  /** One file's diff block; the path is one URL path component (`encodeURIComponent`). */
  @ApiEnvelope('agent_chat_changed_file_diff', AgentChatChangedFileDiffDto)
  @ApiOperation({ summary: "Get one changed file's diff" })
  @Get('sessions/:session_id/messages/:message_id/files/:path')
  async changedFile(@CurrentPrincipal() p: Principal, @Param('session_id') id: string, @Param('message_id') messageId: string, @Param('path') path: string) {
    return { object: 'agent_chat_changed_file_diff', data: await this.files.file(p.tenantId, id, messageId, path) };
  }

  @ApiEnvelope('agent_chat_revert', AgentChatRevertDto)
  @ApiOperation({ summary: "Revert an agent turn's file changes" })
  @Post('sessions/:session_id/messages/:message_id/revert')
  @HttpCode(200)
  async revert(@CurrentPrincipal() p: Principal, @Param('session_id') id: string, @Param('message_id') messageId: string, @Body() dto: RevertFilesDto) {
    return { object: 'agent_chat_revert', data: await this.files.revert(p.tenantId, id, messageId, dto.paths ?? []) };
  }
}
