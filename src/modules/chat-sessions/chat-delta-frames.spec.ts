import { FrameAccumulator } from './chat-delta-frames';

describe('FrameAccumulator', () => {
  it('folds delta frames back into text, signed thinking and tool calls', () => {
    const acc = new FrameAccumulator();
    for (const f of [
      { reasoning: 'let me ' },
      { reasoning: 'think' },
      { reasoning_signature: 'sig' },
      { content: 'Looking' },
      { content: ' it up' },
      { tool_calls: [{ index: 0, id: 'c1', type: 'function' as const, function: { name: 'lookup', arguments: '' } }] },
      { tool_calls: [{ index: 0, function: { arguments: '{"q":' } }] },
      { tool_calls: [{ index: 0, function: { arguments: '"x"}' } }] },
    ])
      acc.add(f);
    expect(acc.reply()).toEqual({
      text: 'Looking it up',
      content_blocks: [
        { type: 'thinking', thinking: 'let me think', signature: 'sig' },
        { type: 'text', text: 'Looking it up' },
        { type: 'tool_use', id: 'c1', name: 'lookup', input: { q: 'x' } },
      ],
      tool_calls: [{ id: 'c1', type: 'function', function: { name: 'lookup', arguments: '{"q":"x"}' } }],
    });
  });

  it('keeps cut tool-call arguments as text and an empty input', () => {
    const acc = new FrameAccumulator();
    acc.add({ tool_calls: [{ index: 0, id: 'c1', function: { name: 'f', arguments: '{"q":' } }] });
    expect(acc.reply().content_blocks).toEqual([{ type: 'tool_use', id: 'c1', name: 'f', input: {} }]);
    expect(acc.reply().tool_calls[0].function.arguments).toBe('{"q":');
  });
});
