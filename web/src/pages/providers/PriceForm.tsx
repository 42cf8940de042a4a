import { useId, useState, type FormEvent } from 'react';
import type { Schemas } from '@hecate/sdk';
import { useHecate } from '../../app/hecate';
import { FormOutcome } from './FormOutcome';
import { useSubmit } from './useSubmit';

type Price = Schemas['ModelPrice'];

/** The API's unit is micro-dollars per 1M tokens; the form speaks dollars per 1M tokens. */
const toDollars = (micros: number): string => String(micros / 1_000_000);
const toMicros = (dollars: string): number => Math.round(Number(dollars) * 1_000_000);

/**
 * The price billing uses for one model: an operator price wins over the built-in table (local providers cost 0
 * otherwise). Resetting removes the operator price.
 */
export function PriceForm({ price, onChanged }: { price: Price; onChanged: () => void }) {
  const hecate = useHecate();
  const [input, setInput] = useState(() => toDollars(price.input_micros_usd_per_million_tokens));
  const [output, setOutput] = useState(() => toDollars(price.output_micros_usd_per_million_tokens));
  const [cached, setCached] = useState(() => toDollars(price.cached_input_micros_usd_per_million_tokens));
  const [outcome, setOutcome] = useState<string>();
  const submit = useSubmit();
  const id = useId();
  const path = { provider: price.provider, model: price.model };

  const save = async (event: FormEvent) => {
    event.preventDefault();
    const body = {
      input_micros_usd_per_million_tokens: toMicros(input),
      output_micros_usd_per_million_tokens: toMicros(output),
      ...(cached.trim() ? { cached_input_micros_usd_per_million_tokens: toMicros(cached) } : {}),
    };
    if (await submit.run(() => hecate.put('/hecate/v1/settings/pricing/{provider}/{model}', { path, body }))) {
      setOutcome('Price saved.');
      onChanged();
    }
  };
  const reset = async () => {
    if (await submit.run(() => hecate.delete('/hecate/v1/settings/pricing/{provider}/{model}', { path }))) {
      setOutcome('Operator price removed.');
      onChanged();
    }
  };

  return (
    <form className="panel" aria-label={`Price of ${price.model}`} onSubmit={(e) => void save(e)}>
      <h4>Price (USD per 1M tokens)</h4>
      <p className="hint">Now from: {price.source}.</p>
      <div className="form-row">
        <div>
          <label htmlFor={`${id}-input`}>Input</label>
          <input id={`${id}-input`} type="number" required min={0} step="any" value={input} onChange={(e) => setInput(e.target.value)} />
        </div>
        <div>
          <label htmlFor={`${id}-output`}>Output</label>
          <input id={`${id}-output`} type="number" required min={0} step="any" value={output} onChange={(e) => setOutput(e.target.value)} />
        </div>
        <div>
          <label htmlFor={`${id}-cached`}>Cached input</label>
          <input id={`${id}-cached`} type="number" min={0} step="any" value={cached} onChange={(e) => setCached(e.target.value)} />
        </div>
      </div>
      <div className="actions">
        <button type="submit" disabled={submit.busy}>
          Save price
        </button>
        {price.source === 'manual' && (
          <button type="button" className="secondary" disabled={submit.busy} onClick={() => void reset()}>
            Remove operator price
          </button>
        )}
      </div>
      <FormOutcome outcome={outcome} error={submit.error} refused="The price was not changed" />
    </form>
  );
}
