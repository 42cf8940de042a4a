import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Schemas } from '@sdk';
import { checkA11y, openConsole, pageProblems, screenshot, useBrowser } from '../../support/browser';
import { useStack } from '../../support/harness';
import { waitFor } from '../../support/infra';
import { providerEnv } from '../../support/provider-env';
import { sdkClient } from '../../support/sdk';
import { assistantReply, expectInOrderOnce, tokensIn, TOKEN, words } from './agent-chat-helpers';

/**
 * The Agent Chat page in a real browser against the built server (embedded) and the fake upstream: a session made from
 * the form, a reply streamed token by token that a reload in mid-stream leaves whole and unrepeated, busy/idle live in
 * the sessions list, timing and cost, edit and rerun of the last message; an agent turn's tool call approved from the
 * banner (guidance sent and edited while it waits, then taken by the next model call with its receipt shown), then its
 * changed files with a diff and a revert.
 */
describe('console: Agent Chat (browser)', () => {
  const holder = useBrowser();
  const suite = useStack({
    mode: 'embedded',
    token: TOKEN,
    upstream: { models: ['gpt-4o-mini'] },
    env: (upstream) => ({ ...providerEnv('fake', upstream, { kind: 'local' }), GATEWAY_TASK_APPROVAL_POLICIES: 'shell_exec' }),
  });
  beforeEach(() => suite.upstream.reset());

  it('streams a reply token by token; a reload mid-stream leaves it whole and unrepeated; edit and rerun the last message', async () => {
    const { context, page } = await openConsole(holder.browser, suite.stack.url, TOKEN, '/chat');
    try {
      await page.getByRole('heading', { name: 'Agent Chat', level: 1 }).waitFor();
      await page.getByRole('button', { name: 'New session' }).click();
      await page.getByRole('radio', { name: /^Model/ }).check();
      await page.getByLabel('Model', { exact: true }).fill('gpt-4o-mini');
      await page.getByLabel('Title').fill('Streaming demo');
      await page.getByRole('button', { name: 'Create session' }).click();
      await page.waitForURL(/\/chat\/[^/]+$/);
      const sessionId = decodeURIComponent(new URL(page.url()).pathname.split('/').pop()!);
      await page.getByRole('heading', { name: 'Streaming demo', level: 2 }).waitFor();

      // 40 tokens, 150 ms apart: about six seconds of streaming.
      const expected = words(40);
      suite.upstream.script({ content: expected, chunks: 40, chunkIntervalMs: 150 });
      await page.getByLabel('Message', { exact: true }).fill('Count for me');
      await page.getByRole('button', { name: 'Send', exact: true }).click();

      // Token by token: the reply grows through several partial states, each a clean prefix.
      const sessionLink = page.getByRole('navigation', { name: 'Agent Chat sessions' }).getByRole('link', { name: /Streaming demo/ });
      const seen = new Set<number>();
      await waitFor(
        async () => {
          const tokens = tokensIn((await assistantReply(page).textContent()) ?? '');
          expectInOrderOnce(tokens);
          seen.add(tokens.length);
          return tokens.length >= 12 ? true : undefined;
        },
        { timeoutMs: 20_000, intervalMs: 50, what: 'a dozen streamed tokens' },
      );
      expect([...seen].filter((n) => n > 0 && n < 12).length).toBeGreaterThanOrEqual(3);
      // The sessions list shows the session busy, live (the active-sessions stream).
      await expect(sessionLink.textContent()).resolves.toContain('busy');

      // Reload in the middle of the stream: the page signs in from the tab's storage and resumes the turn.
      await page.reload();
      await page.getByRole('heading', { name: 'Streaming demo', level: 2 }).waitFor();
      const partials: number[][] = [];
      const done = await waitFor(
        async () => {
          const text = (await assistantReply(page).first().textContent()) ?? '';
          const tokens = tokensIn(text);
          partials.push(tokens);
          expectInOrderOnce(tokens);
          return (await assistantReply(page, 'completed').count()) > 0 ? text : undefined;
        },
        { timeoutMs: 30_000, intervalMs: 50, what: 'the reply to complete after the reload' },
      );
      expect(partials.some((t) => t.length > 0 && t.length < 40)).toBe(true);
      expectInOrderOnce(tokensIn(done));
      expect(tokensIn(done)).toHaveLength(40);
      await sessionLink.filter({ hasText: 'idle' }).waitFor();

      // What the server stored is what the page shows.
      const api = sdkClient(suite.stack.url, TOKEN);
      const stored = (await api.get('/hecate/v1/agent-chat/sessions/{session_id}', { path: { session_id: sessionId } })).data;
      expect(stored.messages.map((m) => [m.role, m.content])).toEqual([
        ['user', 'Count for me'],
        ['assistant', expected],
      ]);

      // The turn's timing and cost.
      const reply = assistantReply(page, 'completed');
      await reply.getByText(/took \d/).waitFor();
      await reply.getByText(/cost \$\d/).waitFor();
      await checkA11y(page);
      await screenshot(page, 'agent-chat');

      // Edit the last message in place and rerun it: the old answer is superseded, the new one answers the edit.
      await page.getByRole('button', { name: 'Edit', exact: true }).click();
      await page.getByLabel('Edit the last message').fill('Say hello instead');
      await page.getByRole('button', { name: 'Save and rerun' }).click();
      await assistantReply(page, 'completed').filter({ hasText: 'echo: Say hello instead' }).waitFor({ timeout: 20_000 });
      await assistantReply(page, 'superseded').waitFor();
      await page.getByRole('button', { name: 'Rerun' }).click();
      // The rerun supersedes the answer at once; its own answer completes a moment later.
      const after = await waitFor(
        async () => {
          const s = (await api.get('/hecate/v1/agent-chat/sessions/{session_id}', { path: { session_id: sessionId } })).data;
          return s.messages.length === 4 && s.messages[3].status === 'completed' ? s : undefined;
        },
        { timeoutMs: 20_000, what: 'the rerun to complete' },
      );
      await waitFor(async () => ((await assistantReply(page, 'superseded').count()) === 2 ? true : undefined), {
        timeoutMs: 20_000,
        what: 'two superseded answers',
      });
      await assistantReply(page, 'completed').filter({ hasText: 'echo: Say hello instead' }).waitFor();
      expect(after.messages.map((m) => [m.role, m.status, m.content])).toEqual([
        ['user', 'completed', 'Say hello instead'],
        ['assistant', 'superseded', expected],
        ['assistant', 'superseded', 'echo: Say hello instead'],
        ['assistant', 'completed', 'echo: Say hello instead'],
      ]);
      expect(pageProblems(page)).toEqual([]);
    } finally {
      await context.close();
    }
  }, 120_000);

  it("approves an agent's tool call from the banner (guidance edited meanwhile, then taken), then shows the turn's changed files with a diff and reverts one", async () => {
    const repo = mkdtempSync(join(tmpdir(), 'hecate-console-chat-git-'));
    const git = (...args: string[]) => execFileSync('git', ['-c', 'user.email=t@example.com', '-c', 'user.name=t', ...args], { cwd: repo });
    git('init', '-q');
    writeFileSync(join(repo, 'README.md'), 'line one\nline two\n');
    git('add', '-A');
    git('commit', '-qm', 'init');

    const { context, page } = await openConsole(holder.browser, suite.stack.url, TOKEN, '/chat');
    try {
      await page.getByRole('button', { name: 'New session' }).click();
      await page.getByRole('radio', { name: /^Hecate Agent/ }).check();
      await page.getByLabel('Provider').selectOption('fake');
      await page.getByLabel('Model', { exact: true }).fill('gpt-4o-mini');
      // A server has no folder picker: it says so, and the path is typed.
      await page.getByRole('button', { name: 'Pick folder' }).click();
      await page.getByRole('status').filter({ hasText: 'no folder picker' }).waitFor();
      await page.getByLabel('Workspace path').fill(repo);
      await page.getByLabel('Title').fill('Agent with tools');
      await page.getByRole('button', { name: 'Create session' }).click();
      await page.getByRole('heading', { name: 'Agent with tools', level: 2 }).waitFor();
      const sessionId = decodeURIComponent(new URL(page.url()).pathname.split('/').pop()!);
      const api = sdkClient(suite.stack.url, TOKEN);

      suite.upstream.script({ toolCalls: [{ name: 'shell_exec', arguments: { command: 'echo gated' } }] });
      suite.upstream.script({ toolCalls: [{ name: 'file_write', arguments: { path: 'README.md', content: 'line one\nline 2\nline three\n' } }] });
      suite.upstream.script({ content: 'Done after approval.', chunks: 4 });
      await page.getByLabel('Message', { exact: true }).fill('Run the gated command, then edit the readme');
      await page.getByRole('button', { name: 'Send', exact: true }).click();

      const banner = page.getByRole('region', { name: /Approval required: shell_exec/ });
      await banner.waitFor({ timeout: 30_000 });
      await banner.getByText('echo gated').first().waitFor();
      await checkA11y(page);
      await screenshot(page, 'agent-chat-approval');

      // Guidance while the turn waits on the approval: a pending chip, edited from the page; no model call runs until
      // the approval is decided, so nothing can take it meanwhile.
      const guidanceOf = async () =>
        (
          (await api.get('/hecate/v1/agent-chat/sessions/{session_id}/guidance', { path: { session_id: sessionId }, query: { status: 'all' } }))
            .data as Schemas['AgentChatGuidanceList']
        ).items;
      await page.getByLabel('Message', { exact: true }).fill('Keep the readme short');
      await page.getByRole('button', { name: 'Send as guidance' }).click();
      const guidance = page.getByRole('region', { name: 'Guidance' });
      await guidance.getByRole('button', { name: 'Edit guidance: Keep the readme short' }).click();
      await guidance.getByRole('textbox', { name: 'Edit guidance', exact: true }).fill('Keep the readme shorter');
      await guidance.getByRole('button', { name: 'Save', exact: true }).click();
      await guidance.getByRole('button', { name: 'Edit guidance: Keep the readme shorter' }).waitFor();
      await guidance.getByRole('textbox').waitFor({ state: 'detached' });
      expect((await guidanceOf()).map((g) => [g.status, g.content])).toEqual([['pending', 'Keep the readme shorter']]);

      await banner.getByRole('button', { name: 'Approve' }).click();
      await banner.waitFor({ state: 'detached', timeout: 30_000 });
      const reply = assistantReply(page, 'completed');
      await reply.getByText('Done after approval.').waitFor({ timeout: 30_000 });

      // The model call after the approval took the edited guidance: in the transcript, and its chip shows the receipt.
      const [taken] = await guidanceOf();
      expect(taken).toMatchObject({ status: 'consumed', content: 'Keep the readme shorter', receipt: { model_call_index: expect.any(Number) } });
      const transcript = page.getByRole('region', { name: 'Transcript' });
      await transcript.getByRole('article', { name: 'Guidance, completed' }).getByText('Keep the readme shorter').waitFor();
      await guidance.getByText(`taken at model call ${taken.receipt!.model_call_index}`).waitFor();
      await guidance.getByRole('button', { name: /^Edit guidance/ }).waitFor({ state: 'detached' });

      const full = (await api.get('/hecate/v1/agent-chat/sessions/{session_id}', { path: { session_id: sessionId } })).data;
      const approvals = (await api.get('/hecate/v1/tasks/{task_id}/approvals', { path: { task_id: full.task_id! } })).data;
      expect(approvals.map((a) => [a.status, a.kind])).toEqual([['approved', 'agent_loop_tool_call']]);

      // The changed files, a diff, and a revert of that path on a worker.
      await reply.getByText(/Changed files/).click();
      await reply.getByRole('button', { name: 'Show diff of README.md' }).click();
      const diff = reply.getByLabel('Diff of README.md');
      await diff.getByText('+line 2').waitFor();
      await diff.getByText('-line two').waitFor();
      await reply.getByRole('button', { name: 'Revert README.md' }).click();
      await reply.getByRole('status').filter({ hasText: 'Reverted README.md' }).waitFor({ timeout: 30_000 });
      expect(readFileSync(join(repo, 'README.md'), 'utf8')).toBe('line one\nline two\n');
      await checkA11y(page);
      expect(pageProblems(page)).toEqual([]);
    } finally {
      await context.close();
    }
  }, 120_000);
});
