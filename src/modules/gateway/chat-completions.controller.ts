import { Controller, HttpCode, Post, Req, Res } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { CurrentPrincipal } from '@core/auth/current-principal.decorator';
import type { Principal } from '@core/context/request-context';
import { IngressService } from './ingress.service';

/** OpenAI-compatible ingress. The body is validated by hand (IngressService), not by a DTO. */
@Controller('v1')
export class ChatCompletionsController {
  constructor(private readonly ingress: IngressService) {}

  @Post('chat/completions')
  @HttpCode(200)
  complete(@CurrentPrincipal() caller: Principal, @Req() request: FastifyRequest, @Res() reply: FastifyReply): Promise<void> {
    return this.ingress.handle('openai', request, reply, caller);
  }
}
