import { checkA11y, openConsole, openPage, pageProblems, signIn, tabTo, useBrowser } from '../../support/browser';
import { useStack } from '../../support/harness';
import { sdkClient } from '../../support/sdk';

const TOKEN = 'console-shell-operator-token-0123456789';

/** The console's frame in a real browser: sign-in, the tab-only credential, the nav a key's scopes allow. */
describe('operator console shell (browser)', () => {
  const holder = useBrowser();

  describe('with a token configured', () => {
    const suite = useStack({ mode: 'embedded', token: TOKEN });
    const createKey = async (scopes: Array<'inference' | 'operator' | 'admin'>) =>
      (await sdkClient(suite.stack.url, TOKEN).post('/hecate/v1/api-keys', { body: { name: `console ${scopes.join(' ')}`, scopes, tenant_id: 'acme' } })).data;

    it('signs in with an API key, shows the nav, keeps the key for the tab only', async () => {
      const key = await createKey(['operator']);
      const { context, page } = await openPage(holder.browser, suite.stack.url, '/tasks');
      try {
        // Not signed in: the sign-in page, remembering where the user was going.
        await page.getByRole('heading', { name: 'Sign in to Hecate' }).waitFor();
        expect(new URL(page.url()).pathname).toBe('/sign-in');
        await checkA11y(page);

        await page.getByLabel('API key or operator token').fill(`${key.prefix}_${'x'.repeat(43)}`);
        await page.getByRole('button', { name: 'Sign in' }).click();
        await page.getByRole('alert').filter({ hasText: 'not accepted' }).waitFor();

        await signIn(page, key.secret);
        expect(new URL(page.url()).pathname).toBe('/tasks');
        const nav = page.getByRole('navigation', { name: 'Console' });
        expect(await nav.getByRole('link').allTextContents()).toEqual(['Agent Chat', 'Tasks', 'Providers', 'Usage and costs', 'Keys and system']);
        expect(await nav.getByRole('link', { name: 'Tasks' }).getAttribute('aria-current')).toBe('page');
        await page.getByText('API key · tenant acme · scopes operator').waitFor();
        await page.getByRole('main').waitFor();

        // The key is in this tab's sessionStorage, nowhere else: not the URL, not localStorage, not a cookie.
        const stored = await page.evaluate<{ session: Record<string, string>; local: Record<string, string>; cookie: string }>(
          '({ session: { ...sessionStorage }, local: { ...localStorage }, cookie: document.cookie })',
        );
        expect(Object.values(stored.session)).toEqual([key.secret]);
        expect(stored.local).toEqual({});
        expect(stored.cookie).toBe('');
        expect(page.url()).not.toContain(key.secret);

        // Keyboard: the nav links are reachable with Tab, and Enter follows one.
        await tabTo(page, 'link', 'Providers');
        await page.keyboard.press('Enter');
        await page.getByRole('heading', { name: 'Providers', level: 1 }).waitFor();
        expect(new URL(page.url()).pathname).toBe('/providers');

        // A reload keeps the sign-in (same tab); another tab of a new window does not have it.
        await page.reload();
        await page.getByRole('navigation', { name: 'Console' }).waitFor();
        const other = await openPage(holder.browser, suite.stack.url, '/usage');
        await other.page.getByRole('heading', { name: 'Sign in to Hecate' }).waitFor();
        expect(new URL(other.page.url()).search).toBe(`?next=${encodeURIComponent('/usage')}`);
        await other.context.close();

        await checkA11y(page);
        await page.getByRole('button', { name: 'Sign out' }).click();
        await page.getByRole('heading', { name: 'Sign in to Hecate' }).waitFor();
        expect(await page.evaluate(() => sessionStorage.length)).toBe(0);
        expect(pageProblems(page)).toEqual([]);
      } finally {
        await context.close();
      }
    });

    it('offers a key without the operator scope no page', async () => {
      const key = await createKey(['inference']);
      const { context, page } = await openConsole(holder.browser, suite.stack.url, key.secret);
      try {
        await page.getByRole('heading', { name: 'Nothing to show for this key' }).waitFor();
        expect(await page.getByRole('navigation', { name: 'Console' }).getByRole('link').count()).toBe(0);
        await page.goto(`${suite.stack.url}/system`);
        await page.getByRole('heading', { name: 'Not available to this key' }).waitFor();
        await checkA11y(page);
        expect(pageProblems(page)).toEqual([]);
      } finally {
        await context.close();
      }
    });
  });

  describe('without a token', () => {
    const suite = useStack({ mode: 'embedded' });

    it('lets the local operator straight in', async () => {
      const { context, page } = await openConsole(holder.browser, suite.stack.url, null);
      try {
        expect(new URL(page.url()).pathname).toBe('/chat');
        await page.getByText('Local operator · tenant default · scopes inference, operator, admin').waitFor();
        expect(await page.getByRole('navigation', { name: 'Console' }).getByRole('link').count()).toBe(5);
        await checkA11y(page);
        expect(pageProblems(page)).toEqual([]);
      } finally {
        await context.close();
      }
    });
  });
});
