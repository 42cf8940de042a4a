import { useId, useState, type FormEvent } from 'react';
import type { HecateClient } from '@hecate/sdk';
import { TaskError } from './error-notice';
import { isActiveStatus, isTerminalStatus, type TaskRun } from './types';

interface Props {
  client: HecateClient;
  run: TaskRun;
  /** A new run was made (retry, resume, continue, retry from turn): show it. */
  onNewRun(run: TaskRun): void;
}

/**
 * What can be done with a run (docs/api.md §4.3): cancel an active one; retry (start over) or resume (from the last
 * persisted step) a finished one; for an agent loop, continue with a follow-up prompt or retry from turn N.
 */
export function RunActions({ client, run, onNewRun }: Props) {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>();
  const [message, setMessage] = useState('');
  const path = { task_id: run.task_id, run_id: run.id };

  const act = async (what: string, call: () => Promise<{ data: TaskRun }>) => {
    setBusy(true);
    setError(undefined);
    setMessage('');
    try {
      const { data } = await call();
      if (data.id !== run.id) onNewRun(data);
      else setMessage(`${what}: the run is ${data.status}.`);
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };

  const terminal = isTerminalStatus(run.status);
  const agent = run.execution_kind === 'agent_loop';
  return (
    <div className="tasks-run-actions">
      <div className="actions">
        {isActiveStatus(run.status) && (
          <button
            type="button"
            className="danger"
            disabled={busy}
            onClick={() => void act('Cancel', () => client.post('/hecate/v1/tasks/{task_id}/runs/{run_id}/cancel', { path, body: {} }))}
          >
            Cancel run
          </button>
        )}
        {terminal && (
          <>
            <button
              type="button"
              className="secondary"
              disabled={busy}
              onClick={() => void act('Retry', () => client.post('/hecate/v1/tasks/{task_id}/runs/{run_id}/retry', { path, body: {} }))}
            >
              Retry
            </button>
            <button
              type="button"
              className="secondary"
              disabled={busy}
              onClick={() => void act('Resume', () => client.post('/hecate/v1/tasks/{task_id}/runs/{run_id}/resume', { path, body: {} }))}
            >
              Resume
            </button>
          </>
        )}
      </div>
      {terminal && agent && <AgentRunActions client={client} run={run} busy={busy} act={act} />}
      <p role="status" className="hint">
        {message}
      </p>
      <TaskError error={error} title="The run was not changed" />
    </div>
  );
}

type Act = (what: string, call: () => Promise<{ data: TaskRun }>) => Promise<void>;

/** Continue (a follow-up prompt on the saved conversation) and retry from turn N of a finished agent loop. */
function AgentRunActions({ client, run, busy, act }: { client: HecateClient; run: TaskRun; busy: boolean; act: Act }) {
  const [prompt, setPrompt] = useState('');
  const [turn, setTurn] = useState('1');
  const [reason, setReason] = useState('');
  const ids = { prompt: useId(), turn: useId(), reason: useId() };
  const path = { task_id: run.task_id, run_id: run.id };

  const continueRun = (e: FormEvent) => {
    e.preventDefault();
    void act('Continue', () => client.post('/hecate/v1/tasks/{task_id}/runs/{run_id}/continue', { path, body: { prompt } }));
  };
  const retryFromTurn = (e: FormEvent) => {
    e.preventDefault();
    const body = { turn: Number(turn), ...(reason.trim() ? { reason: reason.trim() } : {}) };
    void act('Retry from turn', () => client.post('/hecate/v1/tasks/{task_id}/runs/{run_id}/retry-from-turn', { path, body }));
  };

  return (
    <div className="tasks-agent-actions">
      <form onSubmit={continueRun} className="tasks-form tasks-form--inline" aria-label="Continue the conversation">
        <label htmlFor={ids.prompt}>Follow-up prompt</label>
        <textarea id={ids.prompt} value={prompt} onChange={(e) => setPrompt(e.target.value)} rows={2} required disabled={busy} />
        <button type="submit" disabled={busy || !prompt.trim()}>
          Continue
        </button>
      </form>
      <form onSubmit={retryFromTurn} className="tasks-form tasks-form--inline" aria-label="Retry from a turn">
        <label htmlFor={ids.turn}>Turn</label>
        <input id={ids.turn} type="number" min={1} step={1} value={turn} onChange={(e) => setTurn(e.target.value)} required disabled={busy} />
        <label htmlFor={ids.reason}>Reason (optional)</label>
        <input id={ids.reason} type="text" value={reason} onChange={(e) => setReason(e.target.value)} maxLength={4000} disabled={busy} />
        <button type="submit" className="secondary" disabled={busy}>
          Retry from turn
        </button>
      </form>
    </div>
  );
}
