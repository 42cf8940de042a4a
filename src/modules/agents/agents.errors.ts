import { ConflictError, InvalidRequestError, NotFoundError } from '@core/http/domain-error';

/** 404: no such agent in the caller's tenant (another tenant's agent is not found either). */
export class AgentNotFoundError extends NotFoundError {
  constructor(id: string) {
    super(`agent ${id} not found`);
  }
}

export class AgentVersionNotFoundError extends NotFoundError {
  constructor(id: string, version: number) {
    super(`agent ${id} has no version ${version}`);
  }
}

/** 409: names are unique per tenant. */
export class AgentNameTakenError extends ConflictError {
  constructor(name: string) {
    super(
      `an agent named "${name}" already exists`,
      { operatorAction: 'Choose another name, or update the existing agent.', details: { name } },
      'agent_name_taken',
    );
  }
}

export class InvalidAgentError extends InvalidRequestError {
  constructor(problems: string[]) {
    super(problems.join('; '), { details: { problems } });
  }
}
