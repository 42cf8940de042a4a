import type { EventEnvelope } from '@contracts/events';
import type { EventRow } from './event-store.repository';

// The bus channels of one run's doorbells (`events.run.<id>`, RunBatchMessage) and of the public feed (`events.feed`,
// FeedBatchMessage, every tenant; subscribers filter) are in the registry, core/bus/channels.ts.

export function toEnvelope(row: EventRow): EventEnvelope {
  const envelope: EventEnvelope = {
    schema_version: 1,
    event_id: row.id,
    task_id: row.task_id ?? '',
    run_id: row.run_id,
    sequence: Number(row.sequence),
    occurred_at: new Date(row.occurred_at).toISOString(),
    type: row.type,
    data: row.data ?? {},
  };
  if (row.session_id) envelope.session_id = row.session_id;
  if (row.feed_cursor !== null && row.feed_cursor !== undefined) envelope.cursor = String(row.feed_cursor);
  return envelope;
}

/** Feed forms, computed once per envelope (a live batch's envelopes go to every feed subscriber). */
const feedForms = new WeakMap<EventEnvelope, EventEnvelope>();

/**
 * An envelope as the public feed shows it (docs/api.md §4: `after_sequence` is "the event sequence cursor, strictly
 * greater"): `sequence` is the feed cursor — the value to page and resume by — and the run's own gap-free sequence
 * moves to `run_sequence`. The per-run lists and streams keep `sequence` as the run's.
 */
export function feedEnvelope(e: EventEnvelope): EventEnvelope {
  let form = feedForms.get(e);
  if (!form) {
    form = { ...e, sequence: cursorOf(e), run_sequence: e.sequence };
    feedForms.set(e, form);
  }
  return form;
}

/** The public feed position of an envelope (0 when not stamped yet). */
export const cursorOf = (e: EventEnvelope): number => (e.cursor ? Number(e.cursor) : 0);

export const TERMINAL_RUN_EVENTS = new Set(['run.finished', 'run.failed', 'run.cancelled']);
