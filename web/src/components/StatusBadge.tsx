/** A state in words with a colour beside it (never colour alone). */
export type Tone = 'ok' | 'warn' | 'error' | 'idle';

export function StatusBadge({ tone, children }: { tone: Tone; children: string }) {
  return <span className={`badge badge-${tone}`}>{children}</span>;
}
