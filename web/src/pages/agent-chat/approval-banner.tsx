import { useId, useState } from 'react';
import type { HecateClient, Schemas } from '@hecate/sdk';
import type { ApprovalRequested, Message } from './chat-store';
import { ErrorNotice } from '../../components/ErrorNotice';
import { useResource } from '../../components/useResource';
import { useAction } from './util';

type Scope = 'once' | 'session' | 'workspace_tool' | 'adapter_tool';

const SCOPE_LABELS: Record<Scope, string> = {
  once: 'Only this call',
  session: 'This tool kind for the rest of this session',
  workspace_tool: 'This tool kind with this adapter in this workspace',
  adapter_tool: 'This tool kind with this adapter anywhere',
};

/**
 * The approvals a running turn waits on: from the stream's `approval.requested` frames, and — when those are no
 * longer in the live buffer — from the running reply's pending `approval` activity (`needs_action`,
 * docs/agent-chat-approvals.md), unless the stream already said it was decided.
 */
export function pendingApprovals(
  pending: ApprovalRequested[],
  resolved: Array<{ approval_id: string }>,
  running: Message | undefined,
  sessionId: string,
): ApprovalRequested[] {
  const out = [...pending];
  const decided = new Set(resolved.map((r) => r.approval_id));
  for (const a of running?.activities ?? []) {
    if (a.type !== 'approval' || !a.needs_action || !a.approval_id || decided.has(a.approval_id) || out.some((p) => p.approval_id === a.approval_id)) continue;
    const m = running!;
    out.push({
      type: 'approval.requested',
      approval_id: a.approval_id,
      session_id: sessionId,
      turn_id: m.turn_id,
      task_id: m.runtime_kind === 'external_agent' ? null : (m.task_id ?? null),
      run_id: m.run_id ?? null,
      adapter_id: m.adapter_id ?? null,
      kind: null,
      tool_kind: 'other',
      tool_name: a.detail ?? a.title,
      scope_choices: ['once'],
      created_at: a.created_at ?? null,
      expires_at: null,
    } as ApprovalRequested);
  }
  return out;
}

/** What exactly would run: a task approval's action summary, or an External Agent's request and its options. */
function ApprovalDetail({ client, approval }: { client: HecateClient; approval: ApprovalRequested }) {
  const { data } = useResource(async () => {
    if (approval.task_id) {
      const r = await client.get('/hecate/v1/tasks/{task_id}/approvals/{approval_id}', {
        path: { task_id: approval.task_id, approval_id: approval.approval_id },
      });
      return { lines: (r.data as Schemas['TaskApproval']).action_summary, reason: (r.data as Schemas['TaskApproval']).reason };
    }
    const r = await client.get('/hecate/v1/agent-chat/sessions/{session_id}/approvals/{approval_id}', {
      path: { session_id: approval.session_id!, approval_id: approval.approval_id },
    });
    const a = r.data as Schemas['AgentChatApproval'];
    return { lines: [`${a.tool_name} in ${a.workspace}`, ...a.options.map((o) => `option: ${o.name}`)], reason: '' };
  }, [client, approval.approval_id]);
  if (!data) return null;
  return (
    <div className="chat-approval-detail">
      {data.reason ? <p>{data.reason}</p> : null}
      {data.lines.length ? (
        <ul>
          {data.lines.map((l, i) => (
            <li key={i}>
              <code>{l}</code>
            </li>
          ))}
        </ul>
      ) : null}
    </div>
  );
}

function OneApproval({ client, approval }: { client: HecateClient; approval: ApprovalRequested }) {
  const id = useId();
  const choices = (approval.scope_choices.length ? approval.scope_choices : ['once']) as Scope[];
  const [scope, setScope] = useState<Scope>(choices[0]);
  const [expires, setExpires] = useState('');
  const decide = useAction();
  const [sent, setSent] = useState<string>();

  async function resolve(decision: 'approve' | 'deny') {
    const ok = await decide.run(async () => {
      if (approval.task_id) {
        await client.post('/hecate/v1/tasks/{task_id}/approvals/{approval_id}/resolve', {
          path: { task_id: approval.task_id, approval_id: approval.approval_id },
          body: { decision: decision === 'approve' ? 'approve' : 'reject' },
        });
      } else {
        await client.post('/hecate/v1/agent-chat/sessions/{session_id}/approvals/{approval_id}/resolve', {
          path: { session_id: approval.session_id!, approval_id: approval.approval_id },
          body: { decision, scope, ...(scope !== 'once' && expires ? { grant_expires_at: new Date(expires).toISOString() } : {}) },
        });
      }
      return true;
    });
    if (ok) setSent(decision === 'approve' ? 'Approved' : 'Denied');
  }

  return (
    <section className="chat-approval" role="region" aria-labelledby={`${id}-h`}>
      <h3 id={`${id}-h`}>
        Approval required: <code>{approval.tool_name}</code> <span className="chat-chip">{approval.tool_kind}</span>
      </h3>
      <ApprovalDetail client={client} approval={approval} />
      {choices.length > 1 ? (
        <fieldset>
          <legend>Remember this decision for</legend>
          {choices.map((c) => (
            <label key={c} className="chat-radio">
              <input type="radio" name={`${id}-scope`} checked={scope === c} onChange={() => setScope(c)} />
              {SCOPE_LABELS[c] ?? c}
            </label>
          ))}
          {scope !== 'once' ? (
            <label>
              Grant expires (optional)
              <input type="datetime-local" value={expires} onChange={(e) => setExpires(e.target.value)} />
            </label>
          ) : null}
        </fieldset>
      ) : null}
      {approval.expires_at ? <p className="muted">Times out at {new Date(approval.expires_at).toLocaleTimeString()}.</p> : null}
      {decide.error ? <ErrorNotice error={decide.error} title="The decision was not taken" /> : null}
      {sent ? <p role="status">{sent}; waiting for the agent to go on…</p> : null}
      <div className="chat-actions">
        <button type="button" className="chat-approve" disabled={decide.busy || !!sent} onClick={() => void resolve('approve')}>
          Approve
        </button>
        <button type="button" className="chat-deny" disabled={decide.busy || !!sent} onClick={() => void resolve('deny')}>
          Deny
        </button>
      </div>
    </section>
  );
}

/** The approval banner: one card per approval the running turn waits on, approve or deny (with a scope where offered). */
export function ApprovalBanner({ client, approvals }: { client: HecateClient; approvals: ApprovalRequested[] }) {
  // Always in the page, so an approval appearing in it is announced (a live region must exist before its content).
  return (
    <div className="chat-approvals" aria-live="assertive">
      {approvals.map((a) => (
        <OneApproval key={a.approval_id} client={client} approval={a} />
      ))}
    </div>
  );
}
