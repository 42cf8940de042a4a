import { ErrorType } from '@contracts/errors';
import { ConflictError, DomainError, NotFoundError } from '@core/http/domain-error';

export class SecretKeyMissingError extends DomainError {
  constructor() {
    super(ErrorType.Conflict, 409, 'cannot store a provider API key: GATEWAY_SECRET_KEY is not set', {
      userMessage: 'Provider keys cannot be stored without an encryption key.',
      operatorAction: 'Set GATEWAY_SECRET_KEY (the same value on every api process) and restart, or configure the key with PROVIDER_<NAME>_API_KEY.',
    });
  }
}

export class ProviderNotFoundError extends NotFoundError {
  constructor(id: string) {
    super(`provider ${id} not found`, { operatorAction: 'List providers with GET /hecate/v1/settings/providers.' });
  }
}

export class ProviderExistsError extends ConflictError {
  constructor(message: string) {
    super(message, {
      userMessage: 'A provider with that name or base URL already exists.',
      operatorAction: 'Pick another custom_name or edit the existing provider.',
    });
  }
}

export class EnvProviderError extends ConflictError {
  constructor(id: string) {
    super(`provider ${id} is configured by PROVIDER_${id.toUpperCase()}_* environment variables and cannot be deleted here`, {
      userMessage: 'This provider comes from the environment.',
      operatorAction: `Remove the PROVIDER_${id.toUpperCase()}_* variables and restart, or PATCH it to override its settings.`,
    });
  }
}
