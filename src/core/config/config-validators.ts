import { registerDecorator, ValidationOptions } from 'class-validator';
import { parseDurationMs } from './duration';

/** Accepts Go-style durations ("30s", "1m") or a bare number. */
export function IsDuration(options?: ValidationOptions): PropertyDecorator {
  return (target, propertyKey) =>
    registerDecorator({
      name: 'isDuration',
      target: target.constructor,
      propertyName: String(propertyKey),
      options: { message: `${String(propertyKey)} must be a duration like 30s, 1m or 250ms`, ...options },
      validator: { validate: (v: unknown) => typeof v === 'string' && parseDurationMs(v) !== null },
    });
}

/** Accepts "true"/"false"/"1"/"0" (env values are strings). */
export function IsBooleanString(options?: ValidationOptions): PropertyDecorator {
  return (target, propertyKey) =>
    registerDecorator({
      name: 'isBooleanString',
      target: target.constructor,
      propertyName: String(propertyKey),
      options: { message: `${String(propertyKey)} must be true or false`, ...options },
      validator: { validate: (v: unknown) => typeof v === 'string' && /^(true|false|1|0)$/i.test(v) },
    });
}

export function bool(value: string | undefined, fallback: boolean): boolean {
  if (value === undefined || value === '') return fallback;
  return /^(true|1)$/i.test(value);
}

export function int(value: string | undefined, fallback: number): number {
  return value === undefined || value === '' ? fallback : Number.parseInt(value, 10);
}

export function duration(value: string | undefined, fallbackMs: number, bareUnit: 'ms' | 's' = 'ms'): number {
  return value === undefined || value === '' ? fallbackMs : (parseDurationMs(value, bareUnit) ?? fallbackMs);
}

export function csv(value: string | undefined, fallback: string[]): string[] {
  if (value === undefined) return fallback;
  return value
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s.length > 0);
}
