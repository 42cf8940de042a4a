import { ValidationError, ValidationPipe } from '@nestjs/common';
import { InvalidRequestError } from './domain-error';

const describe = (errors: ValidationError[], parent = ''): string[] =>
  errors.flatMap((e) => {
    const path = parent ? `${parent}.${e.property}` : e.property;
    const own = Object.values(e.constraints ?? {}).map((m) => (m.startsWith(e.property) ? `${parent ? `${parent}.` : ''}${m}` : `${path}: ${m}`));
    return [...own, ...describe(e.children ?? [], path)];
  });

/** Global validation (docs/style.md rule 11): unknown fields are refused, values are transformed to DTO types. */
export const createValidationPipe = (): ValidationPipe =>
  new ValidationPipe({
    whitelist: true,
    forbidNonWhitelisted: true,
    transform: true,
    exceptionFactory: (errors) => {
      const problems = describe(errors);
      return new InvalidRequestError(problems.join('; '), { details: { fields: problems } });
    },
  });
