import { Controller, Get, Headers, Query, Res } from '@nestjs/common';
import { ApiOperation } from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import { CurrentPrincipal } from '@core/http/auth/current-principal.decorator';
import type { Principal } from '@core/context/request-context';
import { ApiEnvelope, ApiSse } from '@core/http/openapi';
import { SseService } from '@core/http/sse';
import { parseCursor } from './event-cursor';
import { EventEnvelopeDto, EventFeedQueryDto, eventTypesOf } from './events.dto';
import { EventStore } from './event-store.service';
import { EventStreams } from './event-streams.service';

/**
 * The public events feed (docs/api.md §4): one subscription across runs. Its envelopes' `sequence` is the feed position, the
 * value `after_sequence` (strictly greater) and `Last-Event-ID` take; the run's own sequence is `run_sequence`.
 */
@Controller('hecate/v1/events')
export class EventsController {
  constructor(
    private readonly store: EventStore,
    private readonly streams: EventStreams,
    private readonly sse: SseService,
  ) {}

  @ApiEnvelope('events', [EventEnvelopeDto], {
    extra: {
      next_after_sequence: {
        type: 'number',
        description: "The value to pass as `after_sequence` for the next page: the last envelope's `sequence` (or the one passed, for an empty page).",
      },
    },
  })
  @ApiOperation({ summary: 'List the event feed' })
  @Get()
  async list(@CurrentPrincipal() caller: Principal, @Query() q: EventFeedQueryDto) {
    const after = parseCursor(q.after_sequence, 'after_sequence') ?? 0;
    const page = await this.store.listFeed({ tenantId: caller.tenantId, types: eventTypesOf(q.event_type), taskId: q.task_id }, after, q.limit ?? 200);
    return { object: 'events', data: page.events, next_after_sequence: page.next };
  }

  @ApiSse(
    'The feed after `after_sequence`, then live: one `event` frame per envelope (`id:` = its `sequence`, the feed position).',
    { event: ['event', EventEnvelopeDto] },
    { lastEventId: 'The `sequence` (= `id:`) of the last event received (the larger of it and `after_sequence` wins).' },
  )
  @ApiOperation({ summary: 'Stream the event feed' })
  @Get('stream')
  async stream(
    @CurrentPrincipal() caller: Principal,
    @Query() q: EventFeedQueryDto,
    @Headers('last-event-id') lastEventId: string | undefined,
    @Res() reply: FastifyReply,
  ): Promise<void> {
    const after = Math.max(parseCursor(q.after_sequence, 'after_sequence') ?? 0, parseCursor(lastEventId, 'Last-Event-ID') ?? 0);
    await this.streams.serveFeed(
      this.sse.opener(reply, { stream: 'events_feed' }),
      { tenantId: caller.tenantId, types: eventTypesOf(q.event_type), taskId: q.task_id },
      after,
    );
  }
}
