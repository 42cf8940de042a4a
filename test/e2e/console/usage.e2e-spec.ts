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
});
