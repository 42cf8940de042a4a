import { GatewayDelta, Json } from '@modules/inference/protocol/normalized';
import { anthropicToOpenaiRequest, openaiToAnthropicRequest, withoutHecateMessageFields } from '@modules/inference/protocol/request-translation';
import { normalizeAnthropicResponse, normalizeOpenaiResponse } from '@modules/inference/protocol/response-translation';
import { renderAnthropicMessage, renderOpenaiCompletion } from './response-render';
import { parseFrame, SseFramer } from '@modules/inference/protocol/sse';
import { AnthropicEventDecoder, OpenaiChunkDecoder } from '@modules/inference/protocol/stream-codecs';
import { AnthropicEventEncoder, OpenaiChunkEncoder } from './stream-encoders';

const frames = (text: string): Json[] =>
  new SseFramer()
    .push(Buffer.from(text))
    .map((f) => parseFrame(f).data)
    .filter((d) => d && d !== '[DONE]')
    .map((d) => JSON.parse(d) as Json);

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

describe('response translation', () => {
  it('Anthropic → OpenAI keeps thinking as reasoning_content and content_blocks, maps tool_use and usage', () => {
    const n = normalizeAnthropicResponse({
      id: 'msg_1',
      model: 'c',
      content: [
        { type: 'thinking', thinking: 'why', signature: 'S' },
        { type: 'text', text: 'hi' },
        { type: 'tool_use', id: 't', name: 'f', input: { x: 1 } },
      ],
      stop_reason: 'tool_use',
      usage: { input_tokens: 10, cache_read_input_tokens: 5, cache_creation_input_tokens: 0, output_tokens: 7 },
    });
    const out = renderOpenaiCompletion(n, 'c', 1);
    expect(out).toMatchObject({
      object: 'chat.completion',
      choices: [
        {
          finish_reason: 'tool_calls',
          message: { content: 'hi', reasoning_content: 'why', tool_calls: [{ id: 't', function: { name: 'f', arguments: '{"x":1}' } }] },
        },
      ],
      usage: { prompt_tokens: 15, completion_tokens: 7, total_tokens: 22, prompt_tokens_details: { cached_tokens: 5 } },
    });
    expect(((out.choices as Json[])[0].message as Json).content_blocks).toEqual(n.content_blocks);
  });

  it('OpenAI → Anthropic maps finish reasons, tool calls and usage', () => {
    const n = normalizeOpenaiResponse({
      id: 'chatcmpl-1',
      model: 'g',
      choices: [
        {
          index: 0,
          message: { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'f', arguments: '{"a":2}' } }] },
          finish_reason: 'tool_calls',
        },
      ],
      usage: { prompt_tokens: 9, completion_tokens: 3, total_tokens: 12 },
    });
    expect(renderAnthropicMessage(n, 'g')).toEqual({
      id: 'msg_1',
      type: 'message',
      role: 'assistant',
      model: 'g',
      content: [{ type: 'tool_use', id: 'c1', name: 'f', input: { a: 2 } }],
      stop_reason: 'tool_use',
      stop_sequence: null,
      usage: { input_tokens: 9, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, output_tokens: 3 },
    });
  });
});

describe('stream codecs', () => {
  it('Anthropic events → OpenAI chunks (text, thinking with signature, tool call, usage, [DONE])', () => {
    const dec = new AnthropicEventDecoder();
    const enc = new OpenaiChunkEncoder('chatcmpl-x', 'c', true, 1);
    const events: Json[] = [
      { type: 'message_start', message: { id: 'msg_1', model: 'c', usage: { input_tokens: 4, output_tokens: 1 } } },
      { type: 'content_block_start', index: 0, content_block: { type: 'thinking', thinking: '' } },
      { type: 'content_block_delta', index: 0, delta: { type: 'thinking_delta', thinking: 'plan' } },
      { type: 'content_block_delta', index: 0, delta: { type: 'signature_delta', signature: 'SIG' } },
      { type: 'content_block_stop', index: 0 },
      { type: 'content_block_start', index: 1, content_block: { type: 'text', text: '' } },
      { type: 'content_block_delta', index: 1, delta: { type: 'text_delta', text: 'Hel' } },
      { type: 'content_block_delta', index: 1, delta: { type: 'text_delta', text: 'lo' } },
      { type: 'content_block_start', index: 2, content_block: { type: 'tool_use', id: 'tu', name: 'f', input: {} } },
      { type: 'content_block_delta', index: 2, delta: { type: 'input_json_delta', partial_json: '{"a":' } },
      { type: 'content_block_delta', index: 2, delta: { type: 'input_json_delta', partial_json: '1}' } },
      { type: 'message_delta', delta: { stop_reason: 'tool_use' }, usage: { output_tokens: 9 } },
      { type: 'message_stop' },
    ];
    let text = '';
    for (const e of events) {
      const out: GatewayDelta[] = [];
      dec.decode(e, out);
      for (const d of out) text += enc.encode(d);
    }
    text += enc.end();
    expect(text.endsWith('data: [DONE]\n\n')).toBe(true);
    const chunks = frames(text);
    const deltas = chunks.flatMap((c) => ((c.choices as Json[])[0] ? [(c.choices as Json[])[0].delta as Json] : []));
    expect(deltas.map((d) => d.content ?? '').join('')).toBe('Hello');
    expect(deltas.map((d) => d.reasoning_content ?? '').join('')).toBe('plan');
    expect(deltas.find((d) => d.content_blocks)).toEqual({ content_blocks: [{ type: 'thinking', thinking: 'plan', signature: 'SIG' }] });
    const args = deltas
      .flatMap((d) => (d.tool_calls as Json[] | undefined) ?? [])
      .map((t) => (t.function as Json).arguments)
      .join('');
    expect(args).toBe('{"a":1}');
    expect((chunks[chunks.length - 2].choices as Json[])[0].finish_reason).toBe('tool_calls');
    expect(chunks[chunks.length - 1].usage).toMatchObject({ prompt_tokens: 4, completion_tokens: 9 });
  });

  it('OpenAI chunks → Anthropic events (message_start … message_stop, tool_use block, usage)', () => {
    const dec = new OpenaiChunkDecoder();
    const enc = new AnthropicEventEncoder('msg_x', 'g');
    const chunks: Json[] = [
      { id: 'c1', model: 'g', choices: [{ index: 0, delta: { role: 'assistant', content: '' } }] },
      { id: 'c1', model: 'g', choices: [{ index: 0, delta: { content: 'Hi' } }] },
      {
        id: 'c1',
        model: 'g',
        choices: [{ index: 0, delta: { tool_calls: [{ index: 0, id: 'call_9', type: 'function', function: { name: 'f', arguments: '' } }] } }],
      },
      { id: 'c1', model: 'g', choices: [{ index: 0, delta: { tool_calls: [{ index: 0, function: { arguments: '{"b":2}' } }] } }] },
      { id: 'c1', model: 'g', choices: [{ index: 0, delta: {}, finish_reason: 'tool_calls' }] },
      { id: 'c1', model: 'g', choices: [], usage: { prompt_tokens: 3, completion_tokens: 5, total_tokens: 8 } },
    ];
    let text = '';
    for (const c of chunks) {
      const out: GatewayDelta[] = [];
      dec.decode(c, out);
      for (const d of out) text += enc.encode(d);
    }
    text += enc.end();
    const events = frames(text);
    expect(events.map((e) => e.type)).toEqual([
      'message_start',
      'content_block_start',
      'content_block_delta',
      'content_block_stop',
      'content_block_start',
      'content_block_delta',
      'content_block_stop',
      'message_delta',
      'message_stop',
    ]);
    expect(events[4]).toMatchObject({ content_block: { type: 'tool_use', id: 'call_9', name: 'f' } });
    expect(events[7]).toMatchObject({ delta: { stop_reason: 'tool_use' }, usage: { input_tokens: 3, output_tokens: 5 } });
  });

  it('frames SSE across chunk boundaries', () => {
    const f = new SseFramer();
    expect(f.push(Buffer.from('data: {"a":1}\n\ndata: {"b"'))).toHaveLength(1);
    const rest = f.push(Buffer.from(':2}\n\n'));
    expect(rest.map((b) => parseFrame(b).data)).toEqual(['{"b":2}']);
  });
});
