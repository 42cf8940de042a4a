import type { ModelCapabilitiesService } from '@modules/providers';
import type { SessionRow, TurnRow } from '../agent-chat-rows';
import { AgentChatErrorType, AgentSessionBusyError, SessionStoppingError } from '../agent-chat.errors';
import { busyError, capabilitiesOf, checkGuardrails, runtimeOf } from './agent-chat-turn-checks';

const limits = { maxTurnsPerSession: 0, maxSessionDurationMs: 0, idleTimeoutMs: 0 } as Parameters<typeof checkGuardrails>[1];
const session = (over: Partial<SessionRow>): SessionRow =>
  ({ turns_used: 0, session_started_at: new Date(), last_activity_at: new Date(), ...over }) as SessionRow;
const caps = (tool_calling: string) => ({ effective: () => ({ tool_calling, streaming: true, source: 'default' }) }) as unknown as ModelCapabilitiesService;

describe('agent chat turn checks', () => {
  it('accepts the three runtime kinds and refuses any other', () => {
    expect(runtimeOf('model')).toBe('model');
    expect(runtimeOf('external_agent')).toBe('external_agent');
    expect(() => runtimeOf('robot')).toThrow(/runtime_kind "robot"/);
  });

  it('calls a session stopping once its active turn was asked to cancel, else busy', () => {
    const turn = { id: 'turn_1', task_id: null, run_id: null, status: 'running', cancel_requested: false } as unknown as TurnRow;
    expect(busyError(turn)).toBeInstanceOf(AgentSessionBusyError);
    expect(busyError({ ...turn, cancel_requested: true })).toBeInstanceOf(SessionStoppingError);
  });

  it('snapshots the capabilities, and an agent turn needs tool calling', () => {
    expect(capabilitiesOf(caps('native'), 'p', 'm', 'agent')).toEqual({ tool_calling: 'native', streaming: true, source: 'default' });
    expect(capabilitiesOf(caps('none'), 'p', 'm', 'model').tool_calling).toBe('none');
    expect(() => capabilitiesOf(caps('none'), 'p', 'm', 'agent')).toThrow(expect.objectContaining({ type: AgentChatErrorType.ModelCapabilityRequired }));
  });

  it('refuses a turn past the turn limit, the wall-clock limit or the idle timeout (0 = off)', () => {
    expect(() => checkGuardrails(session({ turns_used: 99 }), limits)).not.toThrow();
    expect(() => checkGuardrails(session({ turns_used: 3 }), { ...limits, maxTurnsPerSession: 3 })).toThrow(
      expect.objectContaining({ type: AgentChatErrorType.SessionLimitExceeded }),
    );
    const old = new Date(Date.now() - 60_000);
    expect(() => checkGuardrails(session({ session_started_at: old }), { ...limits, maxSessionDurationMs: 1000 })).toThrow(
      expect.objectContaining({ type: AgentChatErrorType.SessionDurationLimitExceeded }),
    );
    expect(() => checkGuardrails(session({ last_activity_at: old }), { ...limits, idleTimeoutMs: 1000 })).toThrow(
      expect.objectContaining({ type: AgentChatErrorType.SessionIdleTimeout }),
    );
  });
});
