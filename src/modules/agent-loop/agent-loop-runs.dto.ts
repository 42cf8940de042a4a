import { ApiSchema } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { IsInt, IsOptional, IsString, MaxLength, Min } from 'class-validator';

export class ContinueRunDto {
  @IsOptional() @IsString() @MaxLength(200_000) prompt?: string;
}

export class LiveQueryDto {
  /** Resume after this index of the run's live stream. */
  @IsOptional() @Type(() => Number) @IsInt() @Min(0) after?: number;
}

export class RetryFromTurnDto {
  @Type(() => Number) @IsInt() @Min(1) turn!: number;
  @IsOptional() @IsString() @MaxLength(4000) reason?: string;
}

/** The closing frame of a run's live stream; `resume_fallback` when the buffer had expired. */
@ApiSchema({ name: 'LiveStreamDone' })
export class LiveDoneFrameDto {
  run_id!: string;
  status!: string;
  resume_fallback?: boolean;
}
