import { InvalidRequestError } from '@core/http/domain-error';

/** The path escapes the workspace or allowed root (docs/security.md). */
export class PathEscapeError extends InvalidRequestError {
  constructor(message: string) {
    super(message, {
      userMessage: 'The path is outside the allowed workspace.',
      operatorAction: 'Use a path inside the task workspace (no .., no symlinks that leave it).',
    });
  }
}
