import { BadGatewayRequestError } from '../gateway.errors';
import { prepareResponsesRequest, type ResponseItem } from './responses-request';
import { ResponsesEventEncoder } from './responses-render';

const head = { id: 'resp_1', createdAt: 1, model: 'm', params: {}, previousResponseId: undefined, store: true };

function events(out: string): Array<Record<string, unknown>> {
  return out
    .split('\n\n')
    .filter(Boolean)
    .map((f) => JSON.parse(f.split('\n')[1].slice('data: '.length)) as Record<string, unknown>);
}

describe('Responses API request translation', () => {
  it('replays history and input as chat messages: assistant text and its function calls merge, outputs become tool messages', () => {
    const history: ResponseItem[] = [
      { id: 'msg_a', type: 'message', role: 'user', content: [{ type: 'input_text', text: 'weather?' }] },
      { id: 'msg_b', type: 'message', role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: 'checking', annotations: [] }] },
      { id: 'fc_1', type: 'function_call', call_id: 'c1', name: 'w', arguments: '{"q":1}' },
      { id: 'fc_2', type: 'function_call', call_id: 'c2', name: 'w', arguments: '{"q":2}' },
      { id: 'rs_1', type: 'reasoning', summary: [] },
    ];
    const { prepared, inputItems } = prepareResponsesRequest(
      {
        instructions: 'sys',
        input: [
          { type: 'function_call_output', call_id: 'c1', output: 'sun' },
          { type: 'function_call_output', call_id: 'c2', output: [{ type: 'input_text', text: 'rain' }] },
          { role: 'developer', content: 'be terse' },
          {
            role: 'user',
            content: [
              { type: 'input_text', text: 'and?' },
              { type: 'input_image', image_url: 'data:image/png;base64,AA' },
            ],
          },
        ],
      },
      history,
    );
    expect(prepared.body.messages).toEqual([
      { role: 'system', content: 'sys' },
      { role: 'user', content: 'weather?' },
      {
        role: 'assistant',
        content: 'checking',
        tool_calls: [
          { id: 'c1', type: 'function', function: { name: 'w', arguments: '{"q":1}' } },
          { id: 'c2', type: 'function', function: { name: 'w', arguments: '{"q":2}' } },
        ],
      },
      { role: 'tool', tool_call_id: 'c1', content: 'sun' },
      { role: 'tool', tool_call_id: 'c2', content: 'rain' },
      { role: 'system', content: 'be terse' },
      {
        role: 'user',
        content: [
          { type: 'text', text: 'and?' },
          { type: 'image_url', image_url: { url: 'data:image/png;base64,AA', detail: 'auto' } },
        ],
      },
    ]);
    expect(prepared.needsImages).toBe(true);
    expect(inputItems.map((i) => i.type)).toEqual(['function_call_output', 'function_call_output', 'message', 'message']);
    expect(inputItems.every((i) => typeof i.id === 'string' && i.id.length > 4)).toBe(true);
    // The native body: history without ids or reasoning, then the client's items as sent; never stored upstream.
    expect(prepared.responses).toMatchObject({ store: false, instructions: 'sys' });
    expect((prepared.responses!.input as unknown[]).slice(0, 4).every((i) => !Object.hasOwn(i as object, 'id'))).toBe(true);
    expect(prepared.responses!.input).toHaveLength(8);
  });

  it('maps tools, tool_choice, max_output_tokens, reasoning and text.format', () => {
    const { prepared } = prepareResponsesRequest(
      {
        input: 'x',
        tools: [{ type: 'function', name: 'f', parameters: { type: 'object' }, strict: true }],
        tool_choice: { type: 'function', name: 'f' },
        parallel_tool_calls: false,
        max_output_tokens: 99,
        reasoning: { effort: 'high' },
        text: { format: { type: 'json_schema', name: 'out', schema: { type: 'object' }, strict: true } },
      },
      [],
    );
    expect(prepared.body).toMatchObject({
      tools: [{ type: 'function', function: { name: 'f', parameters: { type: 'object' }, strict: true } }],
      tool_choice: { type: 'function', function: { name: 'f' } },
      parallel_tool_calls: false,
      max_tokens: 99,
      reasoning_effort: 'high',
      response_format: { type: 'json_schema', json_schema: { name: 'out', schema: { type: 'object' }, strict: true } },
    });
  });

  it.each([
    [{}, 'input'],
    [{ input: [] }, 'input'],
    [{ input: [{ role: 'robot', content: 'x' }] }, 'input[0].role'],
    [{ input: [{ type: 'function_call', call_id: 'c', name: 'f', arguments: {} }] }, 'input[0].arguments'],
    [{ input: [{ role: 'user', content: [{ type: 'input_file', file_id: 'f' }] }] }, 'input[0].content[0].type'],
    [{ input: 'x', tool_choice: 'sometimes' }, 'tool_choice'],
  ])('rejects %j at %s', (body, param) => {
    let err: unknown;
    try {
      prepareResponsesRequest(body, []);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(BadGatewayRequestError);
    expect((err as BadGatewayRequestError).details.param).toBe(param);
  });
});

describe('ResponsesEventEncoder', () => {
  it('opens and closes items in order and ends with the whole response', () => {
    const enc = new ResponsesEventEncoder(head);
    let out = enc.encode({ type: 'thinking_delta', thinking: 'hm' });
    out += enc.encode({ type: 'text_delta', text: 'a' });
    out += enc.encode({ type: 'text_delta', text: 'b' });
    out += enc.encode({ type: 'tool_call_start', index: 0, id: 'c1', name: 'f' });
    out += enc.encode({ type: 'tool_call_delta', index: 0, arguments: '{}' });
    out += enc.encode({ type: 'usage', usage: { inputTokens: 5, outputTokens: 7, cachedInputTokens: 2, reasoningTokens: 3 } });
    out += enc.encode({ type: 'stop', stop_reason: 'tool_use' });
    out += enc.end();
    const evs = events(out);
    expect(evs.map((e) => e.sequence_number)).toEqual(evs.map((_, i) => i));
    expect(evs.map((e) => e.type)).toEqual([
      'response.created',
      'response.in_progress',
      'response.output_item.added',
      'response.content_part.added',
      'response.reasoning_text.delta',
      'response.reasoning_text.done',
      'response.content_part.done',
      'response.output_item.done',
      'response.output_item.added',
      'response.content_part.added',
      'response.output_text.delta',
      'response.output_text.delta',
      'response.output_text.done',
      'response.content_part.done',
      'response.output_item.done',
      'response.output_item.added',
      'response.function_call_arguments.delta',
      'response.function_call_arguments.done',
      'response.output_item.done',
      'response.completed',
    ]);
    const r = enc.response!;
    expect(r.status).toBe('completed');
    expect((r.output as Array<Record<string, unknown>>).map((o) => o.type)).toEqual(['reasoning', 'message', 'function_call']);
    expect(r.usage).toEqual({
      input_tokens: 5,
      input_tokens_details: { cached_tokens: 2 },
      output_tokens: 7,
      output_tokens_details: { reasoning_tokens: 3 },
      total_tokens: 12,
    });
  });

  it('a max-tokens stop is incomplete; a broken stream fails with what it had', () => {
    const cut = new ResponsesEventEncoder(head);
    cut.encode({ type: 'text_delta', text: 'par' });
    cut.encode({ type: 'stop', stop_reason: 'max_tokens' });
    expect(events(cut.end()).at(-1)).toMatchObject({
      type: 'response.incomplete',
      response: { status: 'incomplete', incomplete_details: { reason: 'max_output_tokens' } },
    });

    const broken = new ResponsesEventEncoder(head);
    broken.encode({ type: 'text_delta', text: 'par' });
    const evs = events(broken.fail('upstream_error', 'gone'));
    expect(evs.map((e) => e.type)).toEqual([
      'response.output_text.done',
      'response.content_part.done',
      'response.output_item.done',
      'error',
      'response.failed',
    ]);
    expect(broken.response).toMatchObject({ status: 'failed', error: { code: 'upstream_error', message: 'gone' }, output: [{ type: 'message' }] });
  });
});
