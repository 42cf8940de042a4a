import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { adapterEnv } from '../../support/acp-agents';
import { checkA11y, openConsole, pageProblems, useBrowser } from '../../support/browser';
import { useStack } from '../../support/harness';
import { providerEnv } from '../../support/provider-env';
import { sandboxOwned } from '../../support/sandbox';
import { sdkClient } from '../../support/sdk';
import { TOKEN } from './agent-chat-helpers';

/**
 * The Agent Chat page with an External agent (docs/api.md §4 `runtime_kind: external_agent`) in a real browser against
 * the built server (embedded), the ACP fault agent as the operator-defined adapters (test/support/acp-agents.ts): the
 * catalog in the New session form with its "outside tested range" chip, a session made from the form, a reply streamed
 * by the agent, and tool calls of the agent asking permission: approved once, denied, and approved for the rest of the
 * session from the banner (the grant then answers the next one).
 */
describe('console: Agent Chat, External agent (browser)', () => {
  const holder = useBrowser();
  const suite = useStack({
    mode: 'embedded',
    token: TOKEN,
    upstream: { models: ['gpt-4o-mini'] },
    // Approval mode `prompt` (the default, said here): the agent's file write waits for the operator.
    env: (upstream) => adapterEnv({ ...providerEnv('fake', upstream, { kind: 'local' }), GATEWAY_AGENT_ADAPTER_APPROVAL_MODE: 'prompt' }),
  });

  it("creates an External agent session from the form (the catalog's range chip), chats with it, approves, denies and grants its tool calls from the banner", async () => {
    // The adapter never runs as root: its workspace is the sandbox uid's (test/support/sandbox.ts).
    const workspace = mkdtempSync(join(tmpdir(), 'hecate-console-ext-'));
    execFileSync('git', ['init', '-q', workspace]);
    sandboxOwned(workspace);

    const { context, page } = await openConsole(holder.browser, suite.stack.url, TOKEN, '/chat');
    try {
      await page.getByRole('button', { name: 'New session' }).click();
      await page.getByRole('radio', { name: /^External agent/ }).check();
      // The catalog: the adapter whose version is outside its tested range says so, in the list and as a chip.
      const picker = page.getByRole('combobox', { name: /^Adapter\b/ });
      await picker.selectOption('fault_old');
      await expect(picker.locator('option[value="fault_old"]').textContent()).resolves.toContain('(outside tested range)');
      await expect(picker.locator('option[value="fault"]').textContent()).resolves.toBe('Fault Agent');
      const chip = page.getByText('outside tested range', { exact: true });
      await chip.waitFor();
      expect(await chip.getAttribute('title')).toBe('Tested range: >=2.0.0');
      await page.getByText(/version 1\.4\.2/).waitFor();
      await checkA11y(page);

      await picker.selectOption('fault');
      await chip.waitFor({ state: 'detached' });
      await page.getByText(/Found at \/.+ · version 1\.4\.2/).waitFor();
      await page.getByLabel('Workspace path').fill(workspace);
      await page.getByLabel('Title').fill('Fault agent chat');
      await page.getByRole('button', { name: 'Create session' }).click();
      await page.getByRole('heading', { name: 'Fault agent chat', level: 2 }).waitFor({ timeout: 30_000 });
      const sessionId = decodeURIComponent(new URL(page.url()).pathname.split('/').pop()!);
      await page.getByText('adapter fault', { exact: true }).waitFor();

      // A prompt the fault agent echoes, streamed into the transcript under the adapter's name.
      const transcript = page.getByRole('region', { name: 'Transcript' });
      await page.getByLabel('Message', { exact: true }).fill('hello there');
      await page.getByRole('button', { name: 'Send', exact: true }).click();
      await transcript.getByRole('article', { name: 'Fault Agent, completed' }).filter({ hasText: 'echo: hello there' }).waitFor({ timeout: 30_000 });

      // A prompt that makes it write a file: its tool call shows while it asks permission, approved from the banner.
      await page.getByLabel('Message', { exact: true }).fill('write notes.txt remember the milk');
      await page.getByRole('button', { name: 'Send', exact: true }).click();
      const banner = page.getByRole('region', { name: /Approval required: Write notes\.txt/ });
      await banner.waitFor({ timeout: 30_000 });
      await banner.getByText(`Write notes.txt in ${workspace}`).waitFor();
      // The running reply is named after the adapter already (an earlier reply of the session told its name).
      await transcript
        .getByRole('article', { name: 'Fault Agent, awaiting_approval' })
        .getByText(/Write notes\.txt/)
        .first()
        .waitFor();
      expect(existsSync(join(workspace, 'notes.txt'))).toBe(false);
      await checkA11y(page);
      await banner.getByRole('button', { name: 'Approve' }).click();
      await banner.waitFor({ state: 'detached', timeout: 30_000 });
      const wrote = transcript.getByRole('article', { name: 'Fault Agent, completed' }).filter({ hasText: 'wrote notes.txt' });
      await wrote.waitFor({ timeout: 30_000 });
      await wrote
        .getByRole('list', { name: 'Activity' })
        .getByText(/Write notes\.txt/)
        .first()
        .waitFor();
      await wrote.getByText(/Changed files/).waitFor();
      // Billed to the agent's own login, not by this gateway (`cost_mode: external`).
      await wrote.getByText("cost: billed to the agent's own login").waitFor();
      expect(readFileSync(join(workspace, 'notes.txt'), 'utf8')).toBe('remember the milk\n');

      // The API agrees with the page.
      const api = sdkClient(suite.stack.url, TOKEN);
      const stored = (await api.get('/hecate/v1/agent-chat/sessions/{session_id}', { path: { session_id: sessionId } })).data;
      expect(stored).toMatchObject({ runtime_kind: 'external_agent', adapter_id: 'fault', title: 'Fault agent chat' });
      expect(stored.messages.map((m) => [m.role, m.status, m.content])).toEqual([
        ['user', 'completed', 'hello there'],
        ['assistant', 'completed', 'echo: hello there'],
        ['user', 'completed', 'write notes.txt remember the milk'],
        ['assistant', 'completed', 'wrote notes.txt'],
      ]);

      // Denied from the banner: the agent hears it and writes nothing.
      const send = async (text: string) => {
        await page.getByLabel('Message', { exact: true }).fill(text);
        await page.getByRole('button', { name: 'Send', exact: true }).click();
      };
      const reply = (text: string) =>
        transcript.getByRole('article', { name: 'Fault Agent, completed' }).filter({ hasText: text }).waitFor({ timeout: 30_000 });
      await send('write denied.txt not this');
      const denyBanner = page.getByRole('region', { name: /Approval required: Write denied\.txt/ });
      await denyBanner.waitFor({ timeout: 30_000 });
      await denyBanner.getByRole('button', { name: 'Deny' }).click();
      await denyBanner.waitFor({ state: 'detached', timeout: 30_000 });
      await reply('not allowed to write denied.txt');
      expect(existsSync(join(workspace, 'denied.txt'))).toBe(false);

      // Approved for the rest of the session: the grant answers the session's next edit, no banner asks again.
      await send('write first.txt one');
      const grantBanner = page.getByRole('region', { name: /Approval required: Write first\.txt/ });
      await grantBanner.waitFor({ timeout: 30_000 });
      await grantBanner.getByRole('radio', { name: 'This tool kind for the rest of this session' }).check();
      await checkA11y(page);
      await grantBanner.getByRole('button', { name: 'Approve' }).click();
      await grantBanner.waitFor({ state: 'detached', timeout: 30_000 });
      await reply('wrote first.txt');
      await send('write second.txt two');
      await reply('wrote second.txt');
      expect(await page.getByRole('region', { name: /Approval required/ }).count()).toBe(0);
      expect(readFileSync(join(workspace, 'first.txt'), 'utf8')).toBe('one\n');
      expect(readFileSync(join(workspace, 'second.txt'), 'utf8')).toBe('two\n');

      // The API saw each decision as the page made it: one denied by the operator, one approved with a session
      // grant, and the next answered by that grant.
      const approvals = (await api.get('/hecate/v1/agent-chat/sessions/{session_id}/approvals', { path: { session_id: sessionId } })).data;
      expect(approvals.map((a) => [a.tool_name, a.status, a.scope, a.path])).toEqual([
        ['Write notes.txt', 'approved', 'once', 'operator'],
        ['Write denied.txt', 'denied', 'once', 'operator'],
        ['Write first.txt', 'approved', 'session', 'operator'],
        ['Write second.txt', 'approved', 'session', 'grant'],
      ]);
      const grants = (await api.get('/hecate/v1/agent-chat/grants', {})).data;
      expect(grants).toEqual([
        expect.objectContaining({ scope: 'session', decision: 'allow', tool_kind: 'file_write', session_id: sessionId, adapter_id: 'fault' }),
      ]);
      await checkA11y(page);
      expect(pageProblems(page)).toEqual([]);
      // Deleted: its adapter process goes with it.
      await api.delete('/hecate/v1/agent-chat/sessions/{session_id}', { path: { session_id: sessionId } });
    } finally {
      await context.close();
    }
  }, 120_000);
});
