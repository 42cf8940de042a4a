import { continuesPrefill } from './model-capabilities.service';

describe('continuesPrefill (docs/takeover.md)', () => {
  it('defaults by protocol: OpenAI answers anew, Anthropic continues a prefill', () => {
    expect(continuesPrefill({ assistant_prefill: null }, 'openai', false)).toBe(false);
    expect(continuesPrefill({ assistant_prefill: null }, 'anthropic', false)).toBe(true);
  });

  it('follows the capability (override or probe) over the protocol', () => {
    expect(continuesPrefill({ assistant_prefill: true }, 'openai', false)).toBe(true);
    expect(continuesPrefill({ assistant_prefill: false }, 'anthropic', false)).toBe(false);
  });

  it('never with thinking on', () => {
    expect(continuesPrefill({ assistant_prefill: null }, 'anthropic', true)).toBe(false);
    expect(continuesPrefill({ assistant_prefill: true }, 'openai', true)).toBe(false);
  });
});
