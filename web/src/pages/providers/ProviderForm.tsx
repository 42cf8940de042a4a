import { useId, useState, type FormEvent } from 'react';
import type { Schemas } from '@hecate/sdk';
import { useHecate } from '../../app/hecate';
import { ErrorNotice } from '../../components/ErrorNotice';
import { Loading } from '../../components/Loading';
import { useResource } from '../../components/useResource';
import { useSubmit } from './useSubmit';

type Preset = Schemas['ProviderPreset'];

/**
 * Adds a provider: from a preset (its base URL, protocol and kind; the env snippet shows the same through the
 * environment) or custom. `initial` prefills it (a local runtime found by discovery).
 */
export function AddProviderForm({
  presets,
  initial,
  onDone,
  onCancel,
}: {
  presets: Preset[];
  initial?: { presetId: string; baseUrl: string };
  onDone: (id: string) => void;
  onCancel: () => void;
}) {
  const hecate = useHecate();
  const [presetId, setPresetId] = useState(initial?.presetId ?? '');
  const [name, setName] = useState('');
  const [baseUrl, setBaseUrl] = useState(initial?.baseUrl ?? '');
  const [apiKey, setApiKey] = useState('');
  const [model, setModel] = useState('');
  const [kind, setKind] = useState<'cloud' | 'local'>('local');
  const [protocol, setProtocol] = useState<'openai' | 'anthropic'>('openai');
  const submit = useSubmit();
  const id = useId();
  const preset = presets.find((p) => p.id === presetId);

  const onSubmit = async (event: FormEvent) => {
    event.preventDefault();
    const body = {
      ...(preset ? { preset_id: preset.id } : { kind, protocol }),
      ...(name.trim() ? { custom_name: name.trim() } : {}),
      ...(baseUrl.trim() ? { base_url: baseUrl.trim() } : {}),
      ...(apiKey ? { api_key: apiKey } : {}),
      ...(model.trim() ? { default_model: model.trim() } : {}),
    };
    let created: string | undefined;
    if (await submit.run(async () => (created = (await hecate.post('/hecate/v1/settings/providers', { body })).data.id))) onDone(created!);
  };

  return (
    <form className="panel" aria-label="Add a provider" onSubmit={(e) => void onSubmit(e)}>
      <h3>Add a provider</h3>
      <label htmlFor={`${id}-preset`}>Preset</label>
      <select id={`${id}-preset`} value={presetId} onChange={(e) => setPresetId(e.target.value)}>
        <option value="">Custom (no preset)</option>
        {(['cloud', 'local'] as const).map((k) => (
          <optgroup key={k} label={k === 'cloud' ? 'Cloud' : 'Local runtimes'}>
            {presets
              .filter((p) => p.kind === k)
              .map((p) => (
                <option key={p.id} value={p.id}>
                  {p.name}
                </option>
              ))}
          </optgroup>
        ))}
      </select>
      {preset && (
        <div className="preset-info">
          <p>
            {preset.description}{' '}
            {preset.docs_url && (
              <a href={preset.docs_url} target="_blank" rel="noreferrer noopener">
                {preset.name} documentation
              </a>
            )}
          </p>
          <p className="hint">The same provider through the environment (then restart):</p>
          <pre>{preset.env_snippet}</pre>
        </div>
      )}
      <label htmlFor={`${id}-name`}>{preset ? 'Instance name (optional: another instance of the preset)' : 'Name'}</label>
      <input id={`${id}-name`} type="text" required={!preset} maxLength={64} value={name} onChange={(e) => setName(e.target.value)} />
      <label htmlFor={`${id}-url`}>Base URL</label>
      <input
        id={`${id}-url`}
        type="url"
        required={!preset}
        placeholder={preset?.base_url ?? 'http://127.0.0.1:11434/v1'}
        value={baseUrl}
        onChange={(e) => setBaseUrl(e.target.value)}
      />
      {!preset && (
        <div className="form-row">
          <div>
            <label htmlFor={`${id}-kind`}>Kind</label>
            <select id={`${id}-kind`} value={kind} onChange={(e) => setKind(e.target.value as 'cloud' | 'local')}>
              <option value="local">local (may be on this network)</option>
              <option value="cloud">cloud</option>
            </select>
          </div>
          <div>
            <label htmlFor={`${id}-protocol`}>Protocol</label>
            <select id={`${id}-protocol`} value={protocol} onChange={(e) => setProtocol(e.target.value as 'openai' | 'anthropic')}>
              <option value="openai">OpenAI chat completions</option>
              <option value="anthropic">Anthropic messages</option>
            </select>
          </div>
        </div>
      )}
      <label htmlFor={`${id}-key`}>API key (stored encrypted; never shown again)</label>
      <input id={`${id}-key`} type="password" autoComplete="off" value={apiKey} onChange={(e) => setApiKey(e.target.value)} />
      <label htmlFor={`${id}-model`}>Default model</label>
      <input id={`${id}-model`} type="text" placeholder={preset?.default_model} value={model} onChange={(e) => setModel(e.target.value)} />
      <div className="actions">
        <button type="submit" disabled={submit.busy}>
          {submit.busy ? 'Adding…' : 'Add provider'}
        </button>
        <button type="button" className="secondary" onClick={onCancel}>
          Cancel
        </button>
      </div>
      {submit.error !== undefined && <ErrorNotice error={submit.error} title="The provider was not added" />}
    </form>
  );
}

/** Edits one provider's settings (base URL, default model, enabled), its stored key, or deletes it. */
export function EditProviderForm({ providerId, onDone }: { providerId: string; onDone: () => void }) {
  const hecate = useHecate();
  const provider = useResource(
    async (signal) => (await hecate.get('/hecate/v1/settings/providers/{provider_id}', { signal, path: { provider_id: providerId } })).data,
    [hecate, providerId],
  );
  const p = provider.data;
  const [edits, setEdits] = useState<{ base_url?: string; default_model?: string; enabled?: boolean }>({});
  const [apiKey, setApiKey] = useState('');
  const [confirmDelete, setConfirmDelete] = useState(false);
  const submit = useSubmit();
  const id = useId();
  if (!p) return provider.error !== undefined ? <ErrorNotice error={provider.error} onRetry={provider.reload} /> : <Loading what="the provider" />;

  const save = async (event: FormEvent) => {
    event.preventDefault();
    if (await submit.run(() => hecate.patch('/hecate/v1/settings/providers/{provider_id}', { path: { provider_id: p.id }, body: edits }))) onDone();
  };
  const setKey = async (value: string | null) => {
    if (await submit.run(() => hecate.put('/hecate/v1/settings/providers/{provider_id}/api-key', { path: { provider_id: p.id }, body: { api_key: value } })))
      onDone();
  };
  const remove = async () => {
    if (await submit.run(() => hecate.delete('/hecate/v1/settings/providers/{provider_id}', { path: { provider_id: p.id } }))) onDone();
  };

  return (
    <form className="panel" aria-label={`Edit ${p.display_name}`} onSubmit={(e) => void save(e)}>
      <h3>Edit {p.display_name}</h3>
      <p className="hint">
        {p.source === 'env' ? `Configured by the environment (${p.api_key_env || 'PROVIDER_*'}); changes here override it.` : 'Added in settings.'} Key:{' '}
        {p.credential_state.replace('_', ' ')}.
      </p>
      <label htmlFor={`${id}-url`}>Base URL (changing it drops the stored key unless a new one is set below)</label>
      <input id={`${id}-url`} type="url" value={edits.base_url ?? p.base_url} onChange={(e) => setEdits({ ...edits, base_url: e.target.value })} />
      <label htmlFor={`${id}-model`}>Default model</label>
      <input
        id={`${id}-model`}
        type="text"
        value={edits.default_model ?? p.default_model ?? ''}
        onChange={(e) => setEdits({ ...edits, default_model: e.target.value })}
      />
      <label className="checkbox">
        <input type="checkbox" checked={edits.enabled ?? p.enabled} onChange={(e) => setEdits({ ...edits, enabled: e.target.checked })} /> Enabled for routing
      </label>
      <div className="actions">
        <button type="submit" disabled={submit.busy || Object.keys(edits).length === 0}>
          Save changes
        </button>
        <button type="button" className="secondary" onClick={onDone}>
          Cancel
        </button>
      </div>
      <label htmlFor={`${id}-key`}>New API key</label>
      <input id={`${id}-key`} type="password" autoComplete="off" value={apiKey} onChange={(e) => setApiKey(e.target.value)} />
      <div className="actions">
        <button type="button" className="secondary" disabled={submit.busy || apiKey === ''} onClick={() => void setKey(apiKey)}>
          Store key
        </button>
        {p.api_key_configured && (
          <button type="button" className="secondary" disabled={submit.busy} onClick={() => void setKey(null)}>
            Clear stored key
          </button>
        )}
        {p.source === 'settings' &&
          (confirmDelete ? (
            <button type="button" className="danger" onClick={() => void remove()}>
              Confirm deleting {p.display_name}
            </button>
          ) : (
            <button type="button" className="danger" onClick={() => setConfirmDelete(true)}>
              Delete provider
            </button>
          ))}
      </div>
      {submit.error !== undefined && <ErrorNotice error={submit.error} title="Not saved" />}
    </form>
  );
}
