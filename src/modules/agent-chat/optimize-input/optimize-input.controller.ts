import { applyDecorators, Body, Controller, HttpCode, Post, Res } from '@nestjs/common';
import { ApiExtraModels, ApiOperation, ApiResponse, getSchemaPath } from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import type { Principal, RequestOrigin } from '@core/context/request-context';
import { CurrentPrincipal } from '@core/http/auth/current-principal.decorator';
import { ModelCallRoute } from '@core/http/model-call-route.decorator';
import { ApiEnvelope } from '@core/http/openapi';
import { Origin } from '@core/http/origin.decorator';
import { SseService } from '@core/http/sse';
import { UpstreamError } from '@modules/providers';
import { OptimizeInputDto } from './optimize-input.dto';
import { OPTIMIZE_INPUT_LINES, OptimizedInputDto } from './optimize-input-responses.dto';
import { OptimizeInputService } from './optimize-input.service';

/** The stream's answer: `text/plain`, one JSON object per line; the line shapes are components (`x-ndjson-lines`). */
const ApiNdjsonLines = (): MethodDecorator =>
  applyDecorators(
    ApiExtraModels(...OPTIMIZE_INPUT_LINES),
    ApiResponse({
      status: 200,
      description:
        "One JSON object per line: `start`, `delta`… (`content`), then `done` (the rewrite, usage and cost) or `error` (the error envelope's `error`). Failures before the first line answer the JSON error envelope with their status.",
      content: { 'text/plain; charset=utf-8': { schema: { type: 'string' } } },
      ...{ 'x-ndjson-lines': { oneOf: OPTIMIZE_INPUT_LINES.map((m) => ({ $ref: getSchemaPath(m) })) } },
    }),
  );

/** Aborted when the client's connection closes before the answer is complete (the upstream call is then cancelled). */
function clientGone(reply: FastifyReply): { signal: AbortSignal; dispose: () => void } {
  const abort = new AbortController();
  const onClose = () => {
    if (!reply.raw.writableFinished) abort.abort();
  };
  reply.raw.on('close', onClose);
  return { signal: abort.signal, dispose: () => reply.raw.off('close', onClose) };
}

/** docs/api.md §5 "User input optimization" (`/api/chat/optimize-input[/stream]`), under `/hecate/v1/agent-chat/`. */
@Controller('hecate/v1/agent-chat')
export class OptimizeInputController {
  constructor(
    private readonly optimizer: OptimizeInputService,
    private readonly sse: SseService,
  ) {}

  /** The rewrite; the client leaving before it is ready cancels the upstream request. */
  @ModelCallRoute()
  @ApiEnvelope('optimized_input', OptimizedInputDto)
  @ApiOperation({ summary: 'Optimise a prompt' })
  @Post('optimize-input')
  @HttpCode(200)
  async optimize(
    @CurrentPrincipal() p: Principal,
    @Origin() origin: RequestOrigin,
    @Body() dto: OptimizeInputDto,
    @Res({ passthrough: true }) reply: FastifyReply,
  ) {
    const left = clientGone(reply);
    try {
      return { object: 'optimized_input', data: await this.optimizer.optimize(p, origin, dto, left.signal) };
    } catch (err) {
      if (left.signal.aborted && (err instanceof UpstreamError || reply.raw.destroyed)) return; // nobody to tell
      throw err;
    } finally {
      left.dispose();
    }
  }

  /** The rewrite as the model writes it; the client leaving cancels the upstream request. */
  @ModelCallRoute()
  @ApiNdjsonLines()
  @ApiOperation({ summary: 'Stream an optimised prompt' })
  @Post('optimize-input/stream')
  @HttpCode(200)
  async stream(@CurrentPrincipal() p: Principal, @Origin() origin: RequestOrigin, @Body() dto: OptimizeInputDto, @Res() reply: FastifyReply): Promise<void> {
    const left = clientGone(reply);
    try {
      const lines = await this.optimizer.open(p, origin, dto, left.signal);
      const out = this.sse.open(reply, { stream: 'optimize_input', heartbeatMs: 0, reconnectable: false, contentType: 'text/plain; charset=utf-8' });
      for await (const line of lines) if (!out.write(`${JSON.stringify(line)}\n`)) break;
      out.end();
    } catch (err) {
      if (left.signal.aborted && (err instanceof UpstreamError || reply.raw.destroyed)) return; // nobody to tell
      throw err;
    } finally {
      left.dispose();
    }
  }
}
