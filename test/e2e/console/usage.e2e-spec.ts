import { checkA11y, openConsole, pageProblems, screenshot, useBrowser } from '../../support/browser';
import { useStack } from '../../support/harness';
import { request } from '../../support/http';
import { providerEnv } from '../../support/provider-env';
import { sdkClient } from '../../support/sdk';

const TOKEN = 'console-usage-operator-token-0123456789';

/** Usage and costs in a real browser: /v1 calls charted over time by provider, listed as events, one opened as a trace. */
describe('operator console: usage and costs (browser)', () => {
  const holder = useBrowser();
  const suite = useStack({
    mode: 'embedded',
    token: TOKEN,
    upstream: {},
    env: (upstream) => providerEnv('fakeai', upstream, { kind: 'local', defaultModel: 'gpt-4o-mini' }),
  });

  it('charts a few /v1 calls and opens the trace of one', async () => {
    const series = sdkClient(suite.stack.url, TOKEN);
    const requestIds: string[] = [];
    for (let i = 0; i < 3; i++) {
      const res = await request(suite.stack.url, 'POST', '/v1/chat/completions', {
        token: TOKEN,
        body: { model: 'gpt-4o-mini', messages: [{ role: 'user', content: `hello ${i}` }] },
      });
      expect(res.status).toBe(200);
      requestIds.push(res.headers.get('x-request-id')!);
    }
    // The series the charts read: the calls, bucketed by hour and grouped by provider.
    const { data } = await series.get('/hecate/v1/usage/series', { query: { bucket: 'hour', group_by: 'provider' } });
    expect(data.points.reduce((n, p) => n + p.calls, 0)).toBe(3);
    expect(data.points.every((p) => p.key === 'fakeai')).toBe(true);

    const { context, page } = await openConsole(holder.browser, suite.stack.url, TOKEN, '/usage');
    try {
      await page.getByRole('heading', { name: 'Usage and costs', level: 1 }).waitFor();
      await page.getByRole('img', { name: /Tokens over time/ }).waitFor();
      await page
        .getByRole('list', { name: 'Tokens legend' })
        .getByText(/fakeai/)
        .waitFor();
      const events = page.getByRole('table', { name: 'Usage events' });
      await events
        .getByRole('row', { name: /gpt-4o-mini/ })
        .first()
        .waitFor();
      expect(await events.getByRole('row').count()).toBe(4);

      await page.getByLabel('Group by').selectOption({ label: 'Model' });
      await page
        .getByRole('list', { name: 'Tokens legend' })
        .getByText(/gpt-4o-mini/)
        .waitFor();

      await page.getByRole('button', { name: `Open the trace of ${requestIds[0]}` }).click();
      const trace = page.getByRole('region', { name: `Trace of ${requestIds[0]}` });
      await trace
        .getByRole('table', { name: 'Attempts' })
        .getByRole('row', { name: /fakeai/ })
        .waitFor();
      await trace.getByRole('list', { name: 'Spans' }).waitFor();
      await checkA11y(page);
      await screenshot(page, 'usage');
      expect(pageProblems(page)).toEqual([]);
    } finally {
      await context.close();
    }
  });

  it('budgets: an admin creates one in the form, sees its spend after a refresh, a spent one refuses calls, and deletes it', async () => {
    const api = sdkClient(suite.stack.url, TOKEN);
    await api.put('/hecate/v1/settings/pricing/{provider}/{model}', {
      path: { provider: 'fakeai', model: 'gpt-4o-mini' },
      body: { input_micros_usd_per_million_tokens: 0, output_micros_usd_per_million_tokens: 1_000_000 },
    });
    const call = () =>
      request(suite.stack.url, 'POST', '/v1/chat/completions', {
        token: TOKEN,
        body: { model: 'gpt-4o-mini', max_tokens: 16, messages: [{ role: 'user', content: 'spend a little' }] },
      });
    const { context, page } = await openConsole(holder.browser, suite.stack.url, TOKEN, '/usage');
    try {
      await page.getByRole('heading', { name: 'Budgets', level: 2 }).waitFor();
      await page.getByText('No budgets: model calls are not capped.').waitFor();
      const form = page.getByRole('form', { name: 'Create a budget' });
      await form.getByLabel('Period').selectOption({ label: 'Per day (UTC)' });
      await form.getByLabel('Limit (USD)').fill('0.000001');
      await form.getByLabel('Name (optional)').fill('team cap');
      await form.getByRole('button', { name: 'Create budget' }).click();
      const table = page.getByRole('table', { name: 'Spend budgets' });
      await table.getByRole('row', { name: /team cap.*0 % used/ }).waitFor();

      // One call is let in (nothing spent yet) and takes the budget past its limit; the next is refused.
      expect((await call()).status).toBe(200);
      const refused = await call();
      expect({ status: refused.status, type: refused.body.error?.type }).toEqual({ status: 429, type: 'budget_exceeded' });
      await page.getByRole('button', { name: 'Refresh' }).click();
      await table.getByRole('row', { name: /team cap.*spent/ }).waitFor();
      await checkA11y(page);

      await page.getByRole('button', { name: 'Delete budget team cap' }).click();
      await page.getByText('No budgets: model calls are not capped.').waitFor();
      expect((await call()).status).toBe(200);
      expect(pageProblems(page)).toEqual([]);
    } finally {
      await context.close();
    }
  });
});
