import { Injectable } from '@nestjs/common';
import type { EventEnvelope } from '@contracts/events';
import { TERMINAL_RUN_EVENTS } from '@modules/events';
import { EventStreams } from '@modules/events';
import { replayThenTail } from '@modules/events';
import { renderFrame, sseFailure, type SseOpener, type SseStream } from '@core/http/sse';
import { isTerminal } from './run-status';
import { RunQueriesService } from './run-queries.service';
import { RunSnapshot, RunSnapshotsService } from './run-snapshots.service';

/** Events that change none of run, steps, artifacts, approvals: their frames reuse the last snapshot. */
const STATE_NEUTRAL = new Set(['tool.shell.output_chunk', 'external.event']);

const envelopeJson = new WeakMap<EventEnvelope, string>();
const jsonOf = (e: EventEnvelope): string => {
  let text = envelopeJson.get(e);
  if (!text) {
    text = JSON.stringify(e);
    envelopeJson.set(e, text);
  }
  return text;
};

/** `data` of a per-run frame: the event, the state after it, and the compact activity. */
const frameData = (e: EventEnvelope, snapshot: RunSnapshot, terminal: boolean): string =>
  `{"object":"task_run_stream_event","data":{"sequence":${e.sequence},"event_type":${JSON.stringify(e.type)},"terminal":${terminal},"event":${jsonOf(e)},${snapshot.json}}}`;

/**
 * Subscribers of one run share the live envelope (one bus message) and the snapshot: the rendered frame is
 * built once per (event, snapshot) for all of them.
 */
const renderedFrames = new WeakMap<EventEnvelope, { snapshot: RunSnapshot; text: string }>();
const snapshotFrame = (e: EventEnvelope, snapshot: RunSnapshot, terminal: boolean): string => {
  const hit = renderedFrames.get(e);
  if (hit && hit.snapshot === snapshot) return hit.text;
  const text = renderFrame({ id: e.sequence, event: 'snapshot', data: frameData(e, snapshot, terminal) });
  renderedFrames.set(e, { snapshot, text });
  return text;
};

/**
 * `GET /hecate/v1/tasks/{task_id}/runs/{run_id}/stream` (docs/api.md §4): replay from Postgres after the cursor,
 * then tail; each event is one `snapshot` frame (`id:` = sequence); the terminal event is followed by
 * `event: done` and the stream closes.
 */
@Injectable()
export class RunStreamService {
  constructor(
    private readonly queries: RunQueriesService,
    private readonly streams: EventStreams,
    private readonly snapshots: RunSnapshotsService,
  ) {}

  async serve(open: SseOpener, tenantId: string, taskId: string, runId: string, after: number): Promise<void> {
    await this.queries.requireRun(tenantId, taskId, runId);
    const sse = open();
    const source = this.streams.runSource(tenantId, runId);
    // The replay asked for goes at the client's pace; live frames and later refills keep the slow-consumer bound.
    const send = async (events: EventEnvelope[], replay: boolean): Promise<boolean> => {
      const changing = events.filter((e) => !STATE_NEUTRAL.has(e.type));
      const snapshot = await (changing.length === 0
        ? (this.snapshots.cached(tenantId, runId) ?? this.snapshots.get(tenantId, runId, events[events.length - 1].sequence))
        : this.snapshots.get(tenantId, runId, changing[changing.length - 1].sequence));
      for (const e of events) {
        const terminal = TERMINAL_RUN_EVENTS.has(e.type);
        const frame = snapshotFrame(e, snapshot, terminal);
        if (!(replay ? await sse.paced(frame) : sse.write(frame))) return false;
        if (terminal) return done(sse, e, snapshot);
      }
      return true;
    };
    try {
      await replayThenTail(source, {
        after,
        closed: sse.closed,
        deliver: send,
        replayed: (n) => sse.replayed(n),
        // Already terminal and nothing left to replay: the terminal frame was delivered before (or is
        // delivered now, if it committed during the replay); finish with `done`.
        onCaughtUp: async (position) => {
          const run = await this.queries.requireRun(tenantId, taskId, runId);
          if (!isTerminal(run.status)) return true;
          const rest = await source.read(position);
          if (rest.items.length > 0) return send(rest.items, true);
          const snapshot = await this.snapshots.get(tenantId, runId, position);
          sse.write(
            renderFrame({
              id: position,
              event: 'done',
              data: `{"object":"task_run_stream_event","data":{"sequence":${position},"terminal":true,${snapshot.json}}}`,
            }),
          );
          return false;
        },
      });
    } catch (err) {
      sseFailure(sse, err);
    }
    sse.end();
  }
}

function done(sse: SseStream, e: EventEnvelope, snapshot: RunSnapshot): false {
  sse.write(renderFrame({ id: e.sequence, event: 'done', data: frameData(e, snapshot, true) }));
  return false;
}
