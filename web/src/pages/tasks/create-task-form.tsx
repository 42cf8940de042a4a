import { useId, useState, type FormEvent, type ReactNode } from 'react';
import type { HecateClient, JsonBody, Operation } from '@hecate/sdk';
import { ErrorNotice } from '../../components/ErrorNotice';
import { SelectField } from '../../components/SelectField';
import { useAction } from '../../components/useAction';
import { useResource } from '../../components/useResource';
import { EXECUTION_KINDS, type ExecutionKind, type SavedAgent } from './types';

type CreateBody = JsonBody<Operation<'/hecate/v1/tasks', 'post'>>;

interface Fields {
  kind: ExecutionKind;
  title: string;
  agentId: string;
  prompt: string;
  model: string;
  shellCommand: string;
  gitCommand: string;
  filePath: string;
  fileOperation: 'write' | 'append' | 'delete';
  fileContent: string;
  workingDirectory: string;
  workspaceMode: '' | 'persistent' | 'ephemeral' | 'in_place';
  start: boolean;
}

const INITIAL: Fields = {
  kind: 'shell',
  title: '',
  agentId: '',
  prompt: '',
  model: '',
  shellCommand: '',
  gitCommand: '',
  filePath: '',
  fileOperation: 'write',
  fileContent: '',
  workingDirectory: '',
  workspaceMode: '',
  start: true,
};

/** The create body for the chosen kind: only that kind's fields (docs/api.md §4.3 "Task fields"). */
export function createBody(f: Fields): CreateBody {
  const opt = (v: string) => (v.trim() ? v : undefined);
  const common = { execution_kind: f.kind, title: opt(f.title), working_directory: opt(f.workingDirectory), workspace_mode: f.workspaceMode || undefined };
  switch (f.kind) {
    case 'shell':
      return { ...common, shell_command: f.shellCommand };
    case 'git':
      return { ...common, git_command: f.gitCommand };
    case 'file':
      return { ...common, file_path: f.filePath, file_operation: f.fileOperation, file_content: f.fileOperation === 'delete' ? undefined : f.fileContent };
    case 'agent_loop':
      return { ...common, prompt: f.prompt, requested_model: opt(f.model), agent_id: opt(f.agentId) };
  }
}

/**
 * Creates a task of any execution kind — an agent loop from a saved agent where there are any — and starts it
 * unless told not to. The working directory is typed: a server has no folder picker (docs/api.md §4.7).
 */
export function CreateTaskForm({ client, onCreated }: { client: HecateClient; onCreated(taskId: string): void }) {
  const [f, setF] = useState<Fields>(INITIAL);
  const create = useAction();
  const agents = useResource(async (signal) => (await client.get('/hecate/v1/agents', { query: { limit: 200 }, signal })).data, [client]);
  const set =
    <K extends keyof Fields>(k: K) =>
    (v: Fields[K]) =>
      setF((prev) => ({ ...prev, [k]: v }));

  const submit = (e: FormEvent) => {
    e.preventDefault();
    void create.run(async () => {
      const { data: task } = await client.post('/hecate/v1/tasks', { body: createBody(f) });
      if (f.start) await client.post('/hecate/v1/tasks/{task_id}/start', { path: { task_id: task.id } });
      onCreated(task.id);
    });
  };

  return (
    <form className="tasks-form" onSubmit={submit} aria-label="New task">
      <SelectField label="Kind" value={f.kind} onChange={(kind) => set('kind')(kind as ExecutionKind)} options={EXECUTION_KINDS} />
      <Field label="Title (optional)">{(id) => <input id={id} value={f.title} onChange={(e) => set('title')(e.target.value)} maxLength={500} />}</Field>
      <KindFields f={f} set={set} agents={agents.data ?? []} />
      <Field label="Working directory (optional, a path on the server)">
        {(id) => <input id={id} value={f.workingDirectory} onChange={(e) => set('workingDirectory')(e.target.value)} placeholder="/srv/project" />}
      </Field>
      <Field label="Workspace">
        {(id) => (
          <select id={id} value={f.workspaceMode} onChange={(e) => set('workspaceMode')(e.target.value as Fields['workspaceMode'])}>
            <option value="">Default (a copy of the working directory)</option>
            <option value="persistent">Persistent copy</option>
            <option value="ephemeral">Ephemeral copy</option>
            <option value="in_place">In place (edits the working directory itself)</option>
          </select>
        )}
      </Field>
      <div className="tasks-form__check">
        <input id="tasks-create-start" type="checkbox" checked={f.start} onChange={(e) => set('start')(e.target.checked)} />
        <label htmlFor="tasks-create-start">Start it now</label>
      </div>
      <button type="submit" disabled={create.busy}>
        Create task
      </button>
      <ErrorNotice error={create.error} title="The task was not created" />
    </form>
  );
}

type Setter = <K extends keyof Fields>(k: K) => (v: Fields[K]) => void;

/** The fields of the chosen execution kind. */
function KindFields({ f, set, agents }: { f: Fields; set: Setter; agents: SavedAgent[] }) {
  switch (f.kind) {
    case 'shell':
      return (
        <Field label="Shell command">
          {(id) => <textarea id={id} value={f.shellCommand} onChange={(e) => set('shellCommand')(e.target.value)} rows={3} required className="tasks-mono" />}
        </Field>
      );
    case 'git':
      return (
        <Field label="Git command">
          {(id) => (
            <input
              id={id}
              value={f.gitCommand}
              onChange={(e) => set('gitCommand')(e.target.value)}
              required
              className="tasks-mono"
              placeholder="status --short"
            />
          )}
        </Field>
      );
    case 'file':
      return (
        <>
          <Field label="File path (in the workspace)">
            {(id) => <input id={id} value={f.filePath} onChange={(e) => set('filePath')(e.target.value)} required />}
          </Field>
          <Field label="Operation">
            {(id) => (
              <select id={id} value={f.fileOperation} onChange={(e) => set('fileOperation')(e.target.value as Fields['fileOperation'])}>
                <option value="write">Write</option>
                <option value="append">Append</option>
                <option value="delete">Delete</option>
              </select>
            )}
          </Field>
          {f.fileOperation !== 'delete' && (
            <Field label="Content">
              {(id) => <textarea id={id} value={f.fileContent} onChange={(e) => set('fileContent')(e.target.value)} rows={5} className="tasks-mono" />}
            </Field>
          )}
        </>
      );
    case 'agent_loop':
      return (
        <>
          {agents.length > 0 && (
            <Field label="Saved agent">
              {(id) => (
                <select id={id} value={f.agentId} onChange={(e) => set('agentId')(e.target.value)}>
                  <option value="">None (the model and tools below)</option>
                  {agents.map((a) => (
                    <option key={a.id} value={a.id}>
                      {a.name} (v{a.version}
                      {a.model ? `, ${a.model}` : ''})
                    </option>
                  ))}
                </select>
              )}
            </Field>
          )}
          <Field label="Prompt">{(id) => <textarea id={id} value={f.prompt} onChange={(e) => set('prompt')(e.target.value)} rows={4} required />}</Field>
          <Field label={f.agentId ? 'Model (optional, overrides the agent’s)' : 'Model (optional, the server’s default otherwise)'}>
            {(id) => <input id={id} value={f.model} onChange={(e) => set('model')(e.target.value)} placeholder="gpt-4o-mini" />}
          </Field>
        </>
      );
  }
}

/** A labelled control: the label names the input it wraps by id. */
function Field({ label, children }: { label: string; children: (id: string) => ReactNode }) {
  const id = useId();
  return (
    <div>
      <label htmlFor={id}>{label}</label>
      {children(id)}
    </div>
  );
}
