import { Inject, Injectable } from '@nestjs/common';
import { AppConfig } from '@core/config/app-config';
import { ConflictError } from '@core/http/domain-error';
import { type WorkerRequestContext, WorkerRequestHandler } from '@core/lease';
import { COMMAND_SANDBOX, type CommandSandbox, WorkspaceGit } from '@modules/workspaces';
import { REVERT_REQUEST, type RevertRequest, type RevertResult } from '../agent-chat-rows';
import { AgentChatTurnsService } from '../turns/agent-chat-turns.service';
import { AgentChatRepository } from '../agent-chat.repository';
import { diffStatOf, fileView, parseUnifiedDiff } from './changed-files';

/**
 * `agent_chat.revert` worker requests: applies the selected files' blocks of a message's captured diff in reverse in
 * the session's workspace (in the command sandbox), then stores the diff of the originally captured paths against the
 * turn's base tree again, with a `files_reverted` record. Any failure answers 409 `revert failed: …` with the paths.
 */
@Injectable()
export class AgentChatRevertRunner {
  constructor(
    private readonly repo: AgentChatRepository,
    private readonly turns: AgentChatTurnsService,
    @Inject(COMMAND_SANDBOX) private readonly sandbox: CommandSandbox,
    private readonly config: AppConfig,
  ) {}

  @WorkerRequestHandler(REVERT_REQUEST)
  async execute(revert: RevertRequest, ctx: WorkerRequestContext): Promise<RevertResult> {
    try {
      return await this.revert(ctx.tenantId, revert, ctx.signal);
    } catch (err) {
      throw new ConflictError(`revert failed: ${err instanceof Error ? err.message : String(err)}`, { details: { paths: revert.paths } });
    } finally {
      this.turns.announce({ session_id: revert.session_id, tenant_id: ctx.tenantId }, 'reverted');
    }
  }

  private async revert(tenantId: string, revert: RevertRequest, signal: AbortSignal): Promise<RevertResult> {
    const session = await this.repo.findSession(tenantId, revert.session_id);
    const message = session ? await this.repo.findMessage(session.id, revert.message_id) : null;
    if (!session || !message?.diff || !message.base_tree) throw new Error('the message or its session is gone');
    const files = parseUnifiedDiff(message.diff);
    const patch = files
      .filter((f) => revert.paths.includes(f.path))
      .map((f) => f.diff)
      .join('');
    const git = new WorkspaceGit(this.sandbox, this.config.tasks, session.workspace, signal);
    const applied = await git.applyReverse(patch);
    if (!applied.ok) throw new Error(applied.error || 'git apply -R failed');
    const captured = (message.metadata.captured_paths as string[] | undefined) ?? files.map((f) => f.path);
    const diff = (await git.diff(message.base_tree, captured)) ?? '';
    const now = parseUnifiedDiff(diff);
    const reverts = [...((message.metadata.reverts as unknown[] | undefined) ?? []), { paths: revert.paths, at: new Date().toISOString() }];
    await this.repo.transaction((m) => this.repo.updateMessage(m, message.id, { diff, metadata: { ...message.metadata, captured_paths: captured, reverts } }));
    return { reverted: true, paths: revert.paths, diff_stat: diffStatOf(now), files: now.map(fileView) };
  }
}
