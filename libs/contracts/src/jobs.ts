/**
 * The job registry: every job name, the queue it lives on, and its payload type.
 * Producing a job is type-checked against this map; a worker refuses to boot if a job of a queue it
 * consumes has no handler or two (docs/style.md rule 3).
 */
export const QUEUE_NAMES = ['runs', 'system'] as const;
export type QueueName = (typeof QUEUE_NAMES)[number];

export interface JobPayloads {
  /** Platform self-check: proves api → queue → worker → bus end to end. */
  'system.echo': { token: string; sleepMs?: number; attempt?: number };
  /** Executes one task run; job id = run id (the run's lease in Postgres decides who owns it). */
  'run.execute': { runId: string; tenantId: string };
  /**
   * A request the api asks a worker to run and waits for (core/lease WorkerRequests): workspace operations, Agent Chat
   * reverts, MCP probes, agent adapter checks. The row `worker_requests.id` holds the kind and payload; the job carries ids only.
   */
  'worker.request': { requestId: string; tenantId: string };
  /** A worker request whose work belongs with the runs (opening an External Agent session's adapter, which its turns then use). */
  'worker.request.runs': { requestId: string; tenantId: string };
  /** One Agent Chat model turn on a worker; job id = turn id (the turn's lease in Postgres decides who owns it). */
  'agent_chat.turn': { turnId: string; tenantId: string };
}

export type JobName = keyof JobPayloads;

export const JOB_QUEUES: { readonly [K in JobName]: QueueName } = {
  'system.echo': 'system',
  'run.execute': 'runs',
  'worker.request': 'system',
  'worker.request.runs': 'runs',
  'agent_chat.turn': 'runs',
};

export const jobsOfQueue = (queue: QueueName): JobName[] => (Object.keys(JOB_QUEUES) as JobName[]).filter((name) => JOB_QUEUES[name] === queue);
