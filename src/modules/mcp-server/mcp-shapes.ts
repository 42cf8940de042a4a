import { z } from 'zod';

/**
 * The resources tools answer with, as zod schemas for tools/list's `outputSchema`: the fields a client relies on, typed;
 * objects stay open (`looseObject`) because the API adds fields without a new version (docs/api.md §4 "additive changes").
 */

const optional = z.string().optional();

export const task = z.looseObject({
  id: z.string(),
  title: z.string(),
  prompt: z.string(),
  execution_kind: z.string(),
  status: z.string(),
  latest_run_id: optional,
  last_error: optional,
  created_at: z.string(),
  updated_at: z.string(),
  started_at: optional,
  finished_at: optional,
});

export const run = z.looseObject({
  id: z.string(),
  task_id: z.string(),
  number: z.number(),
  status: z.string().describe('queued, awaiting_approval, running, completed, failed, cancelled or timed_out'),
  execution_kind: z.string(),
  attempts: z.number(),
  total_cost_micros_usd: z.number(),
  last_error: optional,
  error_kind: optional,
  workspace_path: optional,
  created_at: z.string(),
  updated_at: z.string(),
  started_at: optional,
  finished_at: optional,
});

export const runEvent = z.looseObject({
  schema_version: z.number(),
  event_id: z.string(),
  task_id: z.string(),
  run_id: z.string(),
  sequence: z.number().describe('gap-free per run, from 1'),
  occurred_at: z.string(),
  type: z.string(),
  data: z.record(z.string(), z.unknown()),
});

export const taskApproval = z.looseObject({
  id: z.string(),
  task_id: z.string(),
  run_id: z.string(),
  kind: z.string(),
  status: z.string().describe('pending, approved, rejected or cancelled'),
  reason: z.string(),
  action_summary: z.array(z.string()).describe('what will run, for the reviewer'),
  details: z.record(z.string(), z.unknown()),
  resolution_note: optional,
  created_at: z.string(),
  resolved_at: optional,
});

export const agentChatApproval = z.looseObject({
  id: z.string(),
  session_id: z.string(),
  turn_id: z.string().nullable(),
  adapter_id: z.string(),
  tool_kind: z.string(),
  tool_name: z.string(),
  status: z.string(),
  scope_choices: z.array(z.string()),
  created_at: z.string().nullable(),
  expires_at: z.string().nullable(),
});

export const chatSession = z.looseObject({
  id: z.string(),
  title: z.string(),
  message_count: z.number(),
  provider_call_count: z.number(),
  active_leaf_id: z.string().nullable(),
  last_model: z.string(),
  last_provider: z.string(),
  canonical_visible_session_id: z.string(),
  pre_compression_snapshot: z.boolean(),
  created_at: z.string(),
  updated_at: z.string(),
});

export const chatMessage = z.looseObject({ id: z.string(), sequence: z.number(), parent_id: z.string().nullable(), role: z.string(), status: z.string() });

export const chatSessionWithMessages = chatSession.extend({
  view: z.enum(['active_path', 'tree']),
  messages: z.array(chatMessage),
  provider_calls: z.array(z.looseObject({ id: z.string(), model: z.string(), status: z.string() })),
});

export const agentChatTurn = z.looseObject({
  id: z.string(),
  runtime_kind: z.string(),
  status: z.string().describe('queued, running, completed, failed, cancelled, …'),
  user_message_id: z.string(),
  assistant_message_id: z.string(),
  task_id: optional,
  run_id: optional,
});

export const agentChatMessage = z.looseObject({ id: z.string(), role: z.string(), status: z.string(), content: z.string() });

export const agentChatQueueItem = z.looseObject({ id: z.string(), session_id: z.string(), status: z.string(), content: z.string() });

/** Input fields several tools share. */
export const taskId = z.string().describe('the task id (task_…)');
export const runId = z.string().describe('the run id (run_…)');
export const text = (max: number, what: string) => z.string().max(max).optional().describe(what);
