import { Body, Controller, HttpCode, Param, Post, Res } from '@nestjs/common';
import { ApiOperation } from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import { CurrentPrincipal } from '@core/http/auth/current-principal.decorator';
import type { Principal, RequestOrigin } from '@core/context/request-context';
import { Origin } from '@core/http/origin.decorator';
import { ApiEnvelope, ApiSse, type FrameShape } from '@core/http/openapi';
import { SseService } from '@core/http/sse';
import { LiveResetFrameDto } from '@modules/inference';
import { ChatCompactionService } from './chat-compaction.service';
import { CompactChatSessionDto, ContinueChatMessageDto, EditChatMessageDto, RegenerateChatMessageDto, SendChatMessageDto } from './chat-session.dto';
import { ChatSessionsService } from './chat-sessions.service';
import { ChatSessionDto, ChatTurnCreatedFrameDto, ChatTurnDeltaFrameDto, ChatTurnErrorFrameDto, ChatTurnResultDto } from './chat-session-view.dto';

/** A turn answers JSON, or with `stream: true` these frames (docs/api.md §3). */
const TURN_FRAMES: Record<string, FrameShape> = {
  'message.created': ChatTurnCreatedFrameDto,
  delta: ChatTurnDeltaFrameDto,
  reset: LiveResetFrameDto,
  done: ChatTurnResultDto,
  error: ChatTurnErrorFrameDto,
};
const TURN = (what: string) =>
  `${what}: the turn's result, or with \`stream: true\` \`message.created\`, \`delta\` frames (\`id:\` = index) and \`done\` (or \`error\`).`;
import { TurnSseWriter } from './chat-turn-sse';
import { ChatTurnsService, SinkFactory } from './chat-turns.service';

/** docs/api.md §3 turns (JSON, or SSE with `stream: true`) and docs/api.md §2 compaction. */
@Controller('hecate/v1/chat/sessions/:session_id')
export class ChatTurnsController {
  constructor(
    private readonly turns: ChatTurnsService,
    private readonly compaction: ChatCompactionService,
    private readonly sessions: ChatSessionsService,
    private readonly sse: SseService,
  ) {}

  private sink(reply: FastifyReply, stream: boolean | undefined): SinkFactory {
    return stream ? () => new TurnSseWriter(this.sse.open(reply, { stream: 'chat_turn' })) : undefined;
  }

  private async respond(reply: FastifyReply, stream: boolean | undefined, data: Promise<unknown>): Promise<void> {
    const body = await data;
    if (!stream) await reply.status(200).send({ object: 'chat_session_turn', data: body });
  }

  @ApiSse(TURN('A user message and its reply'), TURN_FRAMES, { status: 200, json: ['chat_session_turn', ChatTurnResultDto] })
  @ApiOperation({ summary: 'Send a chat message' })
  @Post('messages')
  send(
    @CurrentPrincipal() caller: Principal,
    @Origin() origin: RequestOrigin,
    @Param('session_id') id: string,
    @Body() dto: SendChatMessageDto,
    @Res() reply: FastifyReply,
  ) {
    return this.respond(reply, dto.stream, this.turns.send(caller.tenantId, id, dto, this.sink(reply, dto.stream), origin));
  }

  @ApiSse(TURN('A new reply to the message'), TURN_FRAMES, { status: 200, json: ['chat_session_turn', ChatTurnResultDto] })
  @ApiOperation({ summary: 'Regenerate a chat reply' })
  @Post('messages/:message_id/regenerate')
  regenerate(
    @CurrentPrincipal() caller: Principal,
    @Origin() origin: RequestOrigin,
    @Param('session_id') id: string,
    @Param('message_id') messageId: string,
    @Body() dto: RegenerateChatMessageDto,
    @Res() reply: FastifyReply,
  ) {
    return this.respond(reply, dto.stream, this.turns.regenerate(caller.tenantId, id, messageId, dto, this.sink(reply, dto.stream), origin));
  }

  @ApiSse(TURN('An edited sibling of the message and its reply'), TURN_FRAMES, { status: 200, json: ['chat_session_turn', ChatTurnResultDto] })
  @ApiOperation({ summary: 'Edit a chat message' })
  @Post('messages/:message_id/edit')
  edit(
    @CurrentPrincipal() caller: Principal,
    @Origin() origin: RequestOrigin,
    @Param('session_id') id: string,
    @Param('message_id') messageId: string,
    @Body() dto: EditChatMessageDto,
    @Res() reply: FastifyReply,
  ) {
    return this.respond(reply, dto.stream, this.turns.edit(caller.tenantId, id, messageId, dto, this.sink(reply, dto.stream), origin));
  }

  @ApiSse(TURN('The cut-short reply, continued'), TURN_FRAMES, { status: 200, json: ['chat_session_turn', ChatTurnResultDto] })
  @ApiOperation({ summary: 'Continue a chat reply' })
  @Post('messages/:message_id/continue')
  continue(
    @CurrentPrincipal() caller: Principal,
    @Origin() origin: RequestOrigin,
    @Param('session_id') id: string,
    @Param('message_id') messageId: string,
    @Body() dto: ContinueChatMessageDto,
    @Res() reply: FastifyReply,
  ) {
    return this.respond(reply, dto.stream, this.turns.continue(caller.tenantId, id, messageId, dto, this.sink(reply, dto.stream), origin));
  }

  @ApiEnvelope('chat_session', ChatSessionDto, { description: 'The continuation session.' })
  @ApiOperation({ summary: 'Compact a chat session' })
  @Post('compact')
  @HttpCode(200)
  async compact(@CurrentPrincipal() caller: Principal, @Origin() origin: RequestOrigin, @Param('session_id') id: string, @Body() dto: CompactChatSessionDto) {
    const continuation = await this.compaction.compact(caller.tenantId, id, {
      model: dto.model,
      provider: dto.provider,
      keepLastMessages: dto.keep_last_messages,
      origin,
    });
    return { object: 'chat_session', data: await this.sessions.get(caller.tenantId, continuation.id) };
  }
}
