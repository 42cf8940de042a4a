/** Event envelope v1 (DESIGN §4.2). `sequence` is gap-free per run; `cursor` is the public-feed position. */
export interface EventEnvelope<TData = Record<string, unknown>> {
  schema_version: 1;
  event_id: string;
  task_id: string;
  run_id: string;
  session_id?: string;
  sequence: number;
  cursor?: string;
  occurred_at: string;
  type: string;
  data: TData;
}
