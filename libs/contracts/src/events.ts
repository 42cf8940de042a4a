/**
 * Event envelope v1 (docs/design.md §4.2). In a run's lists and streams `sequence` is gap-free per run; in the public feed
 * (`/hecate/v1/events`) `sequence` is the feed position (what `after_sequence` pages by) and `run_sequence` the run's.
 * `cursor` is the public-feed position as a decimal string, wherever it is known.
 */
export interface EventEnvelope<TData = Record<string, unknown>> {
  schema_version: 1;
  event_id: string;
  task_id: string;
  run_id: string;
  session_id?: string;
  sequence: number;
  /** Public feed only: the event's gap-free sequence within its run. */
  run_sequence?: number;
  cursor?: string;
  occurred_at: string;
  type: string;
  data: TData;
}
