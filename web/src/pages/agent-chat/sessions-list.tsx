import { useEffect, useState } from 'react';
import type { HecateClient, Schemas } from '@hecate/sdk';
import { ErrorNotice } from '../../components/ErrorNotice';
import { useResource } from '../../components/useResource';
import { runtimeLabel } from './util';

type Summary = Schemas['AgentChatSessionSummary'];

/**
 * The busy sessions, live: the SDK's active-sessions stream (a snapshot on every (re)connection, then busy/idle as
 * turns start and end on any api process).
 */
function useBusySessions(client: HecateClient): { busy: Map<string, string>; version: number } {
  const [state, setState] = useState({ busy: new Map<string, string>(), version: 0 });
  useEffect(() => {
    const controller = new AbortController();
    void (async () => {
      try {
        for await (const frame of client.streams.activeSessions({ signal: controller.signal })) {
          setState((s) => {
            const busy = frame.event === 'snapshot' ? new Map<string, string>() : new Map(s.busy);
            if (frame.event === 'snapshot') for (const a of frame.data) busy.set(a.session_id, a.status);
            else if (frame.event === 'session.busy') busy.set(frame.data.session_id, frame.data.status);
            else busy.delete(frame.data.session_id);
            return { busy, version: s.version + 1 };
          });
        }
      } catch {
        // The stream gave up after its reconnects (or the key may not read it): the list still shows each session's
        // stored status, and reloading the page tries again.
      }
    })();
    return () => controller.abort();
  }, [client]);
  return state;
}

export function SessionsList({ client, currentId, onOpen }: { client: HecateClient; currentId: string | undefined; onOpen: (id: string) => void }) {
  const { busy, version } = useBusySessions(client);
  const { data, error, reload } = useResource(
    async () => (await client.get('/hecate/v1/agent-chat/sessions', { query: { limit: 100 } })).data as Summary[],
    [client],
  );
  // A session that went busy or idle has a new status and message count: read the list again.
  useEffect(() => {
    if (version > 1) reload();
  }, [version, reload]);
  const sessions = data ?? [];
  return (
    <nav aria-label="Agent Chat sessions" className="chat-sessions">
      <h2>Sessions</h2>
      {error ? <ErrorNotice error={error} title="Sessions" /> : null}
      {sessions.length === 0 && !error ? <p className="muted">No sessions yet.</p> : null}
      <ul>
        {sessions.map((s) => {
          const isBusy = busy.has(s.id);
          return (
            <li key={s.id}>
              <a
                href={`/chat/${encodeURIComponent(s.id)}`}
                aria-current={s.id === currentId ? 'page' : undefined}
                onClick={(e) => {
                  if (e.metaKey || e.ctrlKey || e.shiftKey || e.button !== 0) return;
                  e.preventDefault();
                  onOpen(s.id);
                }}
              >
                <span className="chat-session-title">{s.title || s.id}</span>
                <span className="chat-session-meta">
                  {runtimeLabel(s.runtime_kind)}
                  {s.model ? ` · ${s.model}` : ''}
                  {s.adapter_id ? ` · ${s.adapter_id}` : ''}
                </span>
                <span className={`chat-badge ${isBusy ? 'chat-badge-busy' : 'chat-badge-idle'}`}>{isBusy ? 'busy' : 'idle'}</span>
              </a>
            </li>
          );
        })}
      </ul>
    </nav>
  );
}
