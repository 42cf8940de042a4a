import { InvalidInferenceRequestError } from './inference.errors';
import { type InferenceRequest, prepareInternal } from './inference-request';

const hi: InferenceRequest['messages'] = [{ role: 'user', content: 'hi' }];

const rejects = (req: unknown, message: RegExp) => {
  let err: unknown;
  try {
    prepareInternal(req as InferenceRequest, false);
  } catch (e) {
    err = e;
  }
  expect(err).toBeInstanceOf(InvalidInferenceRequestError);
  expect(err).toMatchObject({ status: 500, type: 'gateway_error', message: expect.stringMatching(message) });
};

describe('prepareInternal', () => {
  it('copies every set field into an OpenAI body, with `stream` as asked', () => {
    const req: InferenceRequest = {
      messages: [
        { role: 'system', content: 'sys' },
        { role: 'user', content: 'question' },
      ],
      model: 'gpt-4o-mini',
      provider: 'openai',
      tools: [{ type: 'function', function: { name: 'lookup', description: 'd', parameters: { type: 'object' } } }],
      tool_choice: { type: 'function', function: { name: 'lookup' } },
      max_tokens: 256,
      temperature: 0,
    };
    for (const stream of [false, true]) {
      const p = prepareInternal(req, stream);
      expect(p.body).toEqual({
        messages: req.messages,
        stream,
        model: 'gpt-4o-mini',
        provider: 'openai',
        tools: req.tools,
        tool_choice: req.tool_choice,
        max_tokens: 256,
        temperature: 0,
      });
      expect(p).toMatchObject({
        protocol: 'openai',
        stream,
        model: 'gpt-4o-mini',
        provider: 'openai',
        needsTools: true,
        needsImages: false,
        clientWantsUsage: false,
        hecateMessageFields: false,
        forwardHeaders: undefined,
      });
    }
  });

  it('leaves unset fields out of the body (no undefined keys), and an empty tools list too', () => {
    const p = prepareInternal({ messages: hi, tools: [] }, false);
    expect(p.body).toEqual({ messages: hi, stream: false });
    expect(Object.keys(p.body).sort()).toEqual(['messages', 'stream']);
    expect(p).toMatchObject({ model: undefined, provider: undefined, needsTools: false, needsImages: false, hecateMessageFields: false });
  });

  it('keeps the caller’s messages as given (same array, not copied or rewritten)', () => {
    const messages: InferenceRequest['messages'] = [
      { role: 'user', content: 'x' },
      { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'f', arguments: '{}' } }] },
      { role: 'tool', tool_call_id: 'c1', content: 'result' },
    ];
    expect(prepareInternal({ messages }, true).body.messages).toBe(messages);
  });

  it('needsTools follows a non-empty tools list only', () => {
    expect(prepareInternal({ messages: hi }, false).needsTools).toBe(false);
    expect(prepareInternal({ messages: hi, tools: [] }, false).needsTools).toBe(false);
    expect(prepareInternal({ messages: hi, tools: [{ type: 'function', function: { name: 'f' } }] }, false).needsTools).toBe(true);
  });

  it('needsImages is set by an image_url part in any message, not by text parts or strings', () => {
    expect(prepareInternal({ messages: [{ role: 'user', content: [{ type: 'text', text: 'no image here' }] }] }, false).needsImages).toBe(false);
    expect(prepareInternal({ messages: [{ role: 'user', content: 'image_url' }] }, false).needsImages).toBe(false);
    const withImage: InferenceRequest['messages'] = [
      { role: 'system', content: 'sys' },
      {
        role: 'user',
        content: [
          { type: 'text', text: 'what is this?' },
          { type: 'image_url', image_url: { url: 'data:image/png;base64,AAAA' } },
        ],
      },
    ];
    expect(prepareInternal({ messages: withImage }, false).needsImages).toBe(true);
  });

  it('hecateMessageFields is set when some message carries content_blocks or tool_error', () => {
    expect(prepareInternal({ messages: hi }, false).hecateMessageFields).toBe(false);
    const blocks: InferenceRequest['messages'] = [
      { role: 'user', content: 'q' },
      { role: 'assistant', content: 'a', content_blocks: [{ type: 'thinking', thinking: 'hmm', signature: 'sig' }] },
      { role: 'user', content: 'again' },
    ];
    expect(prepareInternal({ messages: blocks }, false).hecateMessageFields).toBe(true);
    const toolError: InferenceRequest['messages'] = [
      { role: 'user', content: 'q' },
      { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'f', arguments: '{}' } }] },
      { role: 'tool', tool_call_id: 'c1', content: 'boom', tool_error: true },
    ];
    expect(prepareInternal({ messages: toolError }, false).hecateMessageFields).toBe(true);
    // Only the presence counts: an explicit `tool_error: false` is still a Hecate field for an OpenAI upstream to drop.
    expect(prepareInternal({ messages: [{ role: 'tool', tool_call_id: 'c', content: 'ok', tool_error: false }] }, false).hecateMessageFields).toBe(true);
  });

  it('accepts every chat role', () => {
    for (const role of ['system', 'developer', 'user', 'assistant', 'tool'] as const) {
      expect(prepareInternal({ messages: [{ role, content: 'x' }] }, false).body.messages).toHaveLength(1);
    }
  });

  it('rejects what the router cannot send as InvalidInferenceRequestError (a server bug: 500 gateway_error)', () => {
    rejects({ messages: [] }, /messages must be a non-empty array/);
    rejects({}, /messages must be a non-empty array/);
    rejects({ messages: 'hi' }, /messages must be a non-empty array/);
    rejects(
      {
        messages: [
          { role: 'user', content: 'ok' },
          { role: 'robot', content: 'beep' },
        ],
      },
      /messages\[1\]\.role "robot" is not a chat role/,
    );
    rejects({ messages: [{ content: 'no role' }] }, /messages\[0\]\.role undefined is not a chat role/);
    rejects({ messages: hi, model: '' }, /model must not be empty/);
    for (const max_tokens of [0, -1, 1.5, Number.NaN, Infinity]) rejects({ messages: hi, max_tokens }, /max_tokens must be a positive integer/);
    expect(prepareInternal({ messages: hi, max_tokens: 1 }, false).body.max_tokens).toBe(1);
  });
});
