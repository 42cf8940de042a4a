import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { BrowserContext, Locator, Page } from 'playwright-core';
import { checkA11y, openConsole, pageProblems, screenshot, tabTo, useBrowser } from '../../support/browser';
import { useStack } from '../../support/harness';
import { providerEnv } from '../../support/provider-env';
import { sdkClient } from '../../support/sdk';
import { expectInOrderOnce, tokensIn, words } from './agent-chat-helpers';

const TOKEN = 'console-tasks-operator-token-0123456789';

/** Polls a locator's text until `test` holds; fails naming what it waited for and the text it last saw. */
async function waitForText(locator: Locator, test: (text: string) => boolean, what: string, timeoutMs = 30_000): Promise<string> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const text = (await locator.textContent()) ?? '';
    if (test(text)) return text;
    if (Date.now() > deadline) throw new Error(`${what}: the text is still ${JSON.stringify(text)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/**
 * The Tasks page in a real browser against a real server (embedded) and the scripted fake upstream: create tasks from
 * the form, approve their gates from the detail page, watch a run's output stream live and whole across a reload, an
 * agent loop's model output stream live and whole across a reload, an agent loop's tool call approved from its banner
 * and continued, and a patch that drifted refused with the envelope.
 */
describe('Tasks page (browser)', () => {
  const holder = useBrowser();
  const suite = useStack({
    mode: 'embedded',
    token: TOKEN,
    upstream: { models: ['gpt-4o-mini'] },
    env: (upstream) => ({
      ...providerEnv('fake', upstream, { kind: 'local' }),
      // Shell commands and the agent's shell_exec calls wait for approval; file changes do not.
      GATEWAY_TASK_APPROVAL_POLICIES: 'shell_exec',
      // The test writes into run workspaces by hand (a drift, a go-ahead marker): no sandbox uid between them.
      GATEWAY_TASK_SANDBOX: 'none',
    }),
  });
  const api = () => sdkClient(suite.stack.url, TOKEN);
  let opened: { context: BrowserContext; page: Page } | undefined;
  beforeEach(() => suite.upstream.reset());
  afterEach(async () => {
    if (opened) expect(pageProblems(opened.page)).toEqual([]);
    await opened?.context.close();
    opened = undefined;
  });

  const open = async (path: string): Promise<Page> => {
    opened = await openConsole(holder.browser, suite.stack.url, TOKEN, path);
    return opened.page;
  };
  /** The task the page shows (`/tasks/:taskId`) and its latest run, read through the API. */
  const shownRun = async (page: Page) => {
    const taskId = new URL(page.url()).pathname.split('/')[2];
    const { data: runs } = await api().get('/hecate/v1/tasks/{task_id}/runs', { path: { task_id: taskId } });
    return { taskId, run: runs.sort((a, b) => b.number - a.number)[0] };
  };
  const newTask = async (page: Page, kind: string, fields: Record<string, string>) => {
    await page.getByRole('button', { name: 'New task' }).click();
    const form = page.getByRole('form', { name: 'New task' });
    await form.getByLabel('Kind').selectOption(kind);
    for (const [label, value] of Object.entries(fields)) {
      const field = form.getByLabel(label, { exact: true });
      if ((await field.evaluate((el) => el.tagName)) === 'SELECT') await field.selectOption(value);
      else await field.fill(value);
    }
    await form.getByRole('button', { name: 'Create task' }).click();
  };

  it('creates a shell task, approves its gate and streams its output live; a reload mid-run shows it whole and once', async () => {
    const page = await open('/tasks');
    await page.getByRole('heading', { name: 'Tasks', level: 1 }).waitFor();
    // The command prints two lines, then waits for a marker the test writes after the reload.
    await newTask(page, 'shell', {
      'Title (optional)': 'wait for go',
      'Shell command': 'echo line-1; echo line-2; until [ -f go ]; do sleep 0.1; done; echo line-3',
    });
    await page.getByRole('heading', { name: 'wait for go', level: 1 }).waitFor();

    const banner = page.getByRole('region', { name: 'Approval needed: Run a shell command' });
    await banner.getByText('until [ -f go ]').first().waitFor();
    await checkA11y(page);
    await banner.getByRole('button', { name: 'Approve' }).click();

    const output = () => page.getByRole('log', { name: 'Output' });
    await waitForText(output(), (t) => t.includes('line-2'), 'the first two lines, live');
    const { run } = await shownRun(page);
    expect(run.status).toBe('running');

    await page.reload();
    await page.getByRole('heading', { name: 'wait for go', level: 1 }).waitFor();
    // Replayed from the run's first event: both lines, once each, and the run still going.
    expect(await waitForText(output(), (t) => t.includes('line-2'), 'the output after the reload')).toBe('line-1\nline-2\n');
    await page.getByRole('region', { name: 'Run #1' }).getByRole('status').filter({ hasText: 'running' }).waitFor();

    writeFileSync(join(run.workspace_path!, 'go'), '');
    await page.getByRole('region', { name: 'Run #1' }).getByRole('status').filter({ hasText: 'completed' }).waitFor();
    expect(await output().textContent()).toBe('line-1\nline-2\nline-3\n');
    await page.getByRole('region', { name: 'Activity' }).getByText('Run completed', { exact: true }).waitFor();
    await screenshot(page, 'tasks-detail');

    // The list: the task under its kind, not under another.
    await page.getByRole('link', { name: '← All tasks' }).click();
    const filters = page.getByRole('search', { name: 'Filter tasks' });
    await filters.getByLabel('Kind').selectOption('agent_loop');
    await page
      .getByRole('status')
      .filter({ hasText: /^0 tasks$/ })
      .waitFor();
    await filters.getByLabel('Kind').selectOption('shell');
    await page.getByRole('link', { name: 'wait for go' }).waitFor();
    await checkA11y(page);
    await screenshot(page, 'tasks');
  });

  it("an agent loop's model output streams into its section live; a reload mid-stream shows it whole and once", async () => {
    const { data: agent } = await api().post('/hecate/v1/agents', { body: { name: 'streamer', model: 'gpt-4o-mini' } });
    // 80 words, one every 200 ms: 16 s of output, long enough to watch it grow and reload the page in the middle.
    const reply = words(80);
    suite.upstream.script({ content: reply, chunks: 80, chunkIntervalMs: 200 });

    const page = await open('/tasks');
    await newTask(page, 'agent_loop', { 'Saved agent': agent.id, Prompt: 'count slowly', 'Title (optional)': 'agent streams' });
    await page.getByRole('heading', { name: 'agent streams', level: 1 }).waitFor();
    const output = () => page.getByRole('log', { name: 'Model output' });
    const shown = async () => tokensIn((await output().textContent()) ?? '');

    // Live: the first words while the run is still going, then more of them on the same page, in order and once.
    const early = tokensIn(await waitForText(output(), (t) => tokensIn(t).length >= 5, 'the first words, live'));
    expect(early.length).toBeLessThan(80);
    expectInOrderOnce(early);
    const later = tokensIn(await waitForText(output(), (t) => tokensIn(t).length >= early.length + 5, 'more words on the same page'));
    expectInOrderOnce(later);
    const { run } = await shownRun(page);
    expect(run.status).toBe('running');
    const beforeReload = await shown();
    expect(beforeReload.length).toBeLessThan(80);

    // A reload in mid-stream: the text from its first word, each once, then the rest as it streams.
    await page.reload();
    await page.getByRole('heading', { name: 'agent streams', level: 1 }).waitFor();
    const afterReload = tokensIn(await waitForText(output(), (t) => tokensIn(t).length >= beforeReload.length, 'the model output after the reload'));
    expectInOrderOnce(afterReload);
    // Still streaming when the page came back: what it shows next arrives live after the replayed part.
    expect(afterReload.length).toBeLessThan(80);
    await page.getByRole('region', { name: 'Run #1' }).getByRole('status').filter({ hasText: 'completed' }).waitFor({ timeout: 30_000 });
    expect(await waitForText(output(), (t) => tokensIn(t).length >= 80, 'the whole reply')).toBe(reply);
    await checkA11y(page);
  });

  it('an agent loop from a saved agent: its tool call approved from the banner by keyboard, then continued and retried from a turn', async () => {
    const { data: agent } = await api().post('/hecate/v1/agents', { body: { name: 'writer', model: 'gpt-4o-mini' } });
    suite.upstream.script({ toolCalls: [{ name: 'shell_exec', arguments: { command: 'echo approved > out.txt' } }] });
    suite.upstream.script({ content: 'Wrote out.txt.' });

    const page = await open('/tasks');
    await newTask(page, 'agent_loop', { 'Saved agent': agent.id, Prompt: 'write out.txt', 'Title (optional)': 'agent writes a file' });
    await page.getByRole('heading', { name: 'agent writes a file', level: 1 }).waitFor();

    const banner = page.getByRole('region', { name: 'Approval needed: Let the agent call a tool' });
    await banner.getByRole('list', { name: 'Tool calls' }).getByText('shell_exec').waitFor();
    await banner.getByText('"command": "echo approved > out.txt"').waitFor();
    await checkA11y(page);
    await screenshot(page, 'tasks-approval');
    const { run } = await shownRun(page);
    expect(existsSync(join(run.workspace_path!, 'out.txt'))).toBe(false);

    await tabTo(page, 'button', 'Approve');
    await page.keyboard.press('Enter');
    const activity = page.getByRole('region', { name: 'Activity' });
    await activity.getByText('Wrote out.txt.').waitFor();
    await banner.waitFor({ state: 'detached' });
    expect(readFileSync(join(run.workspace_path!, 'out.txt'), 'utf8')).toBe('approved\n');
    expect(suite.upstream.requests.filter((r) => r.path === '/v1/chat/completions')).toHaveLength(2);

    // Continue: a follow-up prompt on the saved conversation makes run #2.
    suite.upstream.script({ content: 'bye' });
    await page.getByLabel('Follow-up prompt').fill('now say bye');
    await page.getByRole('button', { name: 'Continue', exact: true }).click();
    await page.getByRole('region', { name: 'Run #2' }).getByRole('status').filter({ hasText: 'completed' }).waitFor();
    await activity.getByText('bye', { exact: true }).waitFor();
    const chat = () => suite.upstream.requests.filter((r) => r.path === '/v1/chat/completions');
    expect((chat().at(-1)!.body as { messages: unknown[] }).messages.at(-1)).toEqual({ role: 'user', content: 'now say bye' });

    // Retry from turn 3 (the answer to the follow-up): run #3 asks the model again from just before it.
    suite.upstream.script({ content: 'second try' });
    await page.getByLabel('Turn', { exact: true }).fill('3');
    await page.getByRole('button', { name: 'Retry from turn' }).click();
    await page.getByRole('region', { name: 'Run #3' }).getByRole('status').filter({ hasText: 'completed' }).waitFor();
    await activity.getByText('second try', { exact: true }).waitFor();
    expect((chat().at(-1)!.body as { messages: Array<{ role: string }> }).messages.map((m) => m.role).at(-1)).toBe('user');
    expect(await page.getByLabel('Run', { exact: true }).locator('option').count()).toBe(3);
    await checkA11y(page);
  });

  it('shows a patch with its diff; a revert after the file drifted is refused with the error envelope, then succeeds', async () => {
    const page = await open('/tasks');
    await newTask(page, 'file', { 'File path (in the workspace)': 'notes/todo.txt', Content: 'one\ntwo\n' });
    await page.getByRole('region', { name: 'Run #1' }).getByRole('status').filter({ hasText: 'completed' }).waitFor();
    const patches = page.getByRole('region', { name: 'Patches' });
    await patches.getByRole('figure', { name: 'Diff of notes/todo.txt' }).getByText('+one').waitFor();
    const { run } = await shownRun(page);
    const target = join(run.workspace_path!, 'notes', 'todo.txt');
    expect(readFileSync(target, 'utf8')).toBe('one\ntwo\n');

    writeFileSync(target, 'edited by hand\n');
    await patches.getByRole('button', { name: 'Revert notes/todo.txt' }).click();
    const alert = patches.getByRole('alert');
    await alert.getByText('The file changed since the patch was captured.').waitFor();
    await alert.getByText('What to do: Inspect the file; apply or revert by hand if the change is still wanted.').waitFor();
    await alert.getByText('conflict', { exact: true }).waitFor();
    await patches.getByText('different content').waitFor();
    expect(readFileSync(target, 'utf8')).toBe('edited by hand\n');
    await checkA11y(page);
    await screenshot(page, 'tasks-patch-drift');

    writeFileSync(target, 'one\ntwo\n');
    await patches.getByRole('button', { name: 'Revert notes/todo.txt' }).click();
    await patches.getByRole('status').filter({ hasText: 'Reverted notes/todo.txt.' }).waitFor();
    await patches.getByText('reverted', { exact: true }).waitFor();
    expect(existsSync(target)).toBe(false);
    expect(await patches.getByRole('alert').count()).toBe(0);

    // The list filter by kind is the server's (`execution_kind`): only file tasks.
    const { data: files } = await api().get('/hecate/v1/tasks', { query: { execution_kind: 'file' } });
    expect(files.length).toBeGreaterThan(0);
    expect(new Set(files.map((t) => t.execution_kind))).toEqual(new Set(['file']));
  });
});
