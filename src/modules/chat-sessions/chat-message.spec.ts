import { assistantMessage, extendAssistantMessage, newCallId, newClientMessages, openToolCalls, withSystemPrompt } from './chat-message';

const u = (content: string) => ({ role: 'user', content });
const a = (content: string) => ({ role: 'assistant', content });

describe('newClientMessages (RecordChatExchange diff)', () => {
  it('takes everything on a first turn', () => {
    expect(newClientMessages([u('hi')], 0, null)).toEqual([u('hi')]);
  });

  it('takes what follows the persisted count when the request replays the stored path', () => {
    expect(newClientMessages([u('a'), a('A'), u('b')], 2, a('A'))).toEqual([u('b')]);
    const call = { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function' as const, function: { name: 'f', arguments: '{}' } }] };
    const result = { role: 'tool', tool_call_id: 'c1', content: 'r' };
    expect(newClientMessages([u('a'), call, result], 2, call)).toEqual([result]);
  });

  it('aligns on the stored leaf when the request is longer than the stored path (compacted session)', () => {
    const history = [u('a'), a('A'), u('b'), a('B'), u('c')];
    expect(newClientMessages(history, 3, a('B'))).toEqual([u('c')]);
  });

  it('keeps only trailing user/tool messages when the request does not replay the stored path', () => {
    expect(newClientMessages([u('c')], 3, a('B'))).toEqual([u('c')]);
    expect(newClientMessages([a('X'), u('c'), u('d')], 3, a('B'))).toEqual([u('c'), u('d')]);
  });
});

describe('message helpers', () => {
  it('prepends the session system prompt unless the conversation starts with a system message', () => {
    expect(withSystemPrompt([u('x')], 'P')).toEqual([{ role: 'system', content: 'P' }, u('x')]);
    expect(withSystemPrompt([{ role: 'system', content: 'mine' }, u('x')], 'P')[0].content).toBe('mine');
    expect(withSystemPrompt([u('x')], '')).toEqual([u('x')]);
  });

  it('builds assistant messages (null content with only tool calls; cut arguments repaired) and extends them', () => {
    const cut = assistantMessage(
      {
        text: '',
        content_blocks: [{ type: 'tool_use', id: 't', name: 'f', input: { _raw: '{"a' } }],
        tool_calls: [{ id: 't', type: 'function', function: { name: 'f', arguments: '{"a' } }],
      },
      { repairArguments: true },
    );
    expect(cut).toEqual({
      role: 'assistant',
      content: null,
      content_blocks: [{ type: 'tool_use', id: 't', name: 'f', input: {} }],
      tool_calls: [{ id: 't', type: 'function', function: { name: 'f', arguments: '{}' } }],
    });
    const partial = assistantMessage({ text: 'Once', content_blocks: [{ type: 'text', text: 'Once' }], tool_calls: [] });
    expect(extendAssistantMessage(partial, { text: ' upon', content_blocks: [{ type: 'text', text: ' upon' }], tool_calls: [] })).toEqual({
      role: 'assistant',
      content: 'Once upon',
      content_blocks: [{ type: 'text', text: 'Once upon' }],
    });
    expect(openToolCalls(cut, [])).toEqual(['t']);
    expect(openToolCalls(cut, [{ role: 'tool', tool_call_id: 't', content: '' }])).toEqual([]);
  });
});

describe('newCallId', () => {
  it('sorts in creation order, also within one millisecond, in the call_ + 32 hex format', () => {
    const ids = Array.from({ length: 5000 }, () => newCallId());
    expect(ids.every((id) => /^call_[0-9a-f]{32}$/.test(id))).toBe(true);
    expect([...ids].sort()).toEqual(ids);
    expect(new Set(ids).size).toBe(ids.length);
  });
});
