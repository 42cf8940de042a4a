import { Injectable } from '@nestjs/common';
import { AppConfig } from '@core/config/app-config';
import type { RequestOrigin } from '@core/context/request-context';
import { rootLogger } from '@core/logging/logger';
import { ModelCapabilitiesService } from '@modules/providers';
import { ChatGenerationService } from './chat-generation.service';
import { ChatInflightService } from './chat-inflight.service';
import { ChatLineageService, ClaimedCompaction } from './chat-lineage.service';
import { ChatMessageJson, textOf } from './chat-message';
import type { ChatSessionRow } from './chat-rows';
import { ChatSessionRepository } from './chat-session.repository';

const SUMMARY_INSTRUCTIONS =
  'You compress chat transcripts. Summarize the conversation below so that the summary can replace it in a ' +
  "later model call: keep the user's goals, facts, decisions, names, numbers, code identifiers and open questions. " +
  'Reply with the summary only.';

function transcriptOf(messages: ChatMessageJson[]): string {
  return messages
    .map((m) => {
      const text = textOf(m.content);
      const calls = (m.tool_calls ?? []).map((c) => `[tool call ${c.function.name}(${c.function.arguments})]`).join(' ');
      const label = m.role === 'tool' ? `TOOL RESULT${m.tool_error ? ' (error)' : ''}` : m.role.toUpperCase();
      return `${label}: ${[text, calls].filter(Boolean).join(' ')}`;
    })
    .join('\n\n');
}

/** Compaction (docs/api.md §2): explicit (`POST …/compact`) and automatic before a generation. */
@Injectable()
export class ChatCompactionService {
  constructor(
    private readonly config: AppConfig,
    private readonly sessions: ChatSessionRepository,
    private readonly lineage: ChatLineageService,
    private readonly generation: ChatGenerationService,
    private readonly inflight: ChatInflightService,
    private readonly capabilities: ModelCapabilitiesService,
  ) {}

  async compact(
    tenantId: string,
    sessionId: string,
    opts: { model?: string; provider?: string; keepLastMessages?: number; origin: RequestOrigin | null },
  ): Promise<ChatSessionRow> {
    const claim = await this.lineage.claim(tenantId, sessionId, { keepLastMessages: opts.keepLastMessages, owner: this.inflight.owner });
    try {
      const summary = await this.summarize(claim, opts);
      return (await this.lineage.commit(claim, summary)).continuation;
    } catch (err) {
      await this.lineage.release(claim);
      throw err;
    }
  }

  /** The summary model: the request's, else GATEWAY_CHAT_COMPACTION_MODEL, else the session's last model. */
  private async summarize(claim: ClaimedCompaction, opts: { model?: string; provider?: string; origin: RequestOrigin | null }) {
    const { compaction } = this.config.chat;
    const model = opts.model ?? compaction.model ?? claim.lastModel ?? undefined;
    const provider = opts.model ? opts.provider : (opts.provider ?? compaction.provider);
    const { reply, call } = await this.generation.complete({
      tenantId: claim.tenantId,
      endpoint: '/hecate/v1/chat/sessions/compact',
      origin: opts.origin,
      model,
      provider,
      messages: [
        { role: 'system', content: SUMMARY_INSTRUCTIONS },
        { role: 'user', content: transcriptOf(claim.head.map((m) => m.messageJson)) },
      ],
    });
    return { text: reply.text, call };
  }

  /**
   * Before a generation: when the active path's estimated tokens exceed GATEWAY_CHAT_COMPACTION_RATIO of the
   * model's context window, compact and answer the continuation's id. Anything that prevents it (no
   * known window, busy session, nothing to compact, summary failure) leaves the session as it is.
   */
  async compactIfNeeded(tenantId: string, sessionId: string, opts: { model?: string; provider?: string }, origin: RequestOrigin | null): Promise<string> {
    const { compaction } = this.config.chat;
    if (!compaction.autoEnabled) return sessionId;
    const session = await this.sessions.find({ tenantId, id: sessionId });
    if (!session || session.preCompressionSnapshot || !session.activeLeafId) return sessionId;
    const model = opts.model ?? session.lastModel ?? this.config.gateway.defaultModel;
    if (!model) return sessionId;
    const window = this.capabilities.effective(opts.provider ?? session.lastProvider ?? '', model).max_context_tokens;
    if (!window) return sessionId;
    const estimated = await this.sessions.estimatedTokens(session.id, session.activeLeafId);
    if (estimated + Math.ceil(session.systemPrompt.length / 4) <= compaction.ratio * window) return sessionId;
    try {
      const summaryModel = compaction.model ? { model: compaction.model, provider: compaction.provider } : { model, provider: opts.provider };
      const continuation = await this.compact(tenantId, sessionId, { ...summaryModel, origin });
      rootLogger().info(
        { request_id: origin?.requestId, sessionId, continuation: continuation.id, estimated, window },
        'chat session compacted before a generation',
      );
      return continuation.id;
    } catch (err) {
      rootLogger().warn({ request_id: origin?.requestId, sessionId, err: String(err) }, 'automatic chat compaction skipped');
      return sessionId;
    }
  }
}
