import { ApiProperty, ApiSchema } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { IsInt, IsOptional, IsString, Max, Min } from 'class-validator';
import type { EventEnvelope } from '@contracts/events';
import type { Assert, Documents } from '@core/http/openapi';

/** Query of `GET /hecate/v1/events` and `/events/stream` (docs/api.md §4 "Public events feed"). */
export class EventFeedQueryDto {
  /** Comma-separated event types (OR). */
  @IsOptional() @IsString() event_type?: string;
  @IsOptional() @IsString() task_id?: string;
  /** The feed position to read after, strictly greater: the `sequence` of the last feed envelope seen (validated by parseCursor). */
  @IsOptional() @IsString() after_sequence?: string;
  @IsOptional() @Type(() => Number) @IsInt() @Min(1) @Max(500) limit?: number;
}

export const eventTypesOf = (csv: string | undefined): string[] | undefined => {
  const list = (csv ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s.length > 0);
  return list.length > 0 ? list : undefined;
};

/**
 * Event envelope v1 (docs/design.md §4.2). In a run's event list and stream `sequence` is gap-free per run. In the public feed
 * (`GET /hecate/v1/events`, `/events/stream`) `sequence` is the feed position — pass the last one as `after_sequence`
 * (or `Last-Event-ID`) — and `run_sequence` is the run's sequence.
 */
@ApiSchema({ name: 'EventEnvelope' })
export class EventEnvelopeDto {
  @ApiProperty({ enum: [1] })
  schema_version!: 1;
  event_id!: string;
  task_id!: string;
  run_id!: string;
  session_id?: string;
  /** Per-run lists: the event's gap-free sequence in its run. Public feed: the feed position (`after_sequence` pages by it). */
  sequence!: number;
  /** Public feed only: the event's gap-free sequence in its run. */
  run_sequence?: number;
  /** The public feed's position as a decimal string (in the feed, equal to `sequence`). */
  cursor?: string;
  occurred_at!: string;
  type!: string;
  data!: Record<string, unknown>;
}

type _EnvelopeDocumented = Assert<Documents<EventEnvelopeDto, EventEnvelope>>;
