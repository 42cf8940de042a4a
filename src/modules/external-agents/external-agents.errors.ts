import { DomainError } from '@core/http/domain-error';

/** The External Agent session error of the `agent_chat.*` table (docs/api.md §4): Agent Chat lists it with its own. */
export const ExternalAgentsErrorType = {
  AdapterStartFailed: 'agent_chat.adapter_start_failed',
} as const;

/** 502: the session's adapter did not start (installation, login, version), with its diagnostic. */
export const adapterStartFailed = (adapterId: string, error: string): DomainError =>
  new DomainError(ExternalAgentsErrorType.AdapterStartFailed, 502, `the ${adapterId} adapter did not start: ${error}`, {
    userMessage: 'The external agent could not be started.',
    operatorAction: `Check the adapter with POST /hecate/v1/agent-adapters/${adapterId}/probe (installation, login, version).`,
    details: { adapter_id: adapterId },
  });
