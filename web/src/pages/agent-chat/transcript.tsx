import { useCallback, useMemo } from 'react';
import type { HecateClient } from '@hecate/sdk';
import type { Message, Session, ToolActivity } from './chat-store';
import { MessageItem } from './message-item';
import { VirtualList } from './virtual-list';

const NO_TOOLS: ToolActivity[] = [];

interface TranscriptProps {
  client: HecateClient;
  session: Session;
  messages: Message[];
  /** The message id of the reply streaming now, and how much of it has arrived. */
  streamingId: string | undefined;
  streamedChars: number;
  tools: ToolActivity[];
  onSession: (s: Session) => void;
}

/**
 * The transcript, virtualised (a 2,000-message session opens at its end and scrolls with only the rows on screen
 * in the DOM). The running reply grows in place; a polite status line says when a reply starts and ends, rather
 * than reading out every token.
 */
export function Transcript({ client, session, messages, streamingId, streamedChars, tools, onSession }: TranscriptProps) {
  const busy = session.active_turn != null;
  const marks = useMemo(() => {
    let lastUser = -1;
    let latestAssistant = -1;
    messages.forEach((m, i) => {
      if (m.role === 'user' && m.status !== 'superseded' && typeof m.metadata?.guidance_id !== 'string') lastUser = i;
      if (m.role === 'assistant' && m.status !== 'superseded') latestAssistant = i;
    });
    // A running External Agent reply has no adapter name yet: it takes the one an earlier reply of the session has.
    const agentName = messages.findLast((m) => m.adapter_name)?.adapter_name ?? session.adapter_id ?? 'Agent';
    return { lastUser, latestAssistant, agentName };
  }, [messages, session.adapter_id]);
  const keyOf = useCallback((i: number) => messages[i].id, [messages]);
  const render = useCallback(
    (i: number) => {
      const m = messages[i];
      const streaming = m.id === streamingId;
      return (
        <MessageItem
          client={client}
          sessionId={session.id}
          message={m}
          segmentStart={i === 0 || messages[i - 1].segment_id !== m.segment_id}
          lastUser={i === marks.lastUser}
          latestAssistant={i === marks.latestAssistant}
          streaming={streaming}
          tools={streaming ? tools : NO_TOOLS}
          busy={busy}
          agentName={marks.agentName}
          onSession={onSession}
        />
      );
    },
    [client, session.id, messages, streamingId, tools, busy, marks, onSession],
  );
  const streaming = messages.find((m) => m.id === streamingId);
  return (
    <section className="chat-transcript" aria-label="Transcript">
      {messages.length === 0 ? <p className="muted chat-empty">No messages yet. Write the first one below.</p> : null}
      <VirtualList count={messages.length} keyOf={keyOf} render={render} label="Messages" tailVersion={streamedChars} />
      <div role="status" className="visually-hidden">
        {streaming ? 'The assistant is replying.' : busy ? 'The turn is running.' : messages.length ? 'Idle.' : ''}
      </div>
    </section>
  );
}
