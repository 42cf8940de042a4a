import type { InferenceDelta } from './protocol/normalized';

/**
 * One streamed delta as clients of a live stream see it (docs/api.md §3 and §5 `delta` frames): what LiveStreamBuffer holds
 * under the stream's index, and what a stop rebuilds a dead owner's partial reply from.
 */
export interface LiveDeltaFrame {
  content?: string;
  reasoning?: string;
  reasoning_signature?: string;
  tool_calls?: Array<{ index: number; id?: string; type?: 'function'; function: { name?: string; arguments?: string } }>;
}

/** A router delta as a live frame (usage, stop and message_start are not forwarded). */
export function liveFrameOf(d: InferenceDelta): LiveDeltaFrame | undefined {
  switch (d.type) {
    case 'text_delta':
      return { content: d.text };
    case 'thinking_delta':
      return { reasoning: d.thinking };
    case 'thinking_signature':
      return { reasoning_signature: d.signature };
    case 'tool_call_start':
      return { tool_calls: [{ index: d.index, id: d.id, type: 'function', function: { name: d.name, arguments: '' } }] };
    case 'tool_call_delta':
      return { tool_calls: [{ index: d.index, function: { arguments: d.arguments } }] };
    default:
      return undefined;
  }
}

/**
 * `event: reset` on a live stream (docs/takeover.md): a model call re-made after a takeover answers anew, so the model
 * output a client showed from this stream's `delta` frames at index ≥ `from_index` is discarded; the deltas after the
 * reset are the reply anew. Stored in the buffer like any frame, so a client resuming later gets it too.
 */
export interface LiveResetFrame {
  type: 'reset';
  from_index: number;
  reason: 'restarted';
}

export const resetFrame = (fromIndex: number): LiveResetFrame => ({ type: 'reset', from_index: fromIndex, reason: 'restarted' });
