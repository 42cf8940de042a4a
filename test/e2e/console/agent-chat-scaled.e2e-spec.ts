import type { Page } from 'playwright-core';
import { checkA11y, openConsole, pageProblems, useBrowser } from '../../support/browser';
import { useStack } from '../../support/harness';
import { sql, waitFor } from '../../support/infra';
import { providerEnv } from '../../support/provider-env';
import { sdkClient } from '../../support/sdk';
import { assistantReply, expectInOrderOnce, tokensIn, TOKEN, words } from './agent-chat-helpers';

const LONG = 2000;

/**
 * The Agent Chat page against a scaled deployment (two api processes, a worker, Postgres, Redis): a session started on
 * api B streams live into the page on api A and into a second page opened on api B in mid-stream, each whole and
 * unrepeated; guidance chips, the queued-next list and Stop work from the page; and a 2,000-message transcript opens
 * and scrolls with its long tasks counted and bounded (it is virtualised).
 */
describe('console: Agent Chat, scaled (browser)', () => {
  const holder = useBrowser();
  const suite = useStack({
    mode: 'scaled',
    token: TOKEN,
    apis: 2,
    workers: 1,
    upstream: { models: ['gpt-4o-mini'] },
    env: (upstream) => ({ ...providerEnv('fake', upstream, { kind: 'local' }), GATEWAY_TASK_APPROVAL_POLICIES: 'none' }),
  });
  beforeEach(() => suite.upstream.reset());

  const replyTokens = async (page: Page) => tokensIn((await assistantReply(page).first().textContent()) ?? '');

  it('a turn started on api B streams into pages on api A and B; guidance, queue next and Stop from the page', async () => {
    const [apiA, apiB] = suite.stack.apis;
    const onB = sdkClient(apiB.url, TOKEN);
    const session = (await onB.post('/hecate/v1/agent-chat/sessions', { body: { runtime_kind: 'model', model: 'gpt-4o-mini', title: 'Across pods' } })).data;
    const a = await openConsole(holder.browser, apiA.url, TOKEN, `/chat/${encodeURIComponent(session.id)}`);
    let b: Awaited<ReturnType<typeof openConsole>> | undefined;
    try {
      const pageA = a.page;
      await pageA.getByRole('heading', { name: 'Across pods', level: 2 }).waitFor();
      // 90 tokens, 300 ms apart: 27 seconds, long enough to act while it runs on a loaded machine.
      suite.upstream.script({ content: words(90), chunks: 90, chunkIntervalMs: 300 });
      const started = await onB.request('post', '/hecate/v1/agent-chat/sessions/{session_id}/messages', {
        path: { session_id: session.id },
        body: { content: 'Count slowly', wait: false },
      });
      expect(started.status).toBe(202);

      await waitFor(async () => ((await replyTokens(pageA)).length >= 5 ? true : undefined), { timeoutMs: 20_000, intervalMs: 50, what: 'tokens on api A' });
      await pageA
        .getByRole('navigation', { name: 'Agent Chat sessions' })
        .getByRole('link', { name: /Across pods/ })
        .filter({ hasText: 'busy' })
        .waitFor();

      // A second page, on api B, joins in mid-stream: it shows the turn from its start.
      b = await openConsole(holder.browser, apiB.url, TOKEN, `/chat/${encodeURIComponent(session.id)}`);
      await waitFor(async () => ((await replyTokens(b!.page)).length >= 10 ? true : undefined), { timeoutMs: 20_000, intervalMs: 50, what: 'tokens on api B' });
      expectInOrderOnce(await replyTokens(b.page));

      // Guidance while it runs: a chip, editable until a model call takes it; deleted here.
      await pageA.getByLabel('Message', { exact: true }).fill('Prefer short words');
      await pageA.getByRole('button', { name: 'Send as guidance' }).click();
      const guidance = pageA.getByRole('region', { name: 'Guidance' });
      await guidance.getByText('Prefer short words').waitFor();
      await guidance.getByRole('button', { name: 'Delete guidance: Prefer short words' }).click();
      await guidance.waitFor({ state: 'detached' });

      // Queue the next message, then stop the running turn: its partial reply stays, and the queued one runs next.
      await pageA.getByLabel('Message', { exact: true }).fill('after this');
      await pageA.getByRole('button', { name: 'Queue next' }).click();
      await pageA.getByRole('region', { name: 'Queued next' }).getByText('after this').waitFor();
      await checkA11y(pageA);
      await pageA.getByRole('button', { name: 'Stop' }).click();

      const viewOf = async () =>
        (await sdkClient(apiA.url, TOKEN).get('/hecate/v1/agent-chat/sessions/{session_id}', { path: { session_id: session.id } })).data;
      await waitFor(async () => ((await viewOf()).messages.at(-1)?.content === 'echo: after this' ? true : undefined), {
        timeoutMs: 30_000,
        what: 'the queued message to be answered',
      }).catch(async (err: unknown) => {
        throw new Error(`${String(err)}: ${JSON.stringify((await viewOf()).messages.map((m) => [m.role, m.status, m.content.slice(0, 40)]))}`);
      });
      for (const page of [pageA, b.page]) {
        await assistantReply(page, 'cancelled').waitFor({ timeout: 20_000 });
        // Live, without a reload: the session stream serves the queued turn even when it started (and ended) while
        // the page's stream was reconnecting after the stopped turn's `done`.
        await assistantReply(page, 'completed').filter({ hasText: 'echo: after this' }).waitFor({ timeout: 20_000 });
      }
      const stored = (await sdkClient(apiA.url, TOKEN).get('/hecate/v1/agent-chat/sessions/{session_id}', { path: { session_id: session.id } })).data;
      expect(stored.messages.map((m) => [m.role, m.status])).toEqual([
        ['user', 'completed'],
        ['assistant', 'cancelled'],
        ['user', 'completed'],
        ['assistant', 'completed'],
      ]);
      // Both pages show the partial reply as stored: in order, nothing repeated.
      const partial = tokensIn(stored.messages[1].content);
      expect(partial.length).toBeGreaterThanOrEqual(10);
      expectInOrderOnce(partial);
      for (const page of [pageA, b.page]) expect(tokensIn((await assistantReply(page, 'cancelled').textContent()) ?? '')).toEqual(partial);
      await pageA.getByRole('region', { name: 'Queued next' }).waitFor({ state: 'detached' });
      expect(pageProblems(pageA)).toEqual([]);
      expect(pageProblems(b.page)).toEqual([]);
    } finally {
      await a.context.close();
      await b?.context.close();
    }
  }, 120_000);

  it('a 2,000-message transcript opens at its end and scrolls to its start, virtualised, with long tasks bounded', async () => {
    const api = sdkClient(suite.stack.url, TOKEN);
    const session = (await api.post('/hecate/v1/agent-chat/sessions', { body: { runtime_kind: 'model', model: 'gpt-4o-mini', title: 'Long transcript' } }))
      .data;
    // Seeded in Postgres: 1,000 exchanges would take the fake upstream minutes; the page reads them as any transcript.
    await sql(
      suite.stack.db!.url,
      `INSERT INTO agent_chat_messages (id, session_id, sequence, role, content, status, runtime_kind, segment_id, provider, model, created_at)
       SELECT 'msg_long_' || i, $1, i + 1, CASE WHEN i % 2 = 0 THEN 'user' ELSE 'assistant' END,
              'message ' || lpad(i::text, 4, '0') || CASE WHEN i % 7 = 0 THEN E'\\nwith a second line\\nand a third' ELSE '' END,
              'completed', 'model', 'seg_long', 'fake', 'gpt-4o-mini', now() - (($2 - i) || ' seconds')::interval
       FROM generate_series(0, $2 - 1) AS i`,
      [session.id, LONG],
    );
    await sql(suite.stack.db!.url, `UPDATE agent_chat_sessions SET message_count = $2, next_sequence = $2 + 1 WHERE id = $1`, [session.id, LONG]);

    const { context, page } = await openConsole(holder.browser, suite.stack.url, TOKEN, '/chat');
    try {
      // Long tasks (over 50 ms) are counted from here on, by the browser.
      await page.evaluate(() => {
        // The page's globals, typed here (the tests compile without the DOM library).
        const w = globalThis as unknown as {
          longTasks: number[];
          PerformanceObserver: new (cb: (list: { getEntries(): Array<{ duration: number }> }) => void) => { observe(o: { type: string }): void };
        };
        w.longTasks = [];
        new w.PerformanceObserver((list) => list.getEntries().forEach((e) => w.longTasks.push(e.duration))).observe({ type: 'longtask' });
      });
      const longTasks = () => page.evaluate(() => (globalThis as unknown as { longTasks: number[] }).longTasks.slice());
      const opening = Date.now();
      await page
        .getByRole('navigation', { name: 'Agent Chat sessions' })
        .getByRole('link', { name: /Long transcript/ })
        .click();
      const transcript = page.getByRole('region', { name: 'Messages' });
      await transcript.getByText(`message ${String(LONG - 1).padStart(4, '0')}`).waitFor({ timeout: 20_000 });
      const openMs = Date.now() - opening;
      const atOpen = await longTasks();
      // Virtualised: a screenful of rows in the DOM, not 2,000.
      const rows = await transcript.getByRole('listitem').count();
      expect(rows).toBeGreaterThan(3);
      expect(rows).toBeLessThan(80);

      // Scroll to the start with the wheel, a frame at a time.
      await transcript.hover();
      const first = transcript.getByText(/^message 0000/);
      let steps = 0;
      for (; steps < 1000 && !(await first.isVisible()); steps++) await page.mouse.wheel(0, -600);
      await first.waitFor();
      const scrolled = (await longTasks()).slice(atOpen.length);
      expect(await transcript.getByRole('listitem').count()).toBeLessThan(80);
      process.stdout.write(
        `2,000-message transcript: opened in ${openMs} ms, long tasks at open ${JSON.stringify(atOpen)}, ${steps} scroll steps, long tasks while scrolling ${JSON.stringify(scrolled)}\n`,
      );
      // Measured on the shared 2-core machine with other suites' servers running: 2–3 at open (60–310 ms, the
      // 2,000-message snapshot parsed and laid out), and one scroll step in 10–25 over 50 ms, none over 320 ms.
      expect(atOpen.length).toBeLessThanOrEqual(4);
      expect(scrolled.length).toBeLessThanOrEqual(Math.ceil(steps / 5));
      expect(Math.max(0, ...scrolled)).toBeLessThan(500);
      await checkA11y(page);
      expect(pageProblems(page)).toEqual([]);
    } finally {
      await context.close();
    }
  }, 120_000);
});
