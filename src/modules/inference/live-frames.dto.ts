import { ApiProperty, ApiSchema } from '@nestjs/swagger';
import type { Assert, Documents } from '@core/http/openapi';
import type { LiveDeltaFrame, LiveResetFrame } from './live-frames';

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

/**
 * A model call made again from the start after a takeover (`event: reset`): drop the `delta` frames from `from_index` on
 * (their text, reasoning and tool-call pieces); the deltas that follow are the reply anew.
 */
@ApiSchema({ name: 'LiveResetFrame' })
export class LiveResetFrameDto {
  type!: 'reset';
  from_index!: number;
  reason!: 'restarted';
}

type _ResetDocumented = Assert<Documents<LiveResetFrameDto, LiveResetFrame>>;
type _DeltaDocumented = Assert<Documents<LiveDeltaFrameDto, LiveDeltaFrame>>;
