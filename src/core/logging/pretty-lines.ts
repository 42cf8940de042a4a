/**
 * The log as a person at a terminal reads it: `HH:MM:SS level message key=value …` on one line when that fits in
 * ONE_LINE characters, else the message and then one indented `key  value` line per field (pid, role and name are
 * left out: one process, one terminal). What it writes is the same record pino would have
 * written as JSON — redaction and scrubbing happen before — so nothing is shown here that the JSON would not show.
 */
const QUIET_KEYS = new Set(['level', 'time', 'pid', 'role', 'name', 'msg', 'hostname']);
const ONE_LINE = 120;

const text = (value: unknown): string => (typeof value === 'string' ? value : JSON.stringify(value));

export function prettyLine(json: string): string {
  let record: Record<string, unknown>;
  try {
    record = JSON.parse(json) as Record<string, unknown>;
  } catch {
    return json;
  }
  const time = typeof record.time === 'string' ? record.time.slice(11, 19) : '';
  const level = String(record.level ?? '').padEnd(5);
  const head = `${time} ${level} ${String(record.msg ?? '')}`;
  const fields = Object.entries(record).filter(([key]) => !QUIET_KEYS.has(key));
  const oneLine = [head, ...fields.map(([key, value]) => `${key}=${text(value)}`)].join('  ');
  if (oneLine.length <= ONE_LINE) return `${oneLine}\n`;
  const width = Math.max(0, ...fields.map(([key]) => key.length));
  return `${[head, ...fields.map(([key, value]) => `         ${key.padEnd(width)}  ${text(value)}`)].join('\n')}\n`;
}

/** A pino destination that writes each record as prettyLine() to `out`. */
export function prettyDestination(out: NodeJS.WritableStream): { write(chunk: string): boolean } {
  return { write: (chunk: string) => out.write(prettyLine(chunk)) };
}
