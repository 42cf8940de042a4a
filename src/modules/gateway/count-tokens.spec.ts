import { estimateInputTokens } from './count-tokens.service';

describe('estimateInputTokens', () => {
  it('counts what the model reads — system, message text, tool definitions — at 4 characters a token, plus framing', () => {
    const bare = estimateInputTokens({ messages: [{ role: 'user', content: 'x'.repeat(396) }] });
    // 'user' + ' ' + 396 characters = 401 → 101 tokens, and 4 for the one message.
    expect(bare).toBe(105);
    const withTools = estimateInputTokens({
      system: [{ type: 'text', text: 'y'.repeat(40), cache_control: { type: 'ephemeral' } }],
      messages: [{ role: 'user', content: [{ type: 'text', text: 'x'.repeat(396) }] }],
      tools: [{ name: 'read_file', description: 'reads a file', input_schema: { type: 'object', properties: { path: { type: 'string' } } } }],
    });
    expect(withTools).toBeGreaterThan(bare + 10);
  });
});
