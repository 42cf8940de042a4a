import type { Json } from './normalized';
import { anthropicToOpenaiRequest, openaiToAnthropicRequest, withoutHecateMessageFields } from './request-translation';

describe('request translation', () => {
  it('OpenAI → Anthropic: system, images, tool calls and results, tools, tool_choice, stop, max tokens', () => {
    const out = openaiToAnthropicRequest(
      {
        messages: [
          { role: 'system', content: 'be brief' },
          {
            role: 'user',
            content: [
              { type: 'text', text: 'what is this?' },
              { type: 'image_url', image_url: { url: 'data:image/png;base64,AAAA' } },
            ],
          },
          { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'lookup', arguments: '{"q":"x"}' } }] },
          { role: 'tool', tool_call_id: 'call_1', content: 'found' },
          { role: 'user', content: 'thanks' },
        ],
        tools: [{ type: 'function', function: { name: 'lookup', description: 'd', parameters: { type: 'object', properties: { q: { type: 'string' } } } } }],
        tool_choice: 'required',
        parallel_tool_calls: false,
        stop: 'END',
        max_completion_tokens: 50,
      },
      'claude-x',
      true,
    );
    expect(out).toEqual({
      model: 'claude-x',
      system: 'be brief',
      max_tokens: 50,
      stream: true,
      stop_sequences: ['END'],
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'what is this?' },
            { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'AAAA' } },
          ],
        },
        { role: 'assistant', content: [{ type: 'tool_use', id: 'call_1', name: 'lookup', input: { q: 'x' } }] },
        {
          role: 'user',
          content: [
            { type: 'tool_result', tool_use_id: 'call_1', content: 'found' },
            { type: 'text', text: 'thanks' },
          ],
        },
      ],
      tools: [{ name: 'lookup', description: 'd', input_schema: { type: 'object', properties: { q: { type: 'string' } } } }],
      tool_choice: { type: 'any', disable_parallel_tool_use: true },
    });
  });

  it('OpenAI → Anthropic replays content_blocks verbatim (thinking signatures survive a tool loop)', () => {
    const blocks = [
      { type: 'thinking', thinking: 'hmm', signature: 'sig' },
      { type: 'tool_use', id: 't1', name: 'f', input: {} },
    ];
    const out = openaiToAnthropicRequest(
      {
        messages: [
          { role: 'user', content: 'go' },
          { role: 'assistant', content: '', content_blocks: blocks },
        ],
      },
      'c',
      false,
    );
    expect((out.messages as Json[])[1]).toEqual({ role: 'assistant', content: blocks });
  });

  it('OpenAI → Anthropic leaves out unsigned thinking (reasoning from another provider) and keeps the rest', () => {
    const unsigned = [
      { type: 'thinking', thinking: 'from deepseek', signature: '' },
      { type: 'text', text: 'answer' },
    ];
    const out = openaiToAnthropicRequest(
      {
        messages: [
          { role: 'user', content: 'go' },
          { role: 'assistant', content: 'answer', content_blocks: unsigned },
        ],
      },
      'c',
      false,
    );
    expect((out.messages as Json[])[1]).toEqual({ role: 'assistant', content: [{ type: 'text', text: 'answer' }] });
    // Only unsigned thinking: the message falls back to its content and tool calls.
    const onlyThinking = openaiToAnthropicRequest(
      {
        messages: [
          { role: 'user', content: 'go' },
          {
            role: 'assistant',
            content: 'ok',
            content_blocks: [{ type: 'thinking', thinking: 'x' }],
            tool_calls: [{ id: 'c1', type: 'function', function: { name: 'f', arguments: '{"a":1}' } }],
          },
        ],
      },
      'c',
      false,
    );
    expect((onlyThinking.messages as Json[])[1]).toEqual({
      role: 'assistant',
      content: [
        { type: 'text', text: 'ok' },
        { type: 'tool_use', id: 'c1', name: 'f', input: { a: 1 } },
      ],
    });
  });

  it('OpenAI → Anthropic: a tool message with tool_error becomes a tool_result with is_error', () => {
    const out = openaiToAnthropicRequest(
      {
        messages: [
          { role: 'user', content: 'go' },
          {
            role: 'assistant',
            content: null,
            tool_calls: [
              { id: 'c1', type: 'function', function: { name: 'f', arguments: '{}' } },
              { id: 'c2', type: 'function', function: { name: 'g', arguments: '{}' } },
            ],
          },
          { role: 'tool', tool_call_id: 'c1', content: 'The tool call was not executed: stopped.', tool_error: true },
          { role: 'tool', tool_call_id: 'c2', content: 'fine', tool_error: false },
        ],
      },
      'c',
      false,
    );
    expect((out.messages as Json[])[2]).toEqual({
      role: 'user',
      content: [
        { type: 'tool_result', tool_use_id: 'c1', content: 'The tool call was not executed: stopped.', is_error: true },
        { type: 'tool_result', tool_use_id: 'c2', content: 'fine' },
      ],
    });
  });

  it('Anthropic → OpenAI: a tool_result with is_error keeps its error text in the tool message (no flag field)', () => {
    const out = anthropicToOpenaiRequest(
      {
        max_tokens: 10,
        messages: [
          { role: 'user', content: 'go' },
          { role: 'assistant', content: [{ type: 'tool_use', id: 'tu1', name: 'f', input: {} }] },
          {
            role: 'user',
            content: [
              { type: 'tool_result', tool_use_id: 'tu1', is_error: true, content: [{ type: 'text', text: 'permission denied' }] },
              { type: 'text', text: 'try again' },
            ],
          },
        ],
      },
      'gpt-x',
      false,
    );
    expect((out.messages as Json[]).slice(2)).toEqual([
      { role: 'tool', tool_call_id: 'tu1', content: 'Error: permission denied' },
      { role: 'user', content: 'try again' },
    ]);
  });

  it('OpenAI → OpenAI: Hecate message fields are removed, other message fields kept, untouched messages not copied', () => {
    const user = { role: 'user', content: 'go', name: 'ann' };
    const call = { id: 'c1', type: 'function', function: { name: 'f', arguments: '{}' } };
    const messages = [
      user,
      {
        role: 'assistant',
        content: null,
        tool_calls: [call],
        content_blocks: [
          { type: 'thinking', thinking: 'hmm', signature: 's' },
          { type: 'tool_use', id: 'c1', name: 'f', input: {} },
        ],
        refusal: null,
      },
      { role: 'tool', tool_call_id: 'c1', content: 'The tool call was not executed: stopped.', tool_error: true },
      {
        role: 'assistant',
        content_blocks: [
          { type: 'thinking', thinking: 'x', signature: 's' },
          { type: 'text', text: 'done' },
        ],
      },
      {
        role: 'assistant',
        content: null,
        tool_calls: [call],
        content_blocks: [
          { type: 'text', text: 'checking' },
          { type: 'tool_use', id: 'c1', name: 'f', input: {} },
        ],
      },
    ];
    const out = withoutHecateMessageFields(messages);
    expect(out).toEqual([
      { role: 'user', content: 'go', name: 'ann' },
      { role: 'assistant', content: null, tool_calls: [call], refusal: null },
      { role: 'tool', tool_call_id: 'c1', content: 'The tool call was not executed: stopped.' },
      { role: 'assistant', content: 'done' },
      { role: 'assistant', content: 'checking', tool_calls: [call] },
    ]);
    expect(out[0]).toBe(user);
    expect(messages[2]).toHaveProperty('tool_error', true);
  });

  it('Anthropic → OpenAI: a system message inside messages (Claude Code sends them) stays a system message in place', () => {
    const out = anthropicToOpenaiRequest(
      {
        system: 'top',
        messages: [
          { role: 'user', content: 'hi' },
          { role: 'system', content: [{ type: 'text', text: 'mid' }] },
          { role: 'user', content: 'again' },
        ],
      },
      'm',
      false,
    );
    expect(out.messages).toEqual([
      { role: 'system', content: 'top' },
      { role: 'user', content: 'hi' },
      { role: 'system', content: 'mid' },
      { role: 'user', content: 'again' },
    ]);
  });

  it('Anthropic → OpenAI: system, tool_use, tool_result, images, tool_choice', () => {
    const out = anthropicToOpenaiRequest(
      {
        system: [{ type: 'text', text: 'sys' }],
        max_tokens: 10,
        messages: [
          {
            role: 'user',
            content: [
              { type: 'text', text: 'look' },
              { type: 'image', source: { type: 'url', url: 'https://x/y.png' } },
            ],
          },
          {
            role: 'assistant',
            content: [
              { type: 'thinking', thinking: 't', signature: 's' },
              { type: 'tool_use', id: 'tu1', name: 'f', input: { a: 1 } },
            ],
          },
          { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'tu1', content: [{ type: 'text', text: 'ok' }] }] },
        ],
        tools: [{ name: 'f', input_schema: { type: 'object' } }],
        tool_choice: { type: 'tool', name: 'f' },
      },
      'gpt-x',
      true,
    );
    expect(out).toEqual({
      model: 'gpt-x',
      max_tokens: 10,
      stream: true,
      stream_options: { include_usage: true },
      messages: [
        { role: 'system', content: 'sys' },
        {
          role: 'user',
          content: [
            { type: 'text', text: 'look' },
            { type: 'image_url', image_url: { url: 'https://x/y.png' } },
          ],
        },
        { role: 'assistant', content: null, tool_calls: [{ id: 'tu1', type: 'function', function: { name: 'f', arguments: '{"a":1}' } }] },
        { role: 'tool', tool_call_id: 'tu1', content: 'ok' },
      ],
      tools: [{ type: 'function', function: { name: 'f', parameters: { type: 'object' } } }],
      tool_choice: { type: 'function', function: { name: 'f' } },
    });
  });
});
