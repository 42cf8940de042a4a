import { InferenceDelta, Json } from '@modules/inference/protocol/normalized';
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
      const out: InferenceDelta[] = [];
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
      const out: InferenceDelta[] = [];
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
