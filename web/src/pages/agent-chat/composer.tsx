import { useId, useState, type FormEvent, type KeyboardEvent } from 'react';
import type { HecateClient } from '@hecate/sdk';
import { ErrorNotice } from '../../components/ErrorNotice';
import { useAction } from './util';

interface ComposerProps {
  client: HecateClient;
  sessionId: string;
  /** A turn is queued, running or awaiting an approval. */
  busy: boolean;
  closed: boolean;
  /** Guidance or a queued item was added: their lists are stale. */
  onGuidance: () => void;
  onQueued: () => void;
}

/**
 * The composer. Idle: Send starts a turn (`wait: false`: the session stream shows it). While a turn runs: Send as
 * guidance (taken before the turn's next model call), Queue next (`on_busy: enqueue`, the durable queued-next
 * list), Interrupt and send (`on_busy: interrupt`), and Stop (cancel; the partial reply is kept). Enter sends (as
 * guidance while busy), Shift+Enter is a new line.
 */
export function Composer({ client, sessionId, busy, closed, onGuidance, onQueued }: ComposerProps) {
  const id = useId();
  const [text, setText] = useState('');
  const act = useAction();
  const path = { session_id: sessionId };

  async function send(mode: 'send' | 'guidance' | 'enqueue' | 'interrupt') {
    const content = text.trim();
    if (!content) return;
    const done = await act.run(async () => {
      if (mode === 'guidance') {
        await client.post('/hecate/v1/agent-chat/sessions/{session_id}/guidance', { path, body: { content, metadata: { source_ui: 'console_composer' } } });
        onGuidance();
      } else {
        const on_busy = mode === 'send' ? 'reject' : mode;
        await client.post('/hecate/v1/agent-chat/sessions/{session_id}/messages', { path, body: { content, wait: false, on_busy } });
        if (mode === 'enqueue') onQueued();
      }
      return true;
    });
    if (done) setText('');
  }

  const stop = () => void act.run(() => client.post('/hecate/v1/agent-chat/sessions/{session_id}/cancel', { path }));

  function onKeyDown(e: KeyboardEvent<HTMLTextAreaElement>) {
    if (e.key !== 'Enter' || e.shiftKey || e.nativeEvent.isComposing) return;
    e.preventDefault();
    void send(busy ? 'guidance' : 'send');
  }

  const submit = (e: FormEvent) => {
    e.preventDefault();
    void send(busy ? 'guidance' : 'send');
  };

  return (
    <form className="chat-composer" aria-label="Composer" onSubmit={submit}>
      <label htmlFor={`${id}-text`} className="visually-hidden">
        Message
      </label>
      <textarea
        id={`${id}-text`}
        value={text}
        rows={3}
        disabled={closed}
        placeholder={closed ? 'This session is closed.' : busy ? 'Guidance for the running turn, or a message to queue…' : 'Message'}
        onChange={(e) => setText(e.target.value)}
        onKeyDown={onKeyDown}
      />
      {act.error ? <ErrorNotice error={act.error} title="Not sent" /> : null}
      <div className="chat-actions">
        {busy ? (
          <>
            <button type="submit" disabled={act.busy || closed}>
              Send as guidance
            </button>
            <button type="button" disabled={act.busy || closed} onClick={() => void send('enqueue')}>
              Queue next
            </button>
            <button type="button" disabled={act.busy || closed} onClick={() => void send('interrupt')}>
              Interrupt and send
            </button>
            <button type="button" className="chat-stop" disabled={act.busy} onClick={stop}>
              Stop
            </button>
          </>
        ) : (
          <button type="submit" disabled={act.busy || closed}>
            Send
          </button>
        )}
      </div>
    </form>
  );
}
