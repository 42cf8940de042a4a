import { ApiProperty, ApiSchema } from '@nestjs/swagger';
import type { Assert, Documents } from '@core/http/openapi';
import type { LiveDeltaFrame } from './live-frames';

/** A streamed model delta on a live stream (`event: delta`): text, reasoning, or a piece of a tool call. */
@ApiSchema({ name: 'LiveDeltaFrame' })
export class LiveDeltaFrameDto {
  content?: string;
  reasoning?: string;
  reasoning_signature?: string;
  /** OpenAI-style tool-call pieces: `{index, id?, type?, function: {name?, arguments?}}`. */
  @ApiProperty({ type: 'array', items: { type: 'object', additionalProperties: true } })
  tool_calls?: LiveDeltaFrame['tool_calls'];
}

/** A running tool's output on a live stream (`event: tool_progress`); `closed: true` ends the call's progress. */
@ApiSchema({ name: 'ToolProgressFrame' })
export class ToolProgressFrameDto {
  type!: 'tool_progress';
  tool_call_id!: string;
  text!: string;
  stream!: 'stdout' | 'stderr';
  closed!: boolean;
  /** Unix seconds. */
  ts!: number;
}

type _DeltaDocumented = Assert<Documents<LiveDeltaFrameDto, LiveDeltaFrame>>;
