import { memo, useId, useState } from 'react';
import type { HecateClient } from '@hecate/sdk';
import type { Message, Session, ToolActivity } from './chat-store';
import { ChangedFiles } from './changed-files';
import { TurnMeta } from './turn-meta';
import { ErrorNotice } from '../../components/ErrorNotice';
import { runtimeLabel, useAction } from './util';

export interface MessageItemProps {
  client: HecateClient;
  sessionId: string;
  message: Message;
  /** The first message of its segment: the runtime boundary is drawn above it. */
  segmentStart: boolean;
  /** The last user message that counts (edit and rerun apply to it). */
  lastUser: boolean;
  latestAssistant: boolean;
  /** The reply streaming now (announced politely, its tools' output shown). */
  streaming: boolean;
  tools: ToolActivity[];
  busy: boolean;
  /** An External Agent's name for a reply that has none yet (a running one: its adapter fields come when it ends). */
  agentName: string;
  onSession: (s: Session) => void;
}

/** "tools off with smollm2" → "tools on with qwen2.5-coder": where the runtime of the transcript changes (docs/api.md §4.7 segments). */
function SegmentBoundary({ m }: { m: Message }) {
  const target = m.runtime_kind === 'external_agent' ? (m.adapter_name ?? m.adapter_id) : [m.provider, m.model].filter(Boolean).join('/');
  return (
    <div className="chat-segment">
      <span>
        {runtimeLabel(m.runtime_kind)}
        {target ? ` · ${target}` : ''}
        {m.task_id ? ` · task ${m.task_id}` : ''}
      </span>
    </div>
  );
}

/** Edit the last user message in place (its answers become superseded), then rerun it; or rerun it as it is. */
function LastUserActions({
  client,
  sessionId,
  message,
  onSession,
}: {
  client: HecateClient;
  sessionId: string;
  message: Message;
  onSession: (s: Session) => void;
}) {
  const id = useId();
  const [editing, setEditing] = useState(false);
  const [draft, setDraft] = useState(message.content);
  const act = useAction();
  const path = { session_id: sessionId };
  const rerun = () => act.run(() => client.post('/hecate/v1/agent-chat/sessions/{session_id}/rerun', { path, body: { wait: false } }));
  async function saveAndRerun() {
    const edited = await act.run(
      async () => (await client.post('/hecate/v1/agent-chat/sessions/{session_id}/edit-last-user-message', { path, body: { content: draft } })).data,
    );
    if (!edited) return;
    onSession(edited as Session);
    setEditing(false);
    await rerun();
  }
  return (
    <div className="chat-msg-actions">
      {editing ? (
        <>
          <label htmlFor={`${id}-edit`}>Edit the last message</label>
          <textarea id={`${id}-edit`} value={draft} rows={3} onChange={(e) => setDraft(e.target.value)} />
          <button type="button" disabled={act.busy || !draft.trim()} onClick={() => void saveAndRerun()}>
            Save and rerun
          </button>
          <button type="button" onClick={() => setEditing(false)}>
            Cancel
          </button>
        </>
      ) : (
        <>
          <button
            type="button"
            onClick={() => {
              setDraft(message.content);
              setEditing(true);
            }}
          >
            Edit
          </button>
          <button type="button" disabled={act.busy} onClick={() => void rerun()}>
            Rerun
          </button>
        </>
      )}
      {act.error ? <ErrorNotice error={act.error} /> : null}
    </div>
  );
}

function Activities({ m }: { m: Message }) {
  const list = (m.activities ?? []).filter((a) => a.type !== 'started' && a.type !== 'completed');
  if (list.length === 0) return null;
  return (
    <ul className="chat-activities" aria-label="Activity">
      {list.map((a, i) => (
        <li key={i} className={`chat-activity chat-activity-${a.status}`}>
          <span className="chat-chip">{a.status}</span> {a.title}
          {a.detail ? <span className="muted"> — {a.detail}</span> : null}
        </li>
      ))}
    </ul>
  );
}

function MessageItemInner(props: MessageItemProps) {
  const { client, sessionId, message: m, segmentStart, lastUser, latestAssistant, streaming, tools, busy, agentName, onSession } = props;
  const user = m.role === 'user';
  const guidance = user && typeof m.metadata?.guidance_id === 'string';
  const filesChanged = !!m.diff_stat || (m.activities ?? []).some((a) => a.type === 'files_changed');
  const who = user ? (guidance ? 'Guidance' : 'You') : m.runtime_kind === 'external_agent' ? (m.adapter_name ?? agentName) : 'Assistant';
  return (
    <>
      {segmentStart ? <SegmentBoundary m={m} /> : null}
      <article className={`chat-msg chat-msg-${m.role}${m.status === 'superseded' ? ' chat-msg-superseded' : ''}`} aria-label={`${who}, ${m.status}`}>
        <header>
          <span className="chat-who">{who}</span>
          <span className="chat-chip">{m.status}</span>
          {!user && m.capabilities?.tool_calling ? <span className="chat-chip">tools: {m.capabilities.tool_calling}</span> : null}
          {m.created_at ? <time dateTime={m.created_at}>{new Date(m.created_at).toLocaleTimeString()}</time> : null}
        </header>
        <div className="chat-content" aria-busy={streaming || undefined}>
          {m.content || (streaming ? <span className="muted">…</span> : null)}
        </div>
        {m.error ? (
          <p className="chat-error-inline">
            {m.error.message} <code>{m.error.type}</code>
          </p>
        ) : null}
        {!user ? <Activities m={m} /> : null}
        {streaming && tools.length ? (
          <div className="chat-tools">
            {tools.map((t) => (
              <div key={t.id}>
                <span className="chat-chip">{t.status}</span> {t.title}
                {t.output ? (
                  <pre tabIndex={0} aria-label={`Output of ${t.title}`}>
                    {t.output}
                  </pre>
                ) : null}
              </div>
            ))}
          </div>
        ) : null}
        {!user && filesChanged && !streaming ? <ChangedFiles client={client} sessionId={sessionId} messageId={m.id} diffStat={m.diff_stat} /> : null}
        {!user && !streaming ? <TurnMeta client={client} message={m} latest={latestAssistant} /> : null}
        {lastUser && !busy && !guidance ? <LastUserActions client={client} sessionId={sessionId} message={m} onSession={onSession} /> : null}
      </article>
    </>
  );
}

/** A transcript row; re-rendered only when its message (or its role in the transcript) changes. */
export const MessageItem = memo(MessageItemInner);
