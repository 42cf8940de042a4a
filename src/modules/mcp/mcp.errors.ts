import { InvalidRequestError, ServiceUnavailableError } from '@core/http/domain-error';

/** 400: the probe entry is invalid, or the server did not start or list its tools (the message is the diagnostic). */
export class McpProbeFailedError extends InvalidRequestError {
  constructor(message: string, problems?: string[]) {
    super(message, {
      userMessage: 'The MCP server could not be probed.',
      operatorAction: 'Check the server entry (command, args, url, $VAR references) and that the server starts and answers tools/list.',
      ...(problems ? { details: { problems } } : {}),
    });
  }
}

/** 503: no worker took the probe, or the worker that took it never answered. */
export class McpWorkerUnavailableError extends ServiceUnavailableError {
  constructor(message: string) {
    super(message, { operatorAction: 'Check that a worker consuming the system queue is running (GET /readyz, worker logs) and retry.' });
  }
}
