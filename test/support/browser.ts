import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';

/**
 * The browser tests' one way to drive the operator console: Debian's chromium (Playwright's own browser download is
 * not reachable here; `.ci/run` installs the package) through playwright-core, against a server started with
 * harness.ts. Tests select by role and accessible name, never by CSS.
 */
export const CHROMIUM = '/usr/bin/chromium';

const ROOT = resolve(__dirname, '../..');
export const SCREENSHOTS = join(ROOT, 'docs', 'screenshots');

export async function launchBrowser(): Promise<Browser> {
  // No skip when it is missing: the console's tests fail, saying how to get it.
  if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: install Debian's chromium package (apt-get install chromium), as .ci/run does`);
  // --no-sandbox: CI runs as root, where chromium's own sandbox refuses to start.
  return chromium.launch({ executablePath: CHROMIUM, headless: true, args: ['--no-sandbox', '--disable-dev-shm-usage'] });
}

/** One browser for a suite: launched in beforeAll, closed in afterAll. Read `holder.browser` inside hooks and tests. */
export function useBrowser(): { browser: Browser } {
  const holder = {} as { browser: Browser };
  beforeAll(async () => {
    holder.browser = await launchBrowser();
  }, 60_000);
  afterAll(async () => {
    await holder.browser?.close();
  });
  return holder;
}

/** What went wrong inside a page: uncaught exceptions and Content-Security-Policy violations, as they happened. */
const problems = new WeakMap<Page, string[]>();

export function pageProblems(page: Page): string[] {
  return problems.get(page) ?? [];
}

/** A fresh context (its own sessionStorage: a new tab of a new window) with one page on the console, not signed in. */
export async function openPage(browser: Browser, url: string, path = '/'): Promise<{ context: BrowserContext; page: Page }> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 }, reducedMotion: 'reduce', colorScheme: 'light' });
  const page = await context.newPage();
  const seen: string[] = [];
  problems.set(page, seen);
  page.on('pageerror', (err) => seen.push(`uncaught: ${err.message}`));
  page.on('console', (msg) => {
    if (msg.type() === 'error' && /Content.Security.Policy/i.test(msg.text())) seen.push(`csp: ${msg.text()}`);
  });
  await page.goto(`${url}${path}`);
  return { context, page };
}

/** Signs in on the sign-in page with an API key or the operator token, and waits for the console's nav. */
export async function signIn(page: Page, token: string): Promise<void> {
  await page.getByLabel('API key or operator token').fill(token);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('navigation', { name: 'Console' }).waitFor();
}

/** A signed-in console page (`token` null: a server without a token, where the local operator goes straight in). */
export async function openConsole(browser: Browser, url: string, token: string | null, path = '/'): Promise<{ context: BrowserContext; page: Page }> {
  const opened = await openPage(browser, url, path);
  if (token) await signIn(opened.page, token);
  else await opened.page.getByRole('navigation', { name: 'Console' }).waitFor();
  return opened;
}

let axeSource: string | undefined;

interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: Array<{ target: unknown[]; failureSummary?: string }>;
}

/**
 * Runs axe-core in the page (evaluated through the DevTools protocol, which the page's CSP does not govern) and fails
 * on any serious or critical violation, listing each with the elements it found.
 */
export async function checkA11y(page: Page): Promise<void> {
  axeSource ??= readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8');
  await page.evaluate(axeSource);
  // A string, evaluated in the page: this file is type-checked without the DOM library.
  const violations = await page.evaluate<AxeViolation[]>("axe.run(document, { resultTypes: ['violations'] }).then((r) => r.violations)");
  const serious = violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => `${v.impact} ${v.id}: ${v.help} — ${v.nodes.map((n) => JSON.stringify(n.target)).join(', ')}`);
  expect(serious).toEqual([]);
}

/** Saves the page as docs/screenshots/<name>.png (committed: the README shows them). */
export async function screenshot(page: Page, name: string): Promise<void> {
  mkdirSync(SCREENSHOTS, { recursive: true });
  await page.screenshot({ path: join(SCREENSHOTS, `${name}.png`) });
}

/**
 * Presses Tab until the element with `role` and `name` has the focus, or fails after `limit` presses: proof that a
 * keyboard reaches it.
 */
export async function tabTo(page: Page, role: Parameters<Page['getByRole']>[0], name: string | RegExp, limit = 60): Promise<void> {
  const target = await page.getByRole(role, { name }).elementHandle();
  if (!target) throw new Error(`no ${role} "${String(name)}" on the page`);
  for (let i = 0; i < limit; i++) {
    if (await target.evaluate((el) => el === (el as unknown as { ownerDocument: { activeElement: unknown } }).ownerDocument.activeElement)) return;
    await page.keyboard.press('Tab');
  }
  throw new Error(`${role} "${String(name)}" not reached by ${limit} presses of Tab`);
}
