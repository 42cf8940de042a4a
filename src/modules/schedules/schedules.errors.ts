import { InvalidRequestError, NotFoundError } from '@core/http/domain-error';

/** 404: no such schedule in the caller's tenant (another tenant's schedule is not found either). */
export class ScheduleNotFoundError extends NotFoundError {
  constructor(id: string) {
    super(`schedule ${id} not found`);
  }
}

export class InvalidScheduleError extends InvalidRequestError {
  constructor(problems: string[]) {
    super(problems.join('; '), { details: { problems } });
  }
}
