import { z } from 'zod';
import type { TaskRunChainsService } from '@modules/tasks';
import { defineTool, type McpTool } from './mcp-tool';
import { CancelRunArgs, ListRunEventsArgs, RunArgs } from './mcp-tool-args.dto';
import { run, runEvent, runId, taskId, text } from './mcp-shapes';

/** A task's runs: read one, page its events, cancel it. */
export function runTools(chains: TaskRunChainsService): McpTool[] {
  return [
    defineTool({
      name: 'get_run',
      title: 'Get a run',
      description: 'A run of a task: its status (queued, awaiting_approval, running, completed, failed, cancelled, timed_out), cost, error and times.',
      args: RunArgs,
      input: { task_id: taskId, run_id: runId },
      output: { run },
      annotations: { readOnlyHint: true, openWorldHint: false },
      run: async (a, { principal }) => ({ run: await chains.getRun(principal.tenantId, a.task_id, a.run_id) }),
    }),
    defineTool({
      name: 'list_run_events',
      title: 'List run events',
      description: "A page of a run's events in order (run.*, tool.*, approval.*, …). Pass next_after_sequence back as after_sequence for the next page.",
      args: ListRunEventsArgs,
      input: {
        task_id: taskId,
        run_id: runId,
        after_sequence: z.number().int().min(0).optional().describe('only events after this sequence (default 0: from the start)'),
        limit: z.number().int().min(1).max(500).optional().describe('at most this many (default 500)'),
      },
      output: { events: z.array(runEvent), next_after_sequence: z.number() },
      annotations: { readOnlyHint: true, openWorldHint: false },
      run: async (a, { principal }) => {
        const after = a.after_sequence ?? 0;
        const events = await chains.listRunEvents(principal.tenantId, a.task_id, a.run_id, after, a.limit ?? 500);
        return { events, next_after_sequence: events.at(-1)?.sequence ?? after };
      },
    }),
    defineTool({
      name: 'cancel_run',
      title: 'Cancel a run',
      description: 'Cancels a queued, waiting or running run (its pending approvals are cancelled with it). A finished run answers a conflict.',
      args: CancelRunArgs,
      input: { task_id: taskId, run_id: runId, reason: text(4000, 'why (recorded on the run)') },
      output: { run },
      annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: false },
      run: async (a, { principal, origin }) => ({ run: await chains.cancelRun(principal.tenantId, a.task_id, a.run_id, a.reason ?? '', origin) }),
    }),
  ];
}
