import { Inject, Injectable } from '@nestjs/common';
import type { JobPayloads } from '@contracts/jobs';
import { AppConfig } from '@core/config/app-config';
import type { JobContext } from '@core/queue/run-queue.port';
import { COMMAND_SANDBOX, type CommandSandbox, WorkspaceGit } from '@modules/workspaces';
import { AgentChatTurnsService } from './agent-chat-turns.service';
import { RevertsRepository } from './reverts.repository';
import { AgentChatRepository } from './agent-chat.repository';
import { diffStatOf, fileView, parseUnifiedDiff } from './changed-files';

/**
 * `agent_chat.revert` on a worker: applies the selected files' blocks of a message's captured diff in reverse in the
 * session's workspace (in the command sandbox), then stores the diff of the originally captured paths against the
 * turn's base tree again, with a `files_reverted` record.
 */
@Injectable()
export class AgentChatRevertRunner {
  constructor(
    private readonly repo: AgentChatRepository,
    private readonly reverts: RevertsRepository,
    private readonly turns: AgentChatTurnsService,
    @Inject(COMMAND_SANDBOX) private readonly sandbox: CommandSandbox,
    private readonly config: AppConfig,
  ) {}

  async execute(payload: JobPayloads['agent_chat.revert'], job: JobContext): Promise<void> {
    const revert = await this.reverts.claimRevert(payload.revertId, this.config.tasks.leaseSeconds * 1000);
    if (!revert) return;
    const fail = (message: string) => this.reverts.finishRevert(revert.id, { status: 'failed', error: { type: 'revert_failed', message } });
    try {
      const session = await this.repo.findSession(revert.tenant_id, revert.session_id);
      const message = session ? await this.repo.findMessage(session.id, revert.message_id) : null;
      if (!session || !message?.diff || !message.base_tree) return await fail('the message or its session is gone');
      const files = parseUnifiedDiff(message.diff);
      const patch = files
        .filter((f) => revert.paths.includes(f.path))
        .map((f) => f.diff)
        .join('');
      const git = new WorkspaceGit(this.sandbox, this.config.tasks, session.workspace, job.signal);
      const applied = await git.applyReverse(patch);
      if (!applied.ok) return await fail(applied.error || 'git apply -R failed');
      const captured = (message.metadata.captured_paths as string[] | undefined) ?? files.map((f) => f.path);
      const diff = (await git.diff(message.base_tree, captured)) ?? '';
      const now = parseUnifiedDiff(diff);
      const reverts = [...((message.metadata.reverts as unknown[] | undefined) ?? []), { paths: revert.paths, at: new Date().toISOString() }];
      await this.repo.transaction((m) =>
        this.repo.updateMessage(m, message.id, { diff, metadata: { ...message.metadata, captured_paths: captured, reverts } }),
      );
      await this.reverts.finishRevert(revert.id, {
        status: 'done',
        result: { reverted: true, paths: revert.paths, diff_stat: diffStatOf(now), files: now.map(fileView) },
      });
    } catch (err) {
      await fail(err instanceof Error ? err.message : String(err));
    }
    this.turns.announce({ session_id: revert.session_id, tenant_id: revert.tenant_id }, 'reverted');
  }
}
