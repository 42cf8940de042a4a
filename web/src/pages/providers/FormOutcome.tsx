import { ErrorNotice } from '../../components/ErrorNotice';

/** What a model-settings form's last submit did: its outcome as a status line, or why it was refused. */
export function FormOutcome({ outcome, error, refused }: { outcome: string | undefined; error: unknown; refused: string }) {
  return (
    <>
      {outcome && (
        <p role="status" className="hint">
          {outcome}
        </p>
      )}
      {error !== undefined && <ErrorNotice error={error} title={refused} />}
    </>
  );
}
