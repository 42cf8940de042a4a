import { Type } from 'class-transformer';
import { IsInt, IsOptional, IsString, Max, Min } from 'class-validator';

/** Query of `GET /hecate/v1/events` and `/events/stream` (seed 003 "Public events feed"). */
export class EventFeedQueryDto {
  /** Comma-separated event types (OR). */
  @IsOptional() @IsString() event_type?: string;
  @IsOptional() @IsString() task_id?: string;
  /** The feed cursor to read after (strictly greater); validated by parseCursor. */
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
