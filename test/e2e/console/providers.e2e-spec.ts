import { checkA11y, openConsole, pageProblems, screenshot, useBrowser } from '../../support/browser';
import { useStack } from '../../support/harness';
import { providerEnv } from '../../support/provider-env';

const TOKEN = 'console-providers-operator-token-0123456789';

/** Providers in a real browser: a provider added from a preset at the fake upstream becomes ready; readiness says why not. */
describe('operator console: providers (browser)', () => {
  const holder = useBrowser();
  // One env provider whose upstream is not there: routing skips it, and the page says why and what to do.
  const suite = useStack({
    mode: 'embedded',
    token: TOKEN,
    upstream: {},
    env: () => ({ ...providerEnv('gone', { url: 'http://127.0.0.1:9' }, { kind: 'local' }) }),
  });

  it('adds a provider pointing at the fake upstream and shows it ready, with its models, capabilities and pricing', async () => {
    const { context, page } = await openConsole(holder.browser, suite.stack.url, TOKEN, '/providers');
    try {
      await page.getByRole('heading', { name: 'Providers', level: 1 }).waitFor();
      const gone = page.getByRole('listitem').filter({ has: page.getByRole('heading', { name: 'gone' }) });
      await gone.getByText('not ready').waitFor();
      await gone.getByText('Skipped by routing:').waitFor();
      await gone
        .getByText(/What to do:/)
        .first()
        .waitFor();

      await page.getByRole('button', { name: 'Add provider' }).click();
      const form = page.getByRole('form', { name: 'Add a provider' });
      await form.getByLabel('Preset').selectOption({ label: 'Ollama' });
      await form
        .getByText(/PROVIDER_OLLAMA/)
        .first()
        .waitFor();
      await form.getByLabel(/Instance name/).fill('fake');
      await form.getByLabel('Base URL').fill(`${suite.upstream.url}/v1`);
      await form.getByLabel('Default model').fill('gpt-4o-mini');
      await form.getByRole('button', { name: 'Add provider' }).click();
      await form.waitFor({ state: 'detached' });

      const added = page.getByRole('listitem').filter({ has: page.getByRole('heading', { name: 'fake' }) });
      await added.getByText('ready', { exact: true }).waitFor({ timeout: 30_000 });
      // The new provider's models open by themselves.
      expect(await page.getByRole('button', { name: 'Models of fake' }).getAttribute('aria-pressed')).toBe('true');
      const models = page.getByRole('table', { name: 'Models of fake' });
      await models
        .getByRole('row', { name: /gpt-4o-mini/ })
        .first()
        .waitFor();
      expect(await models.getByRole('row').count()).toBeGreaterThan(1);
      await page.getByRole('table', { name: 'Local runtimes' }).waitFor();
      await checkA11y(page);
      await page.evaluate('window.scrollTo(0, 0)');
      await screenshot(page, 'providers');
      expect(pageProblems(page)).toEqual([]);
    } finally {
      await context.close();
    }
  });
});
