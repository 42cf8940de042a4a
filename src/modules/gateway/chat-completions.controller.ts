import { Controller, HttpCode, Post, Req, Res } from '@nestjs/common';
import { ApiOperation } from '@nestjs/swagger';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { CurrentPrincipal } from '@core/http/auth/current-principal.decorator';
import type { Principal } from '@core/context/request-context';
import { IngressService } from './ingress.service';
import { chatSessionIdOf, SessionExchangeService } from './session-exchange.service';

/** OpenAI-compatible ingress. The body is validated by hand (IngressService), not by a DTO. */
@Controller('v1')
export class ChatCompletionsController {
  constructor(
    private readonly ingress: IngressService,
    private readonly chatExchanges: SessionExchangeService,
  ) {}

  @ApiOperation({ summary: 'Create a chat completion (OpenAI Chat Completions API)' })
  @Post('chat/completions')
  @HttpCode(200)
  complete(@CurrentPrincipal() caller: Principal, @Req() request: FastifyRequest, @Res() reply: FastifyReply): Promise<void> {
    // --- chat-sessions hook: a `session_id` body field or X-Session-Id header records the exchange
    // into that chat session (RecordChatExchange, docs/api.md §1) around the router call.
    const sessionId = chatSessionIdOf(request);
    if (sessionId) return this.chatExchanges.handle(caller, request, reply, sessionId);
    // --- end chat-sessions hook
    return this.ingress.handle('openai', request, reply, caller);
  }
}
