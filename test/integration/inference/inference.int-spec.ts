import 'reflect-metadata';
import { INestApplicationContext, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { AppConfig } from '@core/config/app-config';
import { AppConfigValues, loadConfig } from '@core/config/config.loader';
import { ConfigModule } from '@core/config/config.module';
import { DatabaseModule, openDatabase } from '@core/database/database.module';
import { InfrastructureModule } from '@core/infrastructure.module';
import { MetricsService } from '@core/metrics/metrics.service';
import { LiveStreamBuffer } from '@core/live-streams/live-stream-buffer.port';
import {
  BudgetExceededError,
  DEFAULT_WORST_CASE_OUTPUT_TOKENS,
  type InferenceDelta,
  InferenceModule,
  type InferenceRequest,
  InferenceService,
  InvalidInferenceRequestError,
  type LiveDeltaFrame,
} from '@modules/inference';
import { PricingService } from '@modules/providers/pricing.service';
import { UsageLedgerService } from '@modules/inference/usage/usage-ledger.service';
import { startFakeUpstream, type FakeUpstream, type RecordedRequest } from '../../support/fake-upstream/fake-upstream.js';
import { migratedEmbeddedDataDir } from '../../support/database';
import { uniqueId } from '../../support/infra';

/**
 * InferenceService built by Nest from the app's own wiring in embedded mode: ConfigModule, DatabaseModule (PGlite in a
 * temp dir, migrated by openDatabase), InfrastructureModule (in-process bus, memory LiveStreamBuffer) and the real
 * InferenceModule (ProvidersModule + UsageModule), with providers configured through PROVIDER_* env at fake upstreams.
 *
 * CoreModule itself also imports HealthModule, whose @nestjs/terminus is ESM-only and cannot be loaded by Jest's
 * CommonJS runtime (nor can @nestjs/testing): the root module below imports CoreModule's other three modules and
 * provides the HealthModule service the graph uses (MetricsService), globally as HealthModule does.
 */
@Module({ providers: [MetricsService], exports: [MetricsService] })
class SystemInfoStandIn {}

const OPENAI_KEY = 'sk-inference-int-openai-0001';
const ANTHROPIC_KEY = 'sk-ant-inference-int-0002';
const TENANT = 'tenant-inference';

const isCompletion = (r: RecordedRequest) => r.method === 'POST' && (r.path === '/v1/chat/completions' || r.path === '/v1/messages');
const user = (content: string): InferenceRequest['messages'] => [{ role: 'user', content }];

describe('InferenceService (embedded: PGlite, in-process bus and live buffer, fake upstreams)', () => {
  let oai: FakeUpstream;
  let anth: FakeUpstream;
  let app: INestApplicationContext;
  let config: AppConfigValues;
  let inference: InferenceService;
  let ledger: UsageLedgerService;
  let pricing: PricingService;
  let buffer: LiveStreamBuffer;

  const completions = (u: FakeUpstream) => u.requests.filter(isCompletion);

  beforeAll(async () => {
    oai = await startFakeUpstream({ models: ['gpt-4o-mini', 'budget-model'], requireKey: OPENAI_KEY });
    anth = await startFakeUpstream({ models: ['claude-fake'], requireKey: ANTHROPIC_KEY });
    config = loadConfig({
      // A copy of the run's migrated PGlite template: openDatabase finds no migration pending.
      GATEWAY_DATA_DIR: await migratedEmbeddedDataDir('hecate-inference-'),
      PROVIDER_FAKEAI_BASE_URL: `${oai.url}/v1`,
      PROVIDER_FAKEAI_API_KEY: OPENAI_KEY,
      PROVIDER_FAKEAI_KIND: 'cloud',
      PROVIDER_FAKEANTH_BASE_URL: `${anth.url}/v1`,
      PROVIDER_FAKEANTH_API_KEY: ANTHROPIC_KEY,
      PROVIDER_FAKEANTH_KIND: 'cloud',
      PROVIDER_FAKEANTH_PROTOCOL: 'anthropic',
      GATEWAY_ALLOW_PRIVATE_PROVIDER_URLS: 'true',
      GATEWAY_PROVIDER_MAX_ATTEMPTS: '1',
      // Rows reach the table only through flush() (UsageLedgerService.events flushes first).
      GATEWAY_USAGE_FLUSH_INTERVAL: '1h',
    });
    expect(config.mode).toBe('embedded');
    const dataSource = await openDatabase(config, 'test');

    @Module({
      imports: [
        ConfigModule.forRoot(config),
        DatabaseModule.forRoot(dataSource),
        InfrastructureModule.forRoot(null),
        { module: SystemInfoStandIn, global: true },
        InferenceModule,
      ],
    })
    class TestRoot {}

    app = await NestFactory.createApplicationContext(TestRoot, { logger: false, abortOnError: false });
    await app.init();
    inference = app.get(InferenceService);
    ledger = app.get(UsageLedgerService);
    pricing = app.get(PricingService);
    buffer = app.get<LiveStreamBuffer>(LiveStreamBuffer);
    expect(app.get(AppConfig)).toBe(config);
    // 1 micro-USD per input token, 2 per output token: costs are exact integers.
    await pricing.put('fakeai', 'gpt-4o-mini', { input_micros_usd_per_million_tokens: 1_000_000, output_micros_usd_per_million_tokens: 2_000_000 });
    await pricing.put('fakeanth', 'claude-fake', { input_micros_usd_per_million_tokens: 1_000_000, output_micros_usd_per_million_tokens: 2_000_000 });
  });
  afterEach(() => {
    oai.reset();
    anth.reset();
  });
  afterAll(async () => {
    await app?.close();
    await Promise.all([oai?.close(), anth?.close()]);
  });

  describe('complete()', () => {
    it('returns text, usage, cost and the route, and writes one ledger row with the origin request id and endpoint', async () => {
      oai.script({ match: 'gpt-4o-mini', content: 'The answer is 42.', usage: { input: 12, output: 7 } });
      const origin = { requestId: uniqueId('req_origin_'), traceId: uniqueId('trace_') };
      const r = await inference.complete(
        { model: 'gpt-4o-mini', messages: [{ role: 'system', content: 'be brief' }, ...user('what is the answer?')], max_tokens: 64, temperature: 0.2 },
        { tenantId: TENANT, origin, endpoint: '/hecate/v1/chat/sessions/send' },
      );
      expect(r).toMatchObject({
        request_id: origin.requestId,
        provider: 'fakeai',
        provider_kind: 'cloud',
        model: 'gpt-4o-mini',
        route_reason: 'requested_model',
        attempts: 1,
        failover: false,
        text: 'The answer is 42.',
        tool_calls: [],
        stop_reason: 'end_turn',
        usage: { input_tokens: 12, output_tokens: 7, cached_input_tokens: 0 },
        cost_micros_usd: 12 + 7 * 2,
        cost_usd: '0.000026',
        protocol: 'openai',
      });
      expect(r.content_blocks).toEqual([{ type: 'text', text: 'The answer is 42.' }]);

      // What went upstream: one non-streaming OpenAI request with the typed request's fields.
      const sent = completions(oai);
      expect(sent).toHaveLength(1);
      expect(sent[0]).toMatchObject({ path: '/v1/chat/completions', model: 'gpt-4o-mini', stream: false, apiKey: OPENAI_KEY });
      expect(sent[0].body).toMatchObject({ max_tokens: 64, temperature: 0.2, messages: [{ role: 'system', content: 'be brief' }, { role: 'user' }] });

      const rows = await ledger.events({ tenantId: TENANT, requestId: origin.requestId }, 10);
      expect(rows).toEqual([
        expect.objectContaining({
          tenant_id: TENANT,
          request_id: origin.requestId,
          trace_id: origin.traceId,
          endpoint: '/hecate/v1/chat/sessions/send',
          provider: 'fakeai',
          provider_kind: 'cloud',
          model: 'gpt-4o-mini',
          route_reason: 'requested_model',
          attempt: 1,
          status: 'ok',
          stream: false,
          input_tokens: 12,
          output_tokens: 7,
          cost_micros_usd: 26,
        }),
      ]);
    });

    it('defaults the ledger endpoint to `router` and mints a request id without an origin', async () => {
      oai.script({ match: 'gpt-4o-mini', content: 'ok', usage: { input: 3, output: 1 } });
      const r = await inference.complete({ model: 'gpt-4o-mini', messages: user('hi') }, { tenantId: TENANT });
      expect(r.request_id).toMatch(/^req_[0-9a-f]{16,}$/);
      const rows = await ledger.events({ tenantId: TENANT, requestId: r.request_id }, 10);
      expect(rows).toEqual([expect.objectContaining({ endpoint: 'router', status: 'ok', cost_micros_usd: 5 })]);
    });

    it("removes Hecate's message fields (content_blocks, tool_error) before an OpenAI upstream sees them", async () => {
      oai.script({ match: 'gpt-4o-mini', content: 'noted' });
      const r = await inference.complete(
        {
          model: 'gpt-4o-mini',
          messages: [
            ...user('q'),
            {
              role: 'assistant',
              content: null,
              content_blocks: [{ type: 'text', text: 'calling' }],
              tool_calls: [{ id: 'c1', type: 'function', function: { name: 'f', arguments: '{}' } }],
            },
            { role: 'tool', tool_call_id: 'c1', content: 'boom', tool_error: true },
          ],
        },
        { tenantId: TENANT },
      );
      expect(r.text).toBe('noted');
      const sent = completions(oai)[0].body!.messages!;
      expect(sent).toEqual([
        { role: 'user', content: 'q' },
        { role: 'assistant', content: 'calling', tool_calls: [{ id: 'c1', type: 'function', function: { name: 'f', arguments: '{}' } }] },
        { role: 'tool', tool_call_id: 'c1', content: 'boom' },
      ]);
    });

    it('pins a provider and translates to and from an Anthropic upstream, tool calls included', async () => {
      anth.script({ match: 'claude-fake', toolCalls: [{ name: 'get_weather', arguments: { city: 'Oslo' } }], usage: { input: 20, output: 10 } });
      const r = await inference.complete(
        {
          provider: 'fakeanth',
          model: 'claude-fake',
          messages: [{ role: 'system', content: 'use tools' }, ...user('weather in Oslo?')],
          tools: [{ type: 'function', function: { name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } } }],
          max_tokens: 100,
        },
        { tenantId: TENANT },
      );
      expect(r).toMatchObject({
        provider: 'fakeanth',
        model: 'claude-fake',
        route_reason: 'pinned_provider_model',
        protocol: 'anthropic',
        stop_reason: 'tool_use',
        usage: { input_tokens: 20, output_tokens: 10 },
        cost_micros_usd: 40,
      });
      expect(r.tool_calls).toEqual([{ id: expect.any(String), type: 'function', function: { name: 'get_weather', arguments: '{"city":"Oslo"}' } }]);
      const sent = completions(anth);
      expect(sent).toHaveLength(1);
      expect(sent[0]).toMatchObject({ path: '/v1/messages', apiKey: ANTHROPIC_KEY });
      expect(sent[0].body).toMatchObject({ system: expect.anything(), tools: [expect.objectContaining({ name: 'get_weather' })], max_tokens: 100 });
      expect(completions(oai)).toHaveLength(0);
    });
  });

  describe('stream()', () => {
    it('yields text deltas, and `result` assembles the same text with usage and cost', async () => {
      oai.script({ match: 'gpt-4o-mini', content: 'alpha beta gamma delta', chunks: 4, usage: { input: 5, output: 4 } });
      const origin = { requestId: uniqueId('req_stream_') };
      const s = await inference.stream({ model: 'gpt-4o-mini', messages: user('count') }, { tenantId: TENANT, origin, endpoint: 'agent-loop' });
      expect(s).toMatchObject({ request_id: origin.requestId, provider: 'fakeai', model: 'gpt-4o-mini', route_reason: 'requested_model' });
      const deltas: InferenceDelta[] = [];
      for await (const d of s.deltas) deltas.push(d);
      const texts = deltas.flatMap((d) => (d.type === 'text_delta' ? [d.text] : []));
      expect(texts.length).toBe(4);
      expect(texts.join('')).toBe('alpha beta gamma delta');
      expect(deltas).toContainEqual({ type: 'stop', stop_reason: 'end_turn' });
      const result = await s.result;
      expect(result).toMatchObject({
        text: 'alpha beta gamma delta',
        stop_reason: 'end_turn',
        usage: { input_tokens: 5, output_tokens: 4 },
        cost_micros_usd: 13,
        protocol: 'openai',
      });
      // The engine asked the upstream for usage in the stream.
      expect(completions(oai)[0].body).toMatchObject({ stream: true, stream_options: { include_usage: true } });
      const rows = await ledger.events({ tenantId: TENANT, requestId: origin.requestId }, 10);
      expect(rows).toEqual([expect.objectContaining({ endpoint: 'agent-loop', stream: true, status: 'ok', output_tokens: 4, cost_micros_usd: 13 })]);
    });

    it.each([
      ['OpenAI', 'fakeai', 'gpt-4o-mini'],
      ['Anthropic', 'fakeanth', 'claude-fake'],
    ] as const)('returns tool-call deltas scripted by an %s upstream as tool_calls', async (_label, provider, model) => {
      const up = provider === 'fakeai' ? oai : anth;
      up.script({
        match: model,
        chunks: 3,
        toolCalls: [
          { name: 'get_weather', arguments: { city: 'Oslo', unit: 'celsius' } },
          { name: 'get_time', arguments: { tz: 'Europe/Oslo' } },
        ],
      });
      const s = await inference.stream(
        {
          model,
          messages: user('weather and time?'),
          tools: [
            { type: 'function', function: { name: 'get_weather' } },
            { type: 'function', function: { name: 'get_time' } },
          ],
        },
        { tenantId: TENANT },
      );
      expect(s.provider).toBe(provider);
      const deltas: InferenceDelta[] = [];
      for await (const d of s.deltas) deltas.push(d);
      const starts = deltas.filter((d) => d.type === 'tool_call_start');
      expect(starts.map((d) => d.name)).toEqual(['get_weather', 'get_time']);
      const argsOf = (i: number) =>
        deltas
          .filter((d): d is Extract<InferenceDelta, { type: 'tool_call_delta' }> => d.type === 'tool_call_delta' && d.index === starts[i].index)
          .map((d) => d.arguments)
          .join('');
      expect(JSON.parse(argsOf(0))).toEqual({ city: 'Oslo', unit: 'celsius' });
      expect(JSON.parse(argsOf(1))).toEqual({ tz: 'Europe/Oslo' });
      const result = await s.result;
      expect(result.stop_reason).toBe('tool_use');
      expect(result.tool_calls).toEqual([
        { id: starts[0].id, type: 'function', function: { name: 'get_weather', arguments: '{"city":"Oslo","unit":"celsius"}' } },
        { id: starts[1].id, type: 'function', function: { name: 'get_time', arguments: '{"tz":"Europe/Oslo"}' } },
      ]);
      expect(completions(up)).toHaveLength(1);
    });
  });

  describe('streamLive()', () => {
    it('appends every forwarded frame to LiveStreamBuffer under streamId, its index being the yielded one', async () => {
      oai.script({
        match: 'gpt-4o-mini',
        content: 'one two three',
        chunks: 3,
        toolCalls: [{ name: 'lookup', arguments: { q: 'x' } }],
      });
      const streamId = uniqueId('live_');
      const live = await inference.streamLive(
        { model: 'gpt-4o-mini', messages: user('go'), tools: [{ type: 'function', function: { name: 'lookup' } }] },
        { tenantId: TENANT },
        { streamId },
      );
      expect(live).not.toHaveProperty('deltas');
      expect(live.provider).toBe('fakeai');
      const yielded: Array<{ index: number; frame: LiveDeltaFrame }> = [];
      for await (const f of live.frames) yielded.push(f);

      // 3 content frames, one tool-call start, its argument pieces; usage/stop/message_start are not forwarded.
      expect(yielded.length).toBeGreaterThanOrEqual(5);
      expect(yielded.map((f) => f.index)).toEqual(yielded.map((_, i) => i + 1));
      expect(
        yielded
          .map((f) => f.frame.content)
          .filter((c) => c !== undefined)
          .join(''),
      ).toBe('one two three');
      expect(yielded.find((f) => f.frame.tool_calls?.[0].id)?.frame).toEqual({
        tool_calls: [{ index: 0, id: expect.any(String), type: 'function', function: { name: 'lookup', arguments: '' } }],
      });
      for (const f of yielded) expect(Object.keys(f.frame).length).toBeGreaterThan(0);

      const read = await buffer.read(streamId, 0);
      expect(read.expired).toBe(false);
      expect(read.chunks.map((c) => c.index)).toEqual(yielded.map((f) => f.index));
      expect(read.chunks.map((c) => JSON.parse(c.data) as LiveDeltaFrame)).toEqual(yielded.map((f) => f.frame));
      // Reading from the middle resumes after that index.
      const tail = await buffer.read(streamId, 2);
      expect(tail.chunks.map((c) => c.index)).toEqual(yielded.slice(2).map((f) => f.index));

      const result = await live.result;
      expect(result.text).toBe('one two three');
      expect(result.tool_calls).toEqual([expect.objectContaining({ function: { name: 'lookup', arguments: '{"q":"x"}' } })]);
    });

    it('continues the indexes of a stream that already holds chunks', async () => {
      const streamId = uniqueId('live_');
      await buffer.append(streamId, JSON.stringify({ content: 'earlier ' }));
      oai.script({ match: 'gpt-4o-mini', content: 'later', chunks: 1 });
      const live = await inference.streamLive({ model: 'gpt-4o-mini', messages: user('more') }, { tenantId: TENANT }, { streamId });
      const yielded: Array<{ index: number; frame: LiveDeltaFrame }> = [];
      for await (const f of live.frames) yielded.push(f);
      expect(yielded).toEqual([{ index: 2, frame: { content: 'later' } }]);
      const read = await buffer.read(streamId, 0);
      expect(read.chunks.map((c) => [c.index, JSON.parse(c.data) as unknown])).toEqual([
        [1, { content: 'earlier ' }],
        [2, { content: 'later' }],
      ]);
    });
  });

  describe('budget hook (costCapMicros)', () => {
    // budget-model: 1 micro-USD per output token, so the worst case is max_tokens micro-USD.
    beforeAll(async () => {
      await pricing.put('fakeai', 'budget-model', { input_micros_usd_per_million_tokens: 500_000, output_micros_usd_per_million_tokens: 1_000_000 });
    });

    const expectBudgetExceeded = async (promise: Promise<unknown>, cap: number, worst: number) => {
      const err = await promise.then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(BudgetExceededError);
      expect(err).toMatchObject({
        type: 'budget_exceeded',
        status: 402,
        details: { cost_cap_micros_usd: cap, worst_case_micros_usd: worst, provider: 'fakeai', model: 'budget-model' },
      });
    };

    it('refuses a call whose output price × max_tokens exceeds the cap, before any upstream request', async () => {
      const origin = { requestId: uniqueId('req_budget_') };
      await expectBudgetExceeded(
        inference.complete({ model: 'budget-model', messages: user('expensive'), max_tokens: 100 }, { tenantId: TENANT, origin, costCapMicros: 99 }),
        99,
        100,
      );
      await expectBudgetExceeded(
        inference.stream({ model: 'budget-model', messages: user('expensive'), max_tokens: 100 }, { tenantId: TENANT, costCapMicros: 99 }),
        99,
        100,
      );
      await expectBudgetExceeded(
        inference.streamLive(
          { model: 'budget-model', messages: user('expensive'), max_tokens: 100 },
          { tenantId: TENANT, costCapMicros: 0 },
          { streamId: uniqueId('live_') },
        ),
        0,
        100,
      );
      expect(completions(oai)).toHaveLength(0);
      expect(completions(anth)).toHaveLength(0);
      // A refused call costs nothing: no ok row.
      const rows = await ledger.events({ tenantId: TENANT, requestId: origin.requestId }, 10);
      expect(rows.filter((r) => r.status === 'ok')).toEqual([]);
    });

    it('lets a call through when the cap covers the worst case (the boundary included)', async () => {
      oai.script({ match: 'budget-model', content: 'cheap enough', times: 2, usage: { input: 10, output: 3 } });
      const r = await inference.complete({ model: 'budget-model', messages: user('affordable'), max_tokens: 100 }, { tenantId: TENANT, costCapMicros: 1000 });
      expect(r).toMatchObject({ text: 'cheap enough', provider: 'fakeai', model: 'budget-model', cost_micros_usd: 5 + 3 });
      const s = await inference.stream({ model: 'budget-model', messages: user('affordable'), max_tokens: 100 }, { tenantId: TENANT, costCapMicros: 100 });
      for await (const _d of s.deltas) void _d;
      expect((await s.result).text).toBe('cheap enough');
      expect(completions(oai)).toHaveLength(2);
    });

    it(`assumes DEFAULT_WORST_CASE_OUTPUT_TOKENS (${DEFAULT_WORST_CASE_OUTPUT_TOKENS}) without max_tokens`, async () => {
      const worst = DEFAULT_WORST_CASE_OUTPUT_TOKENS;
      await expectBudgetExceeded(
        inference.complete({ model: 'budget-model', messages: user('no max') }, { tenantId: TENANT, costCapMicros: worst - 1 }),
        worst - 1,
        worst,
      );
      expect(completions(oai)).toHaveLength(0);
      oai.script({ match: 'budget-model', content: 'fits' });
      const r = await inference.complete({ model: 'budget-model', messages: user('no max') }, { tenantId: TENANT, costCapMicros: worst });
      expect(r.text).toBe('fits');
      expect(completions(oai)).toHaveLength(1);
    });

    it('does not apply a cap to a model whose price is 0 per output token', async () => {
      await pricing.put('fakeai', 'gpt-4o-mini', { input_micros_usd_per_million_tokens: 1_000_000, output_micros_usd_per_million_tokens: 0 });
      try {
        const r = await inference.complete({ model: 'gpt-4o-mini', messages: user('free output') }, { tenantId: TENANT, costCapMicros: 0 });
        expect(r.provider).toBe('fakeai');
      } finally {
        await pricing.put('fakeai', 'gpt-4o-mini', { input_micros_usd_per_million_tokens: 1_000_000, output_micros_usd_per_million_tokens: 2_000_000 });
      }
    });
  });

  describe('malformed typed requests', () => {
    it.each([
      ['empty messages', { messages: [] }, /messages must be a non-empty array/],
      ['a bad role', { messages: [{ role: 'robot', content: 'beep' }] }, /messages\[0\]\.role "robot" is not a chat role/],
      ['max_tokens 0', { messages: user('hi'), max_tokens: 0 }, /max_tokens must be a positive integer/],
      ['a fractional max_tokens', { messages: user('hi'), max_tokens: 1.5 }, /max_tokens must be a positive integer/],
      ['an empty model', { model: '', messages: user('hi') }, /model must not be empty/],
    ] as Array<[string, unknown, RegExp]>)('%s: InvalidInferenceRequestError (500 gateway_error), nothing sent upstream', async (_label, bad, message) => {
      const req = bad as InferenceRequest;
      const calls: Array<() => Promise<unknown>> = [
        () => inference.complete(req, { tenantId: TENANT }),
        () => inference.stream(req, { tenantId: TENANT }),
        () => inference.streamLive(req, { tenantId: TENANT }, { streamId: uniqueId('live_') }),
      ];
      for (const call of calls) {
        // A promise-returning API rejects: it does not throw synchronously at the caller.
        let promise: Promise<unknown> | undefined;
        expect(() => (promise = call())).not.toThrow();
        const err = await promise!.then(
          () => undefined,
          (e: unknown) => e,
        );
        expect(err).toBeInstanceOf(InvalidInferenceRequestError);
        expect(err).toMatchObject({ status: 500, type: 'gateway_error', message: expect.stringMatching(message) });
      }
      expect(completions(oai)).toHaveLength(0);
      expect(completions(anth)).toHaveLength(0);
    });
  });

  describe('cancellation', () => {
    it('an aborted signal mid-stream closes the upstream request and `result` resolves with the partial text', async () => {
      oai.script({ match: 'gpt-4o-mini', content: 'w1 w2 w3 w4 w5 w6 w7 w8 w9 w10', chunks: 10, chunkIntervalMs: 150 });
      const controller = new AbortController();
      const origin = { requestId: uniqueId('req_abort_') };
      const s = await inference.stream({ model: 'gpt-4o-mini', messages: user('long') }, { tenantId: TENANT, origin, signal: controller.signal });
      const texts: string[] = [];
      let thrown: unknown;
      try {
        for await (const d of s.deltas) {
          if (d.type !== 'text_delta') continue;
          texts.push(d.text);
          if (texts.length === 2) controller.abort();
        }
      } catch (err) {
        thrown = err;
      }
      expect(thrown).toMatchObject({ kind: 'aborted' });
      await oai.waitFor((u) => completions(u)[0]?.aborted === true, 5000);
      expect(oai.activeRequests).toBe(0);
      const result = await s.result;
      expect(result.text).toBe(texts.join(''));
      expect(texts.length).toBeGreaterThanOrEqual(2);
      expect(texts.length).toBeLessThan(10);
      expect(result.text.startsWith('w1 w2')).toBe(true);
      expect(completions(oai)).toHaveLength(1);
    });

    it('breaking out of `deltas` closes the upstream request too', async () => {
      oai.script({ match: 'gpt-4o-mini', content: 'a b c d e f g h', chunks: 8, chunkIntervalMs: 150 });
      const s = await inference.stream({ model: 'gpt-4o-mini', messages: user('long') }, { tenantId: TENANT });
      let got = '';
      for await (const d of s.deltas) {
        if (d.type === 'text_delta') {
          got += d.text;
          break;
        }
      }
      await oai.waitFor((u) => completions(u)[0]?.aborted === true, 5000);
      expect((await s.result).text).toBe(got);
    });

    it('a signal aborted before the call sends nothing upstream', async () => {
      const controller = new AbortController();
      controller.abort();
      await expect(
        inference.complete({ model: 'gpt-4o-mini', messages: user('never') }, { tenantId: TENANT, signal: controller.signal }),
      ).rejects.toMatchObject({
        kind: 'aborted',
      });
      expect(completions(oai)).toHaveLength(0);
    });
  });
});
