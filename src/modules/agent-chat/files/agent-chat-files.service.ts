import { Injectable } from '@nestjs/common';
import { ConflictError, InvalidRequestError, NotFoundError } from '@core/http/domain-error';
import { noWorkerAnswered, WorkerRequests } from '@core/lease';
import { REVERT_REQUEST, type MessageRow, type RevertRequest, type RevertResult } from '../agent-chat-rows';
import { AgentChatRepository } from '../agent-chat.repository';
import { AgentChatService } from '../agent-chat.service';
import { AgentChatMessageNotFoundError } from '../agent-chat.errors';
import { fileView, parseUnifiedDiff } from './changed-files';

/** How long `POST …/revert` waits for a worker to revert the files. */
const REVERT_WAIT_MS = 60_000;

/**
 * Changed files of an agent turn (docs/api.md §4): the list and per-file diff come from the diff the turn captured (stored on
 * its assistant message); a revert of some or all of those paths runs on a worker (the api never opens a workspace) and
 * refreshes the stored diff for the originally captured paths.
 */
@Injectable()
export class AgentChatFilesService {
  constructor(
    private readonly repo: AgentChatRepository,
    private readonly chats: AgentChatService,
    private readonly requests: WorkerRequests,
  ) {}

  private async message(tenantId: string, sessionId: string, messageId: string): Promise<MessageRow> {
    await this.chats.require(tenantId, sessionId);
    const m = await this.repo.findMessage(sessionId, messageId);
    if (!m) throw new AgentChatMessageNotFoundError(sessionId, messageId);
    return m;
  }

  async files(tenantId: string, sessionId: string, messageId: string) {
    const m = await this.message(tenantId, sessionId, messageId);
    return parseUnifiedDiff(m.diff ?? '').map(fileView);
  }

  async file(tenantId: string, sessionId: string, messageId: string, path: string) {
    const m = await this.message(tenantId, sessionId, messageId);
    const f = parseUnifiedDiff(m.diff ?? '').find((x) => x.path === path);
    if (!f) throw new NotFoundError(`message ${messageId} changed no file ${JSON.stringify(path)}`, { details: { path } });
    return { ...fileView(f), diff: f.diff };
  }

  async revert(tenantId: string, sessionId: string, messageId: string, paths: string[]) {
    const m = await this.message(tenantId, sessionId, messageId);
    if (m.diff === null || !m.base_tree) {
      throw new InvalidRequestError('revert works on Git workspaces only, for the files an agent turn changed; this message captured no Git diff', {
        details: { field: 'message_id' },
      });
    }
    const captured = (m.metadata.captured_paths as string[] | undefined) ?? parseUnifiedDiff(m.diff).map((f) => f.path);
    const current = new Set(parseUnifiedDiff(m.diff).map((f) => f.path));
    const unknown = paths.filter((p) => !captured.includes(p));
    if (unknown.length) throw new InvalidRequestError(`not changed by this message: ${unknown.join(', ')}`, { details: { field: 'paths', paths: unknown } });
    const selected = (paths.length ? paths : captured).filter((p) => current.has(p));
    if (selected.length === 0) throw new ConflictError('nothing left to revert: those files already match their state before the turn');
    const busy = await this.chats.currentTurn(sessionId);
    if (busy)
      throw new ConflictError('a turn of this chat is running; revert after it ends', { details: { turn_id: busy.id } }, 'agent_chat.agent_session_busy');
    const request: RevertRequest = { session_id: sessionId, message_id: messageId, paths: selected };
    const result = await this.requests.ask(
      tenantId,
      REVERT_REQUEST,
      { ...request },
      {
        waitMs: REVERT_WAIT_MS,
        noWorker: () => noWorkerAnswered('no worker reverted the files in time', { userMessage: 'The revert did not run.' }),
      },
    );
    return result as unknown as RevertResult;
  }
}
