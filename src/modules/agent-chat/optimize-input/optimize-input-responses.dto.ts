import { ApiProperty, ApiSchema } from '@nestjs/swagger';
import type { Assert, Documents } from '@core/http/openapi';
import { TraceUsageDto } from '@modules/inference';
import type { OptimizedInput, OptimizeInputLine, OptimizeInputLineError } from './optimize-input.service';

/** Answers of `POST /hecate/v1/agent-chat/optimize-input[/stream]`, checked against what the service returns. */

/** The rewrite (`data` of the structured answer; the stream's `done` line carries the same fields). */
@ApiSchema({ name: 'OptimizedInput' })
export class OptimizedInputDto {
  success!: true;
  optimized_input!: string;
  request_id!: string;
  provider!: string;
  model!: string;
  route_reason!: string;
  stop_reason!: string | null;
  usage!: TraceUsageDto;
  cost_micros_usd!: number;
  cost_usd!: string;
}

/** First line of the stream, once the upstream answered: where the call went. */
@ApiSchema({ name: 'OptimizeInputStartLine' })
export class OptimizeInputStartLineDto {
  @ApiProperty({ enum: ['start'] }) type!: 'start';
  request_id!: string;
  provider!: string;
  model!: string;
  /** Unix seconds. */
  timestamp!: number;
}

/** A piece of the rewrite (the live streams' `delta.content`). */
@ApiSchema({ name: 'OptimizeInputDeltaLine' })
export class OptimizeInputDeltaLineDto {
  @ApiProperty({ enum: ['delta'] }) type!: 'delta';
  content!: string;
  timestamp!: number;
}

/** Last line of a completed stream: the whole rewrite, its route, usage and cost. */
@ApiSchema({ name: 'OptimizeInputDoneLine' })
export class OptimizeInputDoneLineDto extends OptimizedInputDto {
  @ApiProperty({ enum: ['done'] }) type!: 'done';
  timestamp!: number;
}

@ApiSchema({ name: 'OptimizeInputLineError' })
export class OptimizeInputLineErrorDto {
  /** The stable error `type` of the error envelope (e.g. `upstream_error`, `upstream_timeout`). */
  type!: string;
  message!: string;
  user_message!: string;
  operator_action!: string;
  request_id!: string;
  trace_id?: string;
}

/** Last line of a stream the upstream broke after it started (errors before the first line answer the JSON envelope). */
@ApiSchema({ name: 'OptimizeInputErrorLine' })
export class OptimizeInputErrorLineDto {
  @ApiProperty({ enum: ['error'] }) type!: 'error';
  error!: OptimizeInputLineErrorDto;
  timestamp!: number;
}

export const OPTIMIZE_INPUT_LINES = [OptimizeInputStartLineDto, OptimizeInputDeltaLineDto, OptimizeInputDoneLineDto, OptimizeInputErrorLineDto];

type Line<T extends OptimizeInputLine['type']> = Extract<OptimizeInputLine, { type: T }>;
type _ResultDocumented = Assert<Documents<OptimizedInputDto, OptimizedInput>>;
type _StartDocumented = Assert<Documents<OptimizeInputStartLineDto, Line<'start'>>>;
type _DeltaDocumented = Assert<Documents<OptimizeInputDeltaLineDto, Line<'delta'>>>;
type _DoneDocumented = Assert<Documents<OptimizeInputDoneLineDto, Line<'done'>>>;
type _ErrorDocumented = Assert<Documents<OptimizeInputErrorLineDto, Line<'error'>>>;
type _ErrorFieldsDocumented = Assert<Documents<OptimizeInputLineErrorDto, OptimizeInputLineError>>;
