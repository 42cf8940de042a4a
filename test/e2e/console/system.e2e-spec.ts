import { checkA11y, openConsole, pageProblems, screenshot, useBrowser } from '../../support/browser';
import { useStack } from '../../support/harness';
import { request } from '../../support/http';

const TOKEN = 'console-system-operator-token-0123456789';

/** Keys and system in a real browser: health, queues, workers, MCP cache, adapters; a key created, used and revoked. */
describe('operator console: keys and system (browser)', () => {
  const holder = useBrowser();
  const suite = useStack({ mode: 'embedded', token: TOKEN });

  it('creates a key with scopes, shows its secret once, signs in with it elsewhere, and revokes it', async () => {
    const { context, page } = await openConsole(holder.browser, suite.stack.url, TOKEN, '/system');
    try {
      await page.getByRole('heading', { name: 'Keys and system', level: 1 }).waitFor();
      // Health, queues and live workers, the MCP cache, the adapters: read from the running server.
      await page.getByText('Live workers').waitFor();
      await page.getByRole('table', { name: 'Queues' }).waitFor();
      await page.getByRole('heading', { name: 'MCP client cache' }).waitFor();
      await page.getByRole('table', { name: 'Agent adapters' }).waitFor();
      expect(await page.getByRole('table', { name: 'Agent adapters' }).getByRole('row').count()).toBeGreaterThan(1);
      await page.getByText('ready', { exact: true }).first().waitFor();

      // The queue probe (admin): api → queue → worker → Postgres.
      await page.getByRole('button', { name: 'Probe the queue' }).click();
      await page.getByRole('status').filter({ hasText: 'Queue probe completed' }).waitFor({ timeout: 30_000 });

      // A key with the operator scope only, for tenant acme: its secret is shown once.
      await page.getByLabel('Key name').fill('console reviewer');
      await page.getByRole('checkbox', { name: 'operator' }).check();
      await page.getByLabel('Tenant (empty: default)').fill('acme');
      await page.getByRole('button', { name: 'Create key' }).click();
      const secret = await page.getByLabel('Secret of the new key').inputValue();
      expect(secret).toMatch(/^hk_[A-Za-z0-9]{12}_/);
      const row = page.getByRole('row', { name: /console reviewer/ });
      await row.getByText('acme').waitFor();
      expect(await row.getByText('operator', { exact: true }).count()).toBe(1);
      await checkA11y(page);
      await page.getByRole('button', { name: 'Done' }).click();
      expect(await page.getByLabel('Secret of the new key').count()).toBe(0);
      // The README's picture, without the secret.
      await page.evaluate('window.scrollTo(0, 0)');
      await screenshot(page, 'system');

      // Signed in with it in a second context: the pages are offered, the admin controls are not.
      const other = await openConsole(holder.browser, suite.stack.url, secret, '/system');
      try {
        await other.page.getByText('API key · tenant acme · scopes operator').waitFor();
        await other.page.getByRole('heading', { name: 'Keys and system', level: 1 }).waitFor();
        await other.page.getByRole('table', { name: 'Queues' }).waitFor();
        expect(await other.page.getByRole('button', { name: 'Probe the queue' }).count()).toBe(0);
        expect(await other.page.getByRole('checkbox', { name: 'admin' }).isDisabled()).toBe(true);
        // Its tenant's keys only.
        await other.page.getByRole('row', { name: /console reviewer/ }).waitFor();
        expect(await other.page.getByRole('table', { name: 'API keys' }).getByText('default', { exact: true }).count()).toBe(0);
        await checkA11y(other.page);
        expect(pageProblems(other.page)).toEqual([]);

        // Revoked from the first: the key stops working at once, and the second console is sent back to sign in.
        await row.getByRole('button', { name: 'Revoke console reviewer' }).click();
        await row.getByRole('button', { name: 'Confirm revoking console reviewer' }).click();
        await row.getByText('revoked').waitFor();
        expect((await request(suite.stack.url, 'GET', '/hecate/v1/whoami', { token: secret })).status).toBe(401);
        await other.page.reload();
        await other.page.getByRole('heading', { name: 'Sign in to Hecate' }).waitFor();
      } finally {
        await other.context.close();
      }
      expect(pageProblems(page)).toEqual([]);
    } finally {
      await context.close();
    }
  });
});
