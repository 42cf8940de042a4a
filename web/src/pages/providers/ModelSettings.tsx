import { useId, useState, type FormEvent } from 'react';
import type { Schemas } from '@hecate/sdk';
import { useHecate } from '../../app/hecate';
import { formatCount, formatTime } from '../../components/format';
import { CapabilityFields, draftBody, draftFrom, emptyDraft } from './capability-fields';
import { PriceForm } from './PriceForm';
import { FormOutcome } from './FormOutcome';
import { useSubmit } from './useSubmit';

type ProviderModel = Schemas['ProviderModel'];
type CapabilityRecord = Schemas['ModelCapabilityRecord'];

/** One line on what a stored override or probe says (the fields it left unset are not named). */
function describe(r: CapabilityRecord): string {
  const parts = [
    r.tool_calling !== null && `tool calls ${r.tool_calling}`,
    r.streaming !== null && `streaming ${r.streaming ? 'yes' : 'no'}`,
    r.max_context_tokens !== null && `context ${formatCount(r.max_context_tokens)}`,
    r.image_input !== null && `images ${r.image_input}`,
    r.assistant_prefill !== null && `continues a prefill ${r.assistant_prefill ? 'yes' : 'no'}`,
  ].filter(Boolean);
  return `${parts.join(', ') || 'nothing set'} (at ${formatTime(r.updated_at)})`;
}

/**
 * An operator override of one model's capabilities: it wins over probes, the catalog and what the provider reports
 * (docs/api.md; the seeds' "Model capabilities"). Removing it falls back to the next source.
 */
function OverrideForm({ row, onChanged }: { row: ProviderModel; onChanged: () => void }) {
  const hecate = useHecate();
  const [draft, setDraft] = useState(() => draftFrom(row.capabilities));
  const [outcome, setOutcome] = useState<string>();
  const submit = useSubmit();
  const id = useId();
  const key = { provider: row.provider, model: row.model };
  const overridden = row.capabilities.source === 'operator_override';

  const save = async (event: FormEvent) => {
    event.preventDefault();
    const body = { ...key, ...draftBody(draft), tool_calling: draft.tool_calling || 'basic' };
    let stored: CapabilityRecord | undefined;
    if (await submit.run(async () => (stored = (await hecate.put('/hecate/v1/model-capabilities/overrides', { body })).data))) {
      setOutcome(`Override set: ${describe(stored!)}.`);
      onChanged();
    }
  };
  const remove = async () => {
    let now: Schemas['ModelCapabilityRemoved'] | undefined;
    if (await submit.run(async () => (now = (await hecate.delete('/hecate/v1/model-capabilities/overrides', { query: key })).data))) {
      setOutcome(`Override removed; capabilities now from ${now!.source.replace(/_/g, ' ')}: tool calls ${now!.tool_calling}.`);
      onChanged();
    }
  };

  return (
    <form className="panel" aria-label={`Capability override of ${row.model}`} onSubmit={(e) => void save(e)}>
      <h4>Capability override</h4>
      <p className="hint">Wins over probes, the catalog and what the provider reports, for every tenant.</p>
      <CapabilityFields id={id} draft={draft} onChange={setDraft} requireTools />
      <div className="actions">
        <button type="submit" disabled={submit.busy}>
          Set override
        </button>
        {overridden && (
          <button type="button" className="secondary" disabled={submit.busy} onClick={() => void remove()}>
            Remove override
          </button>
        )}
      </div>
      <FormOutcome outcome={outcome} error={submit.error} refused="The override was not changed" />
    </form>
  );
}

/**
 * A probe result: what the operator found when they tried the model (the server records it; it runs no probe of its
 * own). It wins over the catalog and the provider, and loses to an override.
 */
function ProbeForm({ row, onChanged }: { row: ProviderModel; onChanged: () => void }) {
  const hecate = useHecate();
  const [draft, setDraft] = useState(emptyDraft);
  const [outcome, setOutcome] = useState<string>();
  const submit = useSubmit();
  const id = useId();

  const record = async (event: FormEvent) => {
    event.preventDefault();
    setOutcome(undefined);
    const body = { provider: row.provider, model: row.model, ...draftBody(draft) };
    let stored: CapabilityRecord | undefined;
    if (await submit.run(async () => (stored = (await hecate.post('/hecate/v1/model-capabilities/probes', { body })).data))) {
      const shadowed = row.capabilities.source === 'operator_override' ? ' The override still wins over it.' : '';
      setOutcome(`Probe recorded: ${describe(stored!)}.${shadowed}`);
      onChanged();
    }
  };

  return (
    <form className="panel" aria-label={`Probe of ${row.model}`} onSubmit={(e) => void record(e)}>
      <h4>Probe</h4>
      <p className="hint">Record what a test of the model showed (a tool-call prompt, a long context, an image).</p>
      <CapabilityFields id={id} draft={draft} onChange={setDraft} requireTools={false} />
      <div className="actions">
        <button type="submit" disabled={submit.busy}>
          Record probe
        </button>
      </div>
      <FormOutcome outcome={outcome} error={submit.error} refused="The probe was not recorded" />
    </form>
  );
}

/** The settings of one model: its capability override, a probe result, and its price. */
export function ModelSettings({ row, onChanged, onClose }: { row: ProviderModel; onChanged: () => void; onClose: () => void }) {
  return (
    <section className="model-settings" aria-labelledby="model-settings-title">
      <div className="page-head">
        <h3 id="model-settings-title">
          Settings of <code>{row.model}</code>
        </h3>
        <div className="actions">
          <button type="button" className="secondary" onClick={onClose}>
            Close settings
          </button>
        </div>
      </div>
      <OverrideForm row={row} onChanged={onChanged} />
      <ProbeForm row={row} onChanged={onChanged} />
      <PriceForm price={row.price} onChanged={onChanged} />
    </section>
  );
}
