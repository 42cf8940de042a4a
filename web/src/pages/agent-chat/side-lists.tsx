import { useId, useState, type ReactNode } from 'react';
import type { HecateClient, Schemas } from '@hecate/sdk';
import { ErrorNotice } from '../../components/ErrorNotice';
import { useResource } from '../../components/useResource';
import { useAction } from './util';

type GuidanceItem = Schemas['AgentChatGuidanceItem'];
type QueueItem = Schemas['AgentChatQueueItem'];

/** One editable line: its text, Edit (then Save / Cancel) and Delete. */
function EditableItem({
  label,
  text,
  onSave,
  onDelete,
  children,
}: {
  label: string;
  text: string;
  onSave: (t: string) => Promise<unknown>;
  onDelete: () => Promise<unknown>;
  children?: ReactNode;
}) {
  const id = useId();
  const [editing, setEditing] = useState(false);
  const [draft, setDraft] = useState(text);
  const act = useAction();
  // `run` answers undefined when the action failed: a save that resolves (with nothing) still closes the editor.
  const save = async () => {
    const saved = await act.run(async () => {
      await onSave(draft.trim());
      return true;
    });
    if (saved) setEditing(false);
  };
  return (
    <li className="chat-chip-item">
      {editing ? (
        <>
          <label htmlFor={`${id}-e`} className="visually-hidden">
            Edit {label}
          </label>
          <input id={`${id}-e`} value={draft} onChange={(e) => setDraft(e.target.value)} />
          <button type="button" disabled={act.busy || !draft.trim()} onClick={() => void save()}>
            Save
          </button>
          <button type="button" onClick={() => setEditing(false)}>
            Cancel
          </button>
        </>
      ) : (
        <>
          <span className="chat-chip-text">{text}</span>
          {children}
          <button
            type="button"
            aria-label={`Edit ${label}: ${text}`}
            onClick={() => {
              setDraft(text);
              setEditing(true);
            }}
          >
            Edit
          </button>
          <button type="button" aria-label={`Delete ${label}: ${text}`} disabled={act.busy} onClick={() => void act.run(onDelete)}>
            Delete
          </button>
        </>
      )}
      {act.error ? <ErrorNotice error={act.error} /> : null}
    </li>
  );
}

/**
 * Guidance chips for the running turn: pending ones can be edited or deleted until a model call takes them (409
 * `agent_chat.guidance_consumed` after); taken ones show their receipt (which model call, when).
 */
export function GuidanceChips({ client, sessionId, version }: { client: HecateClient; sessionId: string; version: number }) {
  const path = { session_id: sessionId };
  const { data, error, reload } = useResource(
    async () =>
      ((await client.get('/hecate/v1/agent-chat/sessions/{session_id}/guidance', { path, query: { status: 'all' } })).data as Schemas['AgentChatGuidanceList'])
        .items,
    [client, sessionId, version],
  );
  const items = data ?? [];
  const pending = items.filter((g) => g.status === 'pending');
  const taken = items.filter((g) => g.status === 'consumed').slice(-5);
  if (items.length === 0 && !error) return null;
  const at = (g: GuidanceItem) => ({ session_id: sessionId, guidance_id: g.guidance_id });
  return (
    <section className="chat-guidance" aria-label="Guidance">
      <h3>Guidance</h3>
      {error ? <ErrorNotice error={error} /> : null}
      <ul>
        {pending.map((g) => (
          <EditableItem
            key={g.guidance_id}
            label="guidance"
            text={g.content}
            onSave={async (content) => {
              await client.patch('/hecate/v1/agent-chat/sessions/{session_id}/guidance/{guidance_id}', { path: at(g), body: { content } });
              reload();
            }}
            onDelete={async () => {
              await client.delete('/hecate/v1/agent-chat/sessions/{session_id}/guidance/{guidance_id}', { path: at(g) });
              reload();
            }}
          >
            <span className="chat-chip">pending</span>
          </EditableItem>
        ))}
        {taken.map((g) => (
          <li key={g.guidance_id} className="chat-chip-item chat-chip-done">
            <span className="chat-chip-text">{g.content}</span>
            <span className="chat-chip">
              taken{g.receipt?.model_call_index !== undefined ? ` at model call ${g.receipt.model_call_index}` : ''}
              {g.receipt?.consumed_at ? ` · ${new Date(g.receipt.consumed_at).toLocaleTimeString()}` : ''}
            </span>
          </li>
        ))}
      </ul>
    </section>
  );
}

/** The durable queued-next list: prompts that run in order when the active turn ends; editable until they start. */
export function QueueList({ client, sessionId, version }: { client: HecateClient; sessionId: string; version: number }) {
  const path = { session_id: sessionId };
  const { data, error, reload } = useResource(
    async () => (await client.get('/hecate/v1/agent-chat/sessions/{session_id}/queue', { path })).data as QueueItem[],
    [client, sessionId, version],
  );
  const items = (data ?? []).filter((q) => q.status === 'queued' || q.status === 'starting' || q.status === 'failed');
  if (items.length === 0 && !error) return null;
  const at = (q: QueueItem) => ({ session_id: sessionId, item_id: q.id });
  return (
    <section className="chat-queue" aria-label="Queued next">
      <h3>Queued next</h3>
      {error ? <ErrorNotice error={error} /> : null}
      <ol>
        {items.map((q) =>
          q.status === 'queued' ? (
            <EditableItem
              key={q.id}
              label="queued message"
              text={q.content}
              onSave={async (content) => {
                await client.patch('/hecate/v1/agent-chat/sessions/{session_id}/queue/{item_id}', { path: at(q), body: { content } });
                reload();
              }}
              onDelete={async () => {
                await client.delete('/hecate/v1/agent-chat/sessions/{session_id}/queue/{item_id}', { path: at(q) });
                reload();
              }}
            />
          ) : (
            <li key={q.id} className="chat-chip-item">
              <span className="chat-chip-text">{q.content}</span>
              <span className="chat-chip">{q.status}</span>
              {q.error ? <span className="chat-error-inline">{q.error.message}</span> : null}
            </li>
          ),
        )}
      </ol>
    </section>
  );
}
