/**
 * Values as Postgres can store them. Text and jsonb refuse U+0000, and a NUL can arrive where the client is not at fault
 * (a model's answer or tool arguments, a tool's output) after the upstream call was made and billed: stored text gets
 * U+FFFD in its place instead of failing the write. Client input with NUL is refused at the HTTP edge (json-limits).
 */
export const REPLACEMENT = '\uFFFD';

export const storableText = (text: string): string => (text.includes('\0') ? text.replaceAll('\0', REPLACEMENT) : text);

/** A `\u0000` escape in JSON text (not an escaped backslash followed by `u0000`). */
const NUL_ESCAPE = /(?<!\\)((?:\\\\)*)\\u0000/g;

/** JSON.stringify for a jsonb parameter, with NUL in strings and keys replaced. */
export function storableJson(value: unknown): string {
  const text = JSON.stringify(value);
  return text !== undefined && text.includes('\\u0000') ? text.replace(NUL_ESCAPE, '$1\\ufffd') : text;
}

/** A JSON-shaped value with NUL in its strings and keys replaced (the same value when it holds none). */
export function storableValue<T>(value: T): T {
  const text = JSON.stringify(value);
  if (text === undefined || !text.includes('\\u0000')) return value;
  return JSON.parse(text.replace(NUL_ESCAPE, '$1\\ufffd')) as T;
}
