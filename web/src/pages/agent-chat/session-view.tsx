import { useCallback, useEffect, useMemo, useState, useSyncExternalStore } from 'react';
import type { HecateClient } from '@hecate/sdk';
import { pendingApprovals, ApprovalBanner } from './approval-banner';
import { ChatStore, displayedMessages, type Session } from './chat-store';
import { Composer } from './composer';
import { GuidanceChips, QueueList } from './side-lists';
import { Transcript } from './transcript';
import { ErrorNotice } from '../../components/ErrorNotice';
import { Loading } from '../../components/Loading';
import { runtimeLabel, useAction } from './util';

/** One store per open session: started when the page shows it, stopped when it leaves. */
function useChatStore(client: HecateClient, sessionId: string): ChatStore {
  const store = useMemo(() => new ChatStore(client, sessionId), [client, sessionId]);
  useEffect(() => {
    store.start();
    return () => store.stop();
  }, [store]);
  return store;
}

function SessionHeader({ client, session, onDeleted }: { client: HecateClient; session: Session; onDeleted: () => void }) {
  const act = useAction();
  const path = { session_id: session.id };
  const closed = !!session.closed_at;
  const turn = session.active_turn;
  return (
    <header className="chat-session-header">
      <h2>{session.title || session.id}</h2>
      <p className="chat-session-facts">
        <span className="chat-chip">{runtimeLabel(session.runtime_kind)}</span>
        {session.provider || session.model ? <span className="chat-chip">{[session.provider, session.model].filter(Boolean).join('/')}</span> : null}
        {session.adapter_id ? <span className="chat-chip">adapter {session.adapter_id}</span> : null}
        {session.agent_id ? <span className="chat-chip">saved agent {session.agent_id}</span> : null}
        {session.workspace ? (
          <span className="chat-chip">
            workspace <code>{session.workspace}</code>
          </span>
        ) : null}
        <span className={`chat-badge ${turn ? 'chat-badge-busy' : 'chat-badge-idle'}`}>{turn ? `busy: ${turn.status}` : closed ? 'closed' : 'idle'}</span>
        <span className="muted">
          {session.turns_used} turn{session.turns_used === 1 ? '' : 's'}
          {session.max_turns_per_session ? ` of ${session.max_turns_per_session}` : ''}
        </span>
      </p>
      <div className="chat-actions">
        {!closed ? (
          <button
            type="button"
            disabled={act.busy}
            onClick={() => void act.run(() => client.post('/hecate/v1/agent-chat/sessions/{session_id}/close', { path }))}
          >
            Close session
          </button>
        ) : null}
        <button
          type="button"
          disabled={act.busy}
          onClick={() =>
            void act.run(async () => {
              if (!window.confirm('Delete this session and its transcript?')) return;
              await client.delete('/hecate/v1/agent-chat/sessions/{session_id}', { path });
              onDeleted();
            })
          }
        >
          Delete session
        </button>
      </div>
      {act.error ? <ErrorNotice error={act.error} /> : null}
    </header>
  );
}

/**
 * One open session: its header, the approval banner, the transcript (streamed live, resumed after a reload or a
 * dropped connection), guidance chips and the queued-next list while a turn runs, and the composer.
 */
export function SessionView({ client, sessionId, onDeleted }: { client: HecateClient; sessionId: string; onDeleted: () => void }) {
  const store = useChatStore(client, sessionId);
  const view = useSyncExternalStore(store.subscribe, store.getSnapshot);
  const [guidanceBump, setGuidanceBump] = useState(0);
  const [queueBump, setQueueBump] = useState(0);
  const onSession = useCallback((s: Session) => store.replaceSession(s), [store]);
  const messages = useMemo(() => displayedMessages(view), [view]);
  const session = view.session;
  if (!session) {
    return (
      <section className="chat-session" aria-label="Session">
        {view.error ? <ErrorNotice error={view.error} title="The session could not be opened" /> : <Loading what="the session" />}
      </section>
    );
  }
  const busy = session.active_turn != null;
  const running = busy ? messages.find((m) => m.id === session.active_turn?.assistant_message_id) : undefined;
  const approvals = pendingApprovals(view.pending, view.resolved, running, session.id);
  return (
    <section className="chat-session" aria-label="Session">
      <SessionHeader client={client} session={session} onDeleted={onDeleted} />
      {view.connection === 'retrying' ? (
        <p role="status" className="chat-reconnecting">
          Reconnecting to the session stream…
        </p>
      ) : null}
      {view.connection === 'failed' && view.error ? <ErrorNotice error={view.error} title="The session stream stopped" /> : null}
      <ApprovalBanner client={client} approvals={approvals} />
      <Transcript
        client={client}
        session={session}
        messages={messages}
        streamingId={session.active_turn?.assistant_message_id}
        streamedChars={view.live?.text.length ?? 0}
        tools={view.tools}
        onSession={onSession}
      />
      <GuidanceChips client={client} sessionId={session.id} version={view.guidanceVersion + guidanceBump + view.turnVersion} />
      <QueueList client={client} sessionId={session.id} version={view.turnVersion + queueBump} />
      <Composer
        client={client}
        sessionId={session.id}
        busy={busy}
        closed={!!session.closed_at}
        onGuidance={() => setGuidanceBump((n) => n + 1)}
        onQueued={() => setQueueBump((n) => n + 1)}
      />
    </section>
  );
}
