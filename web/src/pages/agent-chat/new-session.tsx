import { useId, useRef, useState, type FormEvent } from 'react';
import type { HecateClient, Schemas } from '@hecate/sdk';
import { ErrorNotice } from '../../components/ErrorNotice';
import { useResource } from '../../components/useResource';
import { asHecateError, useAction } from './util';

type RuntimeKind = 'model' | 'agent' | 'external_agent';

const RUNTIMES: Array<{ kind: RuntimeKind; label: string; hint: string }> = [
  { kind: 'model', label: 'Model', hint: 'a direct conversation with a model, no tools' },
  { kind: 'agent', label: 'Hecate Agent', hint: 'the agent loop with tools in a workspace' },
  { kind: 'external_agent', label: 'External agent', hint: 'an ACP agent from the catalog (Codex, Claude Code, …)' },
];

/** The pickers' choices: providers and their models, saved agents, adapters. A list the key may not read stays empty. */
function useChoices(client: HecateClient) {
  const providers = useResource(async () => (await client.get('/hecate/v1/providers/status')).data as Schemas['ProviderStatus'][], [client]);
  const agents = useResource(async () => (await client.get('/hecate/v1/agents', { query: { limit: 100 } })).data as Schemas['Agent'][], [client]);
  const adapters = useResource(async () => (await client.get('/hecate/v1/agent-adapters')).data as Schemas['AgentAdapter'][], [client]);
  return { providers: providers.data ?? [], agents: agents.data ?? [], adapters: adapters.data ?? [] };
}

/**
 * Create a session: a model, an agent with tools, or an external agent from the catalog (with its "outside tested
 * range" chip), optionally from a saved agent; the workspace path is typed — "Pick folder" asks the server for a
 * native picker, and a server (which has no desktop) answers 501 with `fallback: manual_entry`, so the typed path
 * is the way (docs/api.md §4.7).
 */
export function NewSessionForm({ client, onCreated, onCancel }: { client: HecateClient; onCreated: (id: string) => void; onCancel: () => void }) {
  const id = useId();
  const { providers, agents, adapters } = useChoices(client);
  const [runtime, setRuntime] = useState<RuntimeKind>('model');
  const [agentId, setAgentId] = useState('');
  const [provider, setProvider] = useState('');
  const [model, setModel] = useState('');
  const [adapterId, setAdapterId] = useState('');
  const [workspace, setWorkspace] = useState('');
  const [title, setTitle] = useState('');
  const [pickerNote, setPickerNote] = useState('');
  const workspaceInput = useRef<HTMLInputElement>(null);
  const create = useAction();

  const models = [...new Set(providers.filter((p) => !provider || p.name === provider).flatMap((p) => p.models))];
  const external = runtime === 'external_agent';
  // What the hidden pickers hold is not sent: an adapter chosen before switching to a model, a saved agent before
  // switching to an external agent.
  const adapter = external ? adapters.find((a) => a.id === adapterId) : undefined;
  const needsWorkspace = runtime !== 'model';

  async function pickFolder() {
    try {
      const r = await client.post('/hecate/v1/workspace-dialog');
      const picked = (r as { data?: { path?: string } }).data?.path;
      if (picked) setWorkspace(picked);
    } catch (err) {
      const e = asHecateError(err);
      setPickerNote(
        e.type === 'agent_chat.workspace_dialog_unsupported'
          ? 'This server has no folder picker: type the workspace path.'
          : `The folder picker failed (${e.type}): type the workspace path.`,
      );
      workspaceInput.current?.focus();
    }
  }

  async function submit(e: FormEvent) {
    e.preventDefault();
    const body = {
      runtime_kind: runtime,
      ...(agentId && !external ? { agent_id: agentId } : {}),
      ...(provider ? { provider } : {}),
      ...(model ? { model } : {}),
      ...(external && adapterId ? { adapter_id: adapterId } : {}),
      ...(needsWorkspace && workspace ? { workspace } : {}),
      ...(title ? { title } : {}),
    };
    const created = await create.run(() => client.post('/hecate/v1/agent-chat/sessions', { body }));
    if (created) onCreated(created.data.id);
  }

  return (
    <form className="chat-new" aria-labelledby={`${id}-h`} onSubmit={(e) => void submit(e)}>
      <h2 id={`${id}-h`}>New session</h2>
      <fieldset>
        <legend>Runtime</legend>
        {RUNTIMES.map((r) => (
          <label key={r.kind} className="chat-radio">
            <input type="radio" name={`${id}-runtime`} value={r.kind} checked={runtime === r.kind} onChange={() => setRuntime(r.kind)} />
            {r.label} <span className="muted">— {r.hint}</span>
          </label>
        ))}
      </fieldset>
      {runtime !== 'external_agent' ? (
        <label>
          Saved agent
          <select value={agentId} onChange={(e) => setAgentId(e.target.value)}>
            <option value="">None</option>
            {agents.map((a) => (
              <option key={a.id} value={a.id}>
                {a.name}
              </option>
            ))}
          </select>
        </label>
      ) : (
        <label>
          Adapter
          <select value={adapterId} onChange={(e) => setAdapterId(e.target.value)} required>
            <option value="">Choose an adapter</option>
            {adapters.map((a) => (
              <option key={a.id} value={a.id}>
                {a.name}
                {a.available ? '' : ' (not installed)'}
                {a.version_outside_range ? ' (outside tested range)' : ''}
              </option>
            ))}
          </select>
        </label>
      )}
      {adapter ? (
        <p className="chat-adapter-note">
          {adapter.available ? `Found at ${adapter.path ?? adapter.command}` : 'Not installed on the workers'}
          {adapter.version ? ` · version ${adapter.version}` : ''}
          {adapter.version_outside_range ? (
            <span className="chat-chip chat-chip-warn" title={`Tested range: ${adapter.supported_range ?? ''}`}>
              outside tested range
            </span>
          ) : null}
          {adapter.auth_status && adapter.auth_status !== 'ok' ? <span className="chat-chip">auth: {adapter.auth_status}</span> : null}
        </p>
      ) : null}
      <label>
        Provider
        <select value={provider} onChange={(e) => setProvider(e.target.value)}>
          <option value="">Any (routing decides)</option>
          {providers.map((p) => (
            <option key={p.name} value={p.name}>
              {p.name}
              {p.routing_ready ? '' : ` (skipped: ${p.routing_blocked_reason ?? 'not ready'})`}
            </option>
          ))}
        </select>
      </label>
      <label>
        Model
        <input value={model} onChange={(e) => setModel(e.target.value)} list={`${id}-models`} required={runtime !== 'external_agent' && !agentId} />
        <datalist id={`${id}-models`}>
          {models.map((m) => (
            <option key={m} value={m} />
          ))}
        </datalist>
      </label>
      {needsWorkspace ? (
        <div className="chat-workspace">
          <label>
            Workspace path
            <input ref={workspaceInput} value={workspace} onChange={(e) => setWorkspace(e.target.value)} placeholder="/path/to/project" required />
          </label>
          <button type="button" onClick={() => void pickFolder()}>
            Pick folder
          </button>
          {pickerNote ? <p role="status">{pickerNote}</p> : null}
        </div>
      ) : null}
      <label>
        Title
        <input value={title} onChange={(e) => setTitle(e.target.value)} placeholder="optional" />
      </label>
      {create.error ? <ErrorNotice error={create.error} title="Could not create the session" /> : null}
      <div className="chat-actions">
        <button type="submit" disabled={create.busy}>
          Create session
        </button>
        <button type="button" onClick={onCancel}>
          Cancel
        </button>
      </div>
    </form>
  );
}
