/**
 * The job registry: every job name, the queue it lives on, and its payload type.
 * Producing a job is type-checked against this map; a worker refuses to boot if a job of a queue it
 * consumes has no handler or two (STYLE rule 3).
 */
export const QUEUE_NAMES = ['runs', 'system'] as const;
export type QueueName = (typeof QUEUE_NAMES)[number];

export interface JobPayloads {
  /** Platform self-check: proves api → queue → worker → bus end to end. */
  'system.echo': { token: string; sleepMs?: number; attempt?: number };
  /** Executes one task run; job id = run id (the run's lease in Postgres decides who owns it). */
  'run.execute': { runId: string; tenantId: string };
  /**
   * `POST /hecate/v1/mcp/probe` run on a worker: the worker claims it over the bus and receives the server entry
   * there (env and header values may be literal secrets, so they never ride in a job payload).
   */
  'mcp.probe': { probeId: string; tenantId: string };
  /** One Agent Chat model turn on a worker; job id = turn id (the turn's lease in Postgres decides who owns it). */
  'agent_chat.turn': { turnId: string; tenantId: string };
  /** Reverts files of an Agent Chat message's captured diff in its workspace (workspaces are opened on workers only). */
  'agent_chat.revert': { revertId: string; tenantId: string };
  /** Opens an External Agent session's adapter on a worker (initialize + session/new); the api waits on the session row. */
  'agent_chat.adapter_open': { sessionId: string; tenantId: string };
  /** A workspace operation the api waits for (checks, patch apply/revert, removal): the api never opens a workspace. */
  'workspace.op': { opId: string; tenantId: string };
  /** `/hecate/v1/agent-adapters` asks a worker (discovery, version, probes spawn adapters there); the answer rides the bus. */
  'agent_adapters.request': { requestId: string; action: 'list' | 'health' | 'probe' | 'refresh'; adapterId?: string };
}

export type JobName = keyof JobPayloads;

export const JOB_QUEUES: { readonly [K in JobName]: QueueName } = {
  'system.echo': 'system',
  'run.execute': 'runs',
  'mcp.probe': 'system',
  'agent_chat.turn': 'runs',
  'agent_chat.revert': 'system',
  'agent_chat.adapter_open': 'runs',
  'agent_adapters.request': 'system',
  'workspace.op': 'system',
};

export const jobsOfQueue = (queue: QueueName): JobName[] => (Object.keys(JOB_QUEUES) as JobName[]).filter((name) => JOB_QUEUES[name] === queue);
