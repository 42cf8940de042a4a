import { ConflictError, InvalidRequestError, NotFoundError } from '@core/http/domain-error';

/** 404: no such webhook in the caller's tenant (another tenant's webhook is not found either). */
export class WebhookNotFoundError extends NotFoundError {
  constructor(id: string) {
    super(`webhook ${id} not found`);
  }
}

export class DeliveryNotFoundError extends NotFoundError {
  constructor(webhookId: string, id: string) {
    super(`webhook ${webhookId} has no delivery ${id}`);
  }
}

export class InvalidWebhookError extends InvalidRequestError {
  constructor(problems: string[]) {
    super(problems.join('; '), { details: { problems } });
  }
}

/** 409 (as for literal MCP values): a scaled server without GATEWAY_SECRET_KEY has nothing to seal a signing secret with. */
export class WebhookSecretKeyMissingError extends ConflictError {
  constructor() {
    super('cannot store a webhook signing secret: GATEWAY_SECRET_KEY is not set', {
      userMessage: 'Webhook secrets cannot be stored without an encryption key.',
      operatorAction: 'Set GATEWAY_SECRET_KEY (the same value on every api and worker) and restart.',
    });
  }
}
