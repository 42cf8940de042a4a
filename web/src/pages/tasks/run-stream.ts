import { useCallback, useEffect, useRef, useState } from 'react';
import type { HecateClient, RunLiveDone, RunLiveFrame, RunStreamFrame } from '@hecate/sdk';
import type { RunFrame } from './types';

/** A run of one stream's output, as it arrived. */
export interface OutputChunk {
  stream: 'stdout' | 'stderr';
  text: string;
}

export interface RunStreamState {
  /** The run's state after the last event: run, steps, artifacts, approvals and the compact activity. */
  snapshot: RunFrame | undefined;
  /** The commands' output in event order, adjacent pieces of one stream merged. */
  output: OutputChunk[];
  /** Output left out from the front to bound the page (the artifacts keep all of it). */
  trimmedBytes: number;
  /** The run sequence of the last event delivered. */
  sequence: number;
  /** The stream said `done`: the run is terminal. */
  ended: boolean;
  error: unknown;
}

/** Output the page keeps per run; older text is dropped from the front (stdout/stderr artifacts have the capture). */
const MAX_OUTPUT_CHARS = 512 * 1024;

export const emptyRunStream = (): RunStreamState => ({ snapshot: undefined, output: [], trimmedBytes: 0, sequence: 0, ended: false, error: undefined });

/** One frame of the run stream folded into the state: each event counts once, by its sequence. */
export function foldRunFrame(state: RunStreamState, frame: RunStreamFrame): RunStreamState {
  const next: RunStreamState = { ...state, snapshot: frame.data, ended: state.ended || frame.event === 'done', error: undefined };
  if (frame.event === 'done' && !frame.data.event) return next;
  if (frame.sequence <= state.sequence) return next;
  next.sequence = frame.sequence;
  const event = frame.data.event;
  if (event?.type !== 'tool.shell.output_chunk') return next;
  const data = event.data as { stream?: string; data?: unknown };
  if (typeof data.data !== 'string' || data.data === '') return next;
  const stream = data.stream === 'stderr' ? 'stderr' : 'stdout';
  const output = [...state.output];
  const last = output[output.length - 1];
  if (last?.stream === stream) output[output.length - 1] = { stream, text: last.text + data.data };
  else output.push({ stream, text: data.data });
  return trim({ ...next, output });
}

function trim(state: RunStreamState): RunStreamState {
  let total = state.output.reduce((n, c) => n + c.text.length, 0);
  if (total <= MAX_OUTPUT_CHARS) return state;
  const output = [...state.output];
  let trimmed = state.trimmedBytes;
  while (total > MAX_OUTPUT_CHARS && output.length > 0) {
    const over = total - MAX_OUTPUT_CHARS;
    if (output[0].text.length <= over) {
      total -= output[0].text.length;
      trimmed += output[0].text.length;
      output.shift();
    } else {
      output[0] = { ...output[0], text: output[0].text.slice(over) };
      total -= over;
      trimmed += over;
    }
  }
  return { ...state, output, trimmedBytes: trimmed };
}

/**
 * The run's stream (`client.streams.run`, docs/api.md §4.5): every event after the last one seen, once, in order. The
 * SDK resumes a dropped connection from its cursor; a page opened again replays the run from its first event, so the
 * output shown is whole and nothing in it repeats. `reconnect()` starts again after the last event delivered.
 */
export function useRunStream(client: HecateClient, taskId: string, runId: string): RunStreamState & { reconnect(): void } {
  const [state, setState] = useState<RunStreamState>(emptyRunStream);
  const [attempt, setAttempt] = useState(0);
  const sequence = useRef(0);
  sequence.current = state.sequence;

  useEffect(() => {
    const abort = new AbortController();
    void (async () => {
      try {
        for await (const frame of client.streams.run(taskId, runId, { signal: abort.signal, afterSequence: sequence.current })) {
          setState((s) => foldRunFrame(s, frame));
        }
      } catch (error) {
        if (!abort.signal.aborted) setState((s) => ({ ...s, error }));
      }
    })();
    return () => abort.abort();
  }, [client, taskId, runId, attempt]);

  const reconnect = useCallback(() => setAttempt((n) => n + 1), []);
  return { ...state, reconnect };
}

export interface LiveTextState {
  /** Model text streamed so far, by live-stream index. */
  parts: Array<{ index: number; text: string }>;
  done: RunLiveDone | undefined;
  error: unknown;
}

const emptyLive = (): LiveTextState => ({ parts: [], done: undefined, error: undefined });

/**
 * One frame of an agent_loop run's live stream folded into the model text: content deltas are appended (a delta with
 * a `type` is guidance or a receipt, not model text); `reset` drops the deltas from its `from_index` on (a model
 * call made again after a takeover, docs/takeover.md).
 */
export function foldLiveFrame(state: LiveTextState, frame: RunLiveFrame): LiveTextState {
  switch (frame.event) {
    case 'delta':
      if (frame.data.type !== undefined || typeof frame.data.content !== 'string' || frame.data.content === '') return state;
      return { ...state, parts: [...state.parts, { index: frame.id, text: frame.data.content }] };
    case 'reset':
      return { ...state, parts: state.parts.filter((p) => p.index < frame.data.from_index) };
    case 'done':
      return { ...state, done: frame.data };
    default:
      return state;
  }
}

/** The model's reply text of an agent_loop run as it streams (`client.streams.live`); whole again after a reload. */
export function useLiveText(client: HecateClient, taskId: string, runId: string, enabled: boolean): LiveTextState & { text: string } {
  const [state, setState] = useState<LiveTextState>(emptyLive);
  useEffect(() => {
    if (!enabled) return;
    const abort = new AbortController();
    setState(emptyLive());
    void (async () => {
      try {
        for await (const frame of client.streams.live(taskId, runId, { signal: abort.signal })) setState((s) => foldLiveFrame(s, frame));
      } catch (error) {
        if (!abort.signal.aborted) setState((s) => ({ ...s, error }));
      }
    })();
    return () => abort.abort();
  }, [client, taskId, runId, enabled]);
  return { ...state, text: state.parts.map((p) => p.text).join('') };
}
