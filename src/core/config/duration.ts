const UNIT_MS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

/** Parses Go-style durations ("30s", "1m30s", "250ms") or a bare number of `bareUnit`. */
export function parseDurationMs(value: string, bareUnit: 'ms' | 's' = 'ms'): number | null {
  const trimmed = value.trim();
  if (/^\d+(\.\d+)?$/.test(trimmed)) return Math.round(Number(trimmed) * UNIT_MS[bareUnit]);
  const re = /(\d+(?:\.\d+)?)(ms|s|m|h)/gy;
  let total = 0;
  let consumed = 0;
  let match: RegExpExecArray | null;
  while ((match = re.exec(trimmed)) !== null) {
    total += Number(match[1]) * UNIT_MS[match[2]];
    consumed = re.lastIndex;
  }
  return consumed === trimmed.length && consumed > 0 ? Math.round(total) : null;
}
