/** Display helpers shared by the pages: one spelling of money, tokens, times and durations across the console. */

const usd = new Intl.NumberFormat('en-US', { style: 'currency', currency: 'USD', minimumFractionDigits: 2, maximumFractionDigits: 6 });
const count = new Intl.NumberFormat('en-US');

/** Micro-dollars (the API's unit for cost) as dollars. */
export const formatMicrosUsd = (micros: number | null | undefined): string => (micros == null ? '—' : usd.format(micros / 1_000_000));

export const formatCount = (n: number | null | undefined): string => (n == null ? '—' : count.format(n));

export const formatTime = (iso: string | null | undefined): string => (iso ? new Date(iso).toLocaleString() : '—');

export function formatDuration(ms: number | null | undefined): string {
  if (ms == null) return '—';
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(ms < 10_000 ? 2 : 1)} s`;
  const m = Math.floor(ms / 60_000);
  return `${m} min ${Math.round((ms % 60_000) / 1000)} s`;
}
