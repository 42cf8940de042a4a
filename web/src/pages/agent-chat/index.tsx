import { useState } from 'react';
import { useLocation, useParams } from 'wouter';
import { useHecate } from '../../app/hecate';
import { Page } from '../../components/Page';
import { NewSessionForm } from './new-session';
import { SessionView } from './session-view';
import { SessionsList } from './sessions-list';
import './agent-chat.css';

/**
 * Agent Chat (`/chat`, `/chat/:sessionId`): the sessions list with busy/idle live, a new-session form, and the open
 * session — its transcript streamed token by token and resumed after a reload or a dropped connection, approvals,
 * guidance, the queued-next list, rerun and edit of the last message, changed files, timing and cost.
 */
export default function AgentChatPage() {
  const client = useHecate();
  const { sessionId } = useParams<{ sessionId?: string }>();
  const [, navigate] = useLocation();
  const [creating, setCreating] = useState(false);
  const open = (id: string) => {
    setCreating(false);
    navigate(`/chat/${encodeURIComponent(id)}`);
  };
  return (
    <Page
      title="Agent Chat"
      actions={
        <button type="button" onClick={() => setCreating(true)} aria-expanded={creating}>
          New session
        </button>
      }
    >
      <div className="agent-chat">
        <SessionsList client={client} currentId={sessionId} onOpen={open} />
        <div className="chat-main">
          {creating ? (
            <NewSessionForm client={client} onCreated={open} onCancel={() => setCreating(false)} />
          ) : sessionId ? (
            <SessionView key={sessionId} client={client} sessionId={sessionId} onDeleted={() => navigate('/chat')} />
          ) : (
            <p className="muted">Choose a session, or start a new one.</p>
          )}
        </div>
      </div>
    </Page>
  );
}
