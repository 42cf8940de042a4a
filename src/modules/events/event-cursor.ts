import { InvalidCursorError } from './events.errors';

/** Parses an `after_sequence` / `Last-Event-ID` value: absent → undefined; non-numeric → 400. */
export function parseCursor(value: string | string[] | undefined, name: string): number | undefined {
  const raw = Array.isArray(value) ? value[0] : value;
  if (raw === undefined || raw.trim() === '') return undefined;
  const trimmed = raw.trim();
  if (!/^\d{1,15}$/.test(trimmed)) throw new InvalidCursorError(name, trimmed);
  return Number(trimmed);
}
