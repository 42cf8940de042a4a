import type { Schemas } from '@hecate/sdk';

type Capabilities = Schemas['ModelCapabilities'];
type ToolCalling = 'none' | 'basic' | 'parallel';
type ImageInput = 'unknown' | 'none' | 'supported';

/** A capability form's fields as typed; '' is "not set" (the next capability source decides). */
export interface CapabilityDraft {
  tool_calling: ToolCalling | '';
  streaming: '' | 'yes' | 'no';
  max_context_tokens: string;
  image_input: ImageInput | '';
  assistant_prefill: '' | 'yes' | 'no';
  note: string;
}

export const emptyDraft: CapabilityDraft = { tool_calling: '', streaming: '', max_context_tokens: '', image_input: '', assistant_prefill: '', note: '' };

const yn = (v: boolean | null): '' | 'yes' | 'no' => (v === null ? '' : v ? 'yes' : 'no');

/** An override starts from what applies now, so saving it unchanged pins today's capabilities. */
export function draftFrom(c: Capabilities): CapabilityDraft {
  return {
    tool_calling: c.tool_calling === 'unknown' ? 'basic' : c.tool_calling,
    streaming: yn(c.streaming),
    max_context_tokens: c.max_context_tokens === null ? '' : String(c.max_context_tokens),
    image_input: c.image_input,
    assistant_prefill: yn(c.assistant_prefill),
    note: '',
  };
}

/**
 * The request body of an override or a probe: fields left unset are left out. The context is sent as typed (a
 * number the server refuses comes back as its error envelope, shown by the form).
 */
export function draftBody(d: CapabilityDraft) {
  return {
    ...(d.tool_calling ? { tool_calling: d.tool_calling } : {}),
    ...(d.streaming ? { streaming: d.streaming === 'yes' } : {}),
    ...(d.max_context_tokens.trim() ? { max_context_tokens: Number(d.max_context_tokens) } : {}),
    ...(d.image_input ? { image_input: d.image_input } : {}),
    ...(d.assistant_prefill ? { assistant_prefill: d.assistant_prefill === 'yes' } : {}),
    ...(d.note.trim() ? { note: d.note.trim() } : {}),
  };
}

/** The capability fields shared by the override and the probe forms (`requireTools`: an override must set tool calls). */
export function CapabilityFields({
  id,
  draft,
  onChange,
  requireTools,
}: {
  id: string;
  draft: CapabilityDraft;
  onChange: (next: CapabilityDraft) => void;
  requireTools: boolean;
}) {
  const set = <K extends keyof CapabilityDraft>(field: K, value: CapabilityDraft[K]) => onChange({ ...draft, [field]: value });
  const unset = requireTools ? 'not set' : 'not tested';
  return (
    <>
      <div className="form-row">
        <div>
          <label htmlFor={`${id}-tools`}>Tool calls</label>
          <select id={`${id}-tools`} value={draft.tool_calling} onChange={(e) => set('tool_calling', e.target.value as CapabilityDraft['tool_calling'])}>
            {!requireTools && <option value="">{unset}</option>}
            <option value="none">none</option>
            <option value="basic">basic</option>
            <option value="parallel">parallel</option>
          </select>
        </div>
        <div>
          <label htmlFor={`${id}-streaming`}>Streaming</label>
          <select id={`${id}-streaming`} value={draft.streaming} onChange={(e) => set('streaming', e.target.value as CapabilityDraft['streaming'])}>
            <option value="">{unset}</option>
            <option value="yes">yes</option>
            <option value="no">no</option>
          </select>
        </div>
        <div>
          <label htmlFor={`${id}-context`}>Context (tokens)</label>
          <input
            id={`${id}-context`}
            type="number"
            min={1}
            step={1}
            value={draft.max_context_tokens}
            onChange={(e) => set('max_context_tokens', e.target.value)}
          />
        </div>
      </div>
      <div className="form-row">
        <div>
          <label htmlFor={`${id}-images`}>Images</label>
          <select id={`${id}-images`} value={draft.image_input} onChange={(e) => set('image_input', e.target.value as CapabilityDraft['image_input'])}>
            <option value="">{unset}</option>
            <option value="unknown">unknown</option>
            <option value="none">none</option>
            <option value="supported">supported</option>
          </select>
        </div>
        <div>
          <label htmlFor={`${id}-prefill`}>Continues a prefill</label>
          <select
            id={`${id}-prefill`}
            value={draft.assistant_prefill}
            onChange={(e) => set('assistant_prefill', e.target.value as CapabilityDraft['assistant_prefill'])}
          >
            <option value="">{unset}</option>
            <option value="yes">yes</option>
            <option value="no">no</option>
          </select>
        </div>
      </div>
      <label htmlFor={`${id}-note`}>Note</label>
      <input id={`${id}-note`} type="text" maxLength={2000} value={draft.note} onChange={(e) => set('note', e.target.value)} />
    </>
  );
}
