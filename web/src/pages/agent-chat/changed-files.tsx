import { useState } from 'react';
import type { HecateClient, Schemas } from '@hecate/sdk';
import { ErrorNotice } from '../../components/ErrorNotice';
import { useResource } from '../../components/useResource';
import { useAction } from './util';

type ChangedFile = Schemas['AgentChatChangedFile'];

/** One file's block of the unified diff, lines marked as added, removed or context. */
function DiffView({ client, sessionId, messageId, file }: { client: HecateClient; sessionId: string; messageId: string; file: ChangedFile }) {
  const { data, error } = useResource(
    async () =>
      (
        await client.get('/hecate/v1/agent-chat/sessions/{session_id}/messages/{message_id}/files/{path}', {
          path: { session_id: sessionId, message_id: messageId, path: file.path },
        })
      ).data as Schemas['AgentChatChangedFileDiff'],
    [client, sessionId, messageId, file.path],
  );
  if (error) return <ErrorNotice error={error} title="Diff" />;
  if (!data) return <p className="muted">Loading the diff…</p>;
  return (
    <pre className="chat-diff" aria-label={`Diff of ${file.path}`} tabIndex={0}>
      {data.diff.split('\n').map((line, i) => (
        <span
          key={i}
          className={
            line.startsWith('+') && !line.startsWith('+++')
              ? 'add'
              : line.startsWith('-') && !line.startsWith('---')
                ? 'del'
                : line.startsWith('@@')
                  ? 'hunk'
                  : undefined
          }
        >
          {line}
          {'\n'}
        </span>
      ))}
    </pre>
  );
}

/**
 * The files an agent turn changed in its Git workspace (its diff against the tree at the turn's start): each with a
 * diff view and a revert of only that path, or of all of them (docs/api.md §4.7; the revert runs on a worker).
 */
export function ChangedFiles({ client, sessionId, messageId, diffStat }: { client: HecateClient; sessionId: string; messageId: string; diffStat?: string }) {
  const [open, setOpen] = useState(false);
  const [shown, setShown] = useState<string | null>(null);
  const [tick, setTick] = useState(0);
  const revert = useAction();
  const [result, setResult] = useState<Schemas['AgentChatRevert'] | null>(null);
  const { data, error } = useResource(
    async () =>
      open
        ? ((
            await client.get('/hecate/v1/agent-chat/sessions/{session_id}/messages/{message_id}/files', {
              path: { session_id: sessionId, message_id: messageId },
            })
          ).data as ChangedFile[])
        : undefined,
    [client, sessionId, messageId, open, tick],
  );

  async function revertPaths(paths: string[]) {
    const r = await revert.run(
      async () =>
        (
          await client.post('/hecate/v1/agent-chat/sessions/{session_id}/messages/{message_id}/revert', {
            path: { session_id: sessionId, message_id: messageId },
            body: { paths },
          })
        ).data,
    );
    if (r) {
      setResult(r as Schemas['AgentChatRevert']);
      setTick((t) => t + 1);
    }
  }

  return (
    <details className="chat-files" onToggle={(e) => setOpen((e.target as HTMLDetailsElement).open)}>
      <summary>Changed files{diffStat ? ` · ${diffStat}` : ''}</summary>
      {error ? <ErrorNotice error={error} title="Changed files" /> : null}
      {data ? (
        <>
          <ul>
            {data.map((f) => (
              <li key={f.path}>
                <code>{f.path}</code> <span className="chat-chip">{f.status}</span> <span className="add">+{f.additions}</span>{' '}
                <span className="del">−{f.deletions}</span>{' '}
                <button
                  type="button"
                  aria-expanded={shown === f.path}
                  aria-label={`${shown === f.path ? 'Hide' : 'Show'} diff of ${f.path}`}
                  onClick={() => setShown(shown === f.path ? null : f.path)}
                >
                  {shown === f.path ? 'Hide diff' : 'Show diff'}
                </button>{' '}
                <button type="button" aria-label={`Revert ${f.path}`} disabled={revert.busy} onClick={() => void revertPaths([f.path])}>
                  Revert
                </button>
                {shown === f.path ? <DiffView client={client} sessionId={sessionId} messageId={messageId} file={f} /> : null}
              </li>
            ))}
          </ul>
          {data.length > 1 ? (
            <button type="button" disabled={revert.busy} onClick={() => void revertPaths([])}>
              Revert all
            </button>
          ) : null}
          {data.length === 0 ? <p className="muted">No file differs from the turn's start any more.</p> : null}
        </>
      ) : open && !error ? (
        <p className="muted">Loading…</p>
      ) : null}
      {revert.error ? <ErrorNotice error={revert.error} title="Revert" /> : null}
      {result ? (
        <p role="status">
          Reverted {result.paths.join(', ') || 'nothing'}
          {result.diff_stat ? `; still changed: ${result.diff_stat}` : '; nothing left changed'}.
        </p>
      ) : null}
    </details>
  );
}
