import { useId, useState } from 'react';
import type { HecateClient } from '@hecate/sdk';
import { ErrorNotice } from '../../components/ErrorNotice';
import { useAction } from '../../components/useAction';
import type { TaskApproval } from './types';

const KIND_LABELS: Record<string, string> = {
  shell_command: 'Run a shell command',
  git_exec: 'Run a git command',
  file_write: 'Write a file',
  network_egress: 'Open network access',
  agent_loop_tool_call: 'Let the agent call a tool',
};

/**
 * A pending approval of the run (docs/api.md §4.4): exactly what would run — the summary, argv, cwd, env keys, a
 * tool's arguments — with Approve and Deny. What the worker dispatches is what was approved, so nothing here is
 * editable but the note.
 */
export function ApprovalBanner({ client, approval, onResolved }: { client: HecateClient; approval: TaskApproval; onResolved?: () => void }) {
  const [note, setNote] = useState('');
  const action = useAction();
  const headingId = useId();
  const noteId = useId();

  const resolve = (decision: 'approve' | 'reject') =>
    action.run(async () => {
      await client.post('/hecate/v1/tasks/{task_id}/approvals/{approval_id}/resolve', {
        path: { task_id: approval.task_id, approval_id: approval.id },
        body: { decision, ...(note.trim() ? { note: note.trim() } : {}) },
      });
      onResolved?.();
    });

  return (
    <section className="tasks-approval" aria-labelledby={headingId}>
      <h2 id={headingId}>Approval needed: {KIND_LABELS[approval.kind] ?? approval.kind}</h2>
      {approval.reason && <p>{approval.reason}</p>}
      {approval.action_summary.length > 0 && (
        <>
          <p className="tasks-label">What would run</p>
          <pre className="tasks-approval__summary">{approval.action_summary.join('\n')}</pre>
        </>
      )}
      <ApprovalDetails details={approval.details} />
      <div className="tasks-approval__decide">
        <label htmlFor={noteId}>Note (optional)</label>
        <input id={noteId} type="text" value={note} onChange={(e) => setNote(e.target.value)} maxLength={4000} disabled={action.busy} />
        <button type="button" onClick={() => void resolve('approve')} disabled={action.busy}>
          Approve
        </button>
        <button type="button" className="danger" onClick={() => void resolve('reject')} disabled={action.busy}>
          Deny
        </button>
      </div>
      <ErrorNotice error={action.error} title="The approval was not resolved" />
    </section>
  );
}

interface ToolCall {
  name?: string;
  arguments?: unknown;
}

/** The approval's details: the common fields by name, tool calls with their arguments, anything else as JSON. */
function ApprovalDetails({ details }: { details: Record<string, unknown> }) {
  const { tool_calls: toolCalls, ...rest } = details as { tool_calls?: ToolCall[] } & Record<string, unknown>;
  const entries = Object.entries(rest).filter(([, v]) => v !== undefined && v !== null && v !== '');
  return (
    <>
      {Array.isArray(toolCalls) && (
        <ol className="tasks-approval__calls" aria-label="Tool calls">
          {toolCalls.map((call, i) => (
            <li key={i}>
              <code>{call.name ?? 'tool'}</code>
              <pre>{prettyArguments(call.arguments)}</pre>
            </li>
          ))}
        </ol>
      )}
      {entries.length > 0 && (
        <dl className="tasks-dl">
          {entries.map(([k, v]) => (
            <div key={k}>
              <dt>{k === 'env_keys' ? 'Environment keys' : k.replace(/_/g, ' ')}</dt>
              <dd>
                <code>{detailText(k, v)}</code>
              </dd>
            </div>
          ))}
        </dl>
      )}
    </>
  );
}

/** A detail as text: env keys as a list of names, argv as JSON (its quoting matters), strings as they are. */
function detailText(key: string, value: unknown): string {
  if (key === 'env_keys' && Array.isArray(value)) return value.join(', ');
  return typeof value === 'string' ? value : JSON.stringify(value);
}

/** A tool call's arguments (a JSON string on the wire) pretty-printed when they parse. */
export function prettyArguments(args: unknown): string {
  if (typeof args !== 'string') return JSON.stringify(args ?? {}, null, 2);
  try {
    return JSON.stringify(JSON.parse(args), null, 2);
  } catch {
    return args;
  }
}
