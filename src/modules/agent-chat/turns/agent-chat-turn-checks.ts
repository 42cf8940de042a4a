import type { ModelCapabilitiesService } from '@modules/providers';
import type { AppConfig } from '@core/config/app-config';
import { type Capabilities, RUNTIME_KINDS, type RuntimeKind, type SessionRow, type TurnRow } from '../agent-chat-rows';
import {
  AgentChatErrorType,
  AgentSessionBusyError,
  guardrailExceeded,
  modelCapabilityRequired,
  runtimeKindInvalid,
  SessionStoppingError,
} from '../agent-chat.errors';

/** The checks shared by session creation and message posting: runtime kind, model capabilities, guardrails, busy. */

export function runtimeOf(value: string): RuntimeKind {
  if (!(RUNTIME_KINDS as readonly string[]).includes(value)) throw runtimeKindInvalid(value);
  return value as RuntimeKind;
}

/** The 409 for a session whose turn is active: `session_stopping` once its cancel was asked for, else busy. */
export function busyError(t: TurnRow) {
  if (t.cancel_requested) return new SessionStoppingError(t.id);
  return new AgentSessionBusyError({ task_id: t.task_id, latest_run_id: t.run_id, run_status: t.status, turn_id: t.id });
}

/** The model's capabilities as the session/message records them; an agent turn needs tool calling. */
export function capabilitiesOf(service: ModelCapabilitiesService, provider: string, model: string, runtime: RuntimeKind): Capabilities {
  const caps = service.effective(provider, model);
  const snapshot = { tool_calling: caps.tool_calling, streaming: caps.streaming, source: caps.source };
  if (runtime === 'agent' && caps.tool_calling === 'none') throw modelCapabilityRequired(provider, model, snapshot);
  return snapshot;
}

/** The session's guardrails (turns used, wall-clock age, idle time): a new turn past one of them is refused. */
export function checkGuardrails(s: SessionRow, limits: AppConfig['agent']['chat']): void {
  const { maxTurnsPerSession, maxSessionDurationMs, idleTimeoutMs } = limits;
  if (maxTurnsPerSession > 0 && s.turns_used >= maxTurnsPerSession) {
    throw guardrailExceeded(AgentChatErrorType.SessionLimitExceeded, `this chat used its ${maxTurnsPerSession} turns`, {
      turns_used: s.turns_used,
      max_turns_per_session: maxTurnsPerSession,
    });
  }
  if (maxSessionDurationMs > 0 && s.session_started_at && Date.now() - new Date(s.session_started_at).getTime() > maxSessionDurationMs) {
    throw guardrailExceeded(AgentChatErrorType.SessionDurationLimitExceeded, 'this chat is older than its wall-clock limit', {
      limit_ms: maxSessionDurationMs,
      session_started_at: new Date(s.session_started_at).toISOString(),
    });
  }
  if (idleTimeoutMs > 0 && s.session_started_at && Date.now() - new Date(s.last_activity_at).getTime() > idleTimeoutMs) {
    throw guardrailExceeded(AgentChatErrorType.SessionIdleTimeout, 'this chat was idle beyond its timeout', {
      limit_ms: idleTimeoutMs,
      last_activity_at: new Date(s.last_activity_at).toISOString(),
    });
  }
}
