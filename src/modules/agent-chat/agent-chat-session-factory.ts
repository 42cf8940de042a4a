import { Inject, Injectable } from '@nestjs/common';
import { SAVED_AGENTS, type SavedAgentSource, type SavedAgentSpec, WorkspaceOps } from '@modules/tasks';
import type { Principal } from '@core/context/request-context';
import { InvalidRequestError } from '@core/http/domain-error';
import { ModelCapabilitiesService } from '@modules/providers';
import { TurnRuntimes } from './turns/turn-runtime';
import { canonicalWorkspace, newChatId } from './agent-chat-inputs';
import { ExternalSessionsService } from './external/external-sessions.service';
import { AgentChatRepository } from './agent-chat.repository';
import type { CreateAgentChatSessionDto } from './agent-chat.dto';
import { adapterNotFound, modelRequired, workspaceRequired } from './agent-chat.errors';
import { capabilitiesOf, runtimeOf } from './turns/agent-chat-turn-checks';

/**
 * Session creation: a saved agent's fields under the request's own, then a model or agent session row — or, for
 * runtime_kind external_agent, an external-agent session (its adapter, workspace and grants).
 */
@Injectable()
export class AgentChatSessionFactory {
  constructor(
    private readonly repo: AgentChatRepository,
    private readonly runtimes: TurnRuntimes,
    private readonly capabilities: ModelCapabilitiesService,
    private readonly external: ExternalSessionsService,
    private readonly ops: WorkspaceOps,
    @Inject(SAVED_AGENTS) private readonly savedAgents: SavedAgentSource,
  ) {}

  /** Creates the session; its id. */
  async create(p: Principal, request: CreateAgentChatSessionDto): Promise<string> {
    const agent = request.agent_id ? await this.savedAgents.resolve(p.tenantId, request.agent_id, request.agent_version) : null;
    const dto = agent ? withAgent(request, agent) : request;
    const runtime = runtimeOf(dto.runtime_kind ?? 'model');
    if (!this.runtimes.has(runtime)) throw adapterNotFound(dto.adapter_id ?? '');
    if (runtime === 'external_agent' && agent) throw new InvalidRequestError('agent_id: a saved agent runs as runtime_kind model or agent, not external_agent');
    if (runtime === 'external_agent') return this.external.create(p, dto);
    const model = dto.model?.trim() ?? '';
    if (!model) throw modelRequired();
    const workspace = dto.workspace?.trim() ? await canonicalWorkspace(this.ops, p, dto.workspace) : '';
    if (runtime === 'agent' && !workspace) throw workspaceRequired();
    const provider = dto.provider?.trim() ?? '';
    const capabilities = capabilitiesOf(this.capabilities, provider, model, runtime);
    const session = {
      id: newChatId('agent_chat'),
      tenant_id: p.tenantId,
      title: dto.title?.trim() || 'Hecate Chat',
      runtime_kind: runtime,
      provider,
      model,
      workspace,
      system_prompt: dto.system_prompt ?? '',
      adapter_id: '',
      agent_id: agent?.id ?? '',
      agent_version: agent?.version ?? null,
      api_key_id: p.apiKeyId ?? null,
      capabilities,
      status: 'idle',
      session_started_at: null,
    };
    await this.repo.insertSession(session);
    return session.id;
  }
}

/** A saved agent's session fields under the request's own (docs/api.md §5: the agent fills what the request leaves out). */
function withAgent(dto: CreateAgentChatSessionDto, agent: SavedAgentSpec): CreateAgentChatSessionDto {
  return {
    ...dto,
    runtime_kind: dto.runtime_kind ?? agent.runtimeKind,
    provider: dto.provider ?? (agent.provider || undefined),
    model: dto.model ?? (agent.model || undefined),
    system_prompt: dto.system_prompt ?? (agent.systemPrompt || undefined),
  };
}
