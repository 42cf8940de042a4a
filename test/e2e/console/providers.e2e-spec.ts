import type { Page } from 'playwright-core';
import { checkA11y, openConsole, pageProblems, screenshot, useBrowser } from '../../support/browser';
import { useStack } from '../../support/harness';
import { request } from '../../support/http';
import { providerEnv } from '../../support/provider-env';
import { sdkClient } from '../../support/sdk';

const TOKEN = 'console-providers-operator-token-0123456789';

/** A provider's entry in the status list, by its heading. */
const providerItem = (page: Page, name: string) => page.getByRole('listitem').filter({ has: page.getByRole('heading', { name, exact: true }) });

/**
 * Providers in a real browser: a provider added from a preset at the fake upstream becomes ready; readiness says why
 * not; a provider is edited, keyed and deleted; a model's capability override, probe result and price are changed.
 * Each change is checked in the page and in what the API answers afterwards.
 */
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

  /** A provider added through the API at the fake upstream (local: no key needed), and the page once it is ready. */
  async function openWithProvider(name: string) {
    const api = sdkClient(suite.stack.url, TOKEN);
    await api.post('/hecate/v1/settings/providers', {
      body: { custom_name: name, kind: 'local', protocol: 'openai', base_url: `${suite.upstream.url}/v1`, default_model: 'gpt-4o-mini' },
    });
    const opened = await openConsole(holder.browser, suite.stack.url, TOKEN, '/providers');
    await providerItem(opened.page, name).getByText('ready', { exact: true }).waitFor({ timeout: 30_000 });
    return { api, ...opened };
  }

  it('edits a provider, stores and rotates its key without ever showing it back, and deletes it after a confirmation', async () => {
    const { api, context, page } = await openWithProvider('editme');
    const first = 'sk-console-first-key-0123456789';
    const rotated = 'sk-console-rotated-key-9876543210';
    const editButton = page.getByRole('button', { name: 'Edit editme', exact: true });
    const form = page.getByRole('form', { name: 'Edit editme' });
    const item = providerItem(page, 'editme');
    const stored = async () => (await api.get('/hecate/v1/settings/providers/{provider_id}', { path: { provider_id: 'editme' } })).data;
    try {
      await editButton.click();
      await form.getByLabel('Default model').fill('gpt-4o');
      await form.getByRole('button', { name: 'Save changes' }).click();
      await form.waitFor({ state: 'detached' });
      await item.getByText('gpt-4o', { exact: true }).waitFor();
      expect(await stored()).toMatchObject({ default_model: 'gpt-4o', api_key_configured: false });

      await editButton.click();
      await form.getByLabel('New API key').fill(first);
      await form.getByRole('button', { name: 'Store key' }).click();
      await form.waitFor({ state: 'detached' });
      // Opened again, the form says a key is stored and shows none of it.
      await editButton.click();
      await form.getByText(/Key: configured\./).waitFor();
      expect(await form.getByLabel('New API key').inputValue()).toBe('');
      expect(await page.content()).not.toContain(first);
      await form.getByLabel('New API key').fill(rotated);
      await form.getByRole('button', { name: 'Store key' }).click();
      await form.waitFor({ state: 'detached' });
      expect(await page.content()).not.toContain(rotated);
      const afterKey = await stored();
      expect(afterKey.api_key_configured).toBe(true);
      expect(JSON.stringify(afterKey)).not.toContain('sk-console');
      // The upstream now gets the rotated key.
      const call = await request(suite.stack.url, 'POST', '/v1/chat/completions', {
        token: TOKEN,
        body: { provider: 'editme', model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'which key?' }] },
      });
      expect(call.status).toBe(200);
      expect(suite.upstream.requests.at(-1)?.apiKey).toBe(rotated);

      await editButton.click();
      await form.getByRole('button', { name: 'Delete provider' }).click();
      await checkA11y(page);
      await form.getByRole('button', { name: 'Confirm deleting editme' }).click();
      await form.waitFor({ state: 'detached' });
      await item.waitFor({ state: 'detached' });
      await expect(stored()).rejects.toMatchObject({ status: 404, type: 'not_found' });
      expect(pageProblems(page)).toEqual([]);
    } finally {
      await context.close();
    }
  });

  it('sets and removes a capability override, records a probe (a refused one shows its error type), and edits a price', async () => {
    const { api, context, page } = await openWithProvider('capped');
    const model = async () =>
      (await api.get('/hecate/v1/providers/{provider_id}/models', { path: { provider_id: 'capped' } })).data.find((m) => m.model === 'gpt-4o-mini')!;
    try {
      await page.getByRole('button', { name: 'Models of capped' }).click();
      const table = page.getByRole('table', { name: 'Models of capped' });
      const row = table.getByRole('row').filter({ has: page.getByRole('rowheader', { name: 'gpt-4o-mini', exact: true }) });
      await row.getByRole('button', { name: 'Settings of gpt-4o-mini' }).click();

      const override = page.getByRole('form', { name: 'Capability override of gpt-4o-mini' });
      await override.getByLabel('Tool calls').selectOption('none');
      await override.getByLabel('Note').fill('Tools fail on this deployment.');
      await override.getByRole('button', { name: 'Set override' }).click();
      await override
        .getByRole('status')
        .getByText(/^Override set: tool calls none/)
        .waitFor();
      await row.getByText('operator override').waitFor();
      expect(await row.getByRole('cell').first().textContent()).toBe('none');
      expect((await model()).capabilities).toMatchObject({ source: 'operator_override', tool_calling: 'none' });

      await override.getByRole('button', { name: 'Remove override' }).click();
      await override
        .getByRole('status')
        .getByText(/^Override removed/)
        .waitFor();
      await row.getByText('operator override').waitFor({ state: 'detached' });
      const fallback = (await model()).capabilities;
      expect(fallback.source).not.toBe('operator_override');
      expect(fallback.tool_calling).not.toBe('none');

      const probe = page.getByRole('form', { name: 'Probe of gpt-4o-mini' });
      await probe.getByLabel('Context (tokens)').fill('200000000');
      await probe.getByRole('button', { name: 'Record probe' }).click();
      await probe.getByRole('alert').getByText('invalid_request', { exact: true }).waitFor();
      expect((await model()).capabilities.source).not.toBe('manual_probe');
      await probe.getByLabel('Context (tokens)').fill('16384');
      await probe.getByLabel('Tool calls').selectOption('basic');
      await probe.getByRole('button', { name: 'Record probe' }).click();
      await probe
        .getByRole('status')
        .getByText(/^Probe recorded: tool calls basic, context 16,384/)
        .waitFor();
      await row.getByText('manual probe').waitFor();
      await row.getByText('16,384').waitFor();
      expect((await model()).capabilities).toMatchObject({ source: 'manual_probe', tool_calling: 'basic', max_context_tokens: 16384 });

      const price = page.getByRole('form', { name: 'Price of gpt-4o-mini' });
      await price.getByLabel('Input', { exact: true }).fill('1.25');
      await price.getByLabel('Output', { exact: true }).fill('5');
      await price.getByRole('button', { name: 'Save price' }).click();
      await price.getByRole('status').getByText('Price saved.').waitFor();
      await row.getByText('$1.25 / 1M').waitFor();
      await row.getByText('$5.00 / 1M').waitFor();
      await row.getByText('manual', { exact: true }).waitFor();
      expect((await model()).price).toMatchObject({
        source: 'manual',
        input_micros_usd_per_million_tokens: 1_250_000,
        output_micros_usd_per_million_tokens: 5_000_000,
      });
      const { data: prices } = await api.get('/hecate/v1/settings/pricing');
      expect(prices).toEqual(
        expect.arrayContaining([expect.objectContaining({ provider: 'capped', model: 'gpt-4o-mini', input_micros_usd_per_million_tokens: 1_250_000 })]),
      );
      await checkA11y(page);

      // Removing the operator price: a local provider's model costs nothing again.
      await price.getByRole('button', { name: 'Remove operator price' }).click();
      await price.getByRole('status').getByText('Operator price removed.').waitFor();
      await row.getByText('local', { exact: true }).waitFor();
      expect((await model()).price).toMatchObject({ source: 'local', input_micros_usd_per_million_tokens: 0 });
      expect((await api.get('/hecate/v1/settings/pricing')).data.some((p) => p.provider === 'capped')).toBe(false);
      expect(pageProblems(page)).toEqual([]);
    } finally {
      await context.close();
    }
  });
});
