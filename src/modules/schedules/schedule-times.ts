import { Cron } from 'croner';

/** When a schedule fires: a cron expression in an IANA time zone, or one time; optionally bounded. */
export interface ScheduleTiming {
  kind: 'cron' | 'once';
  cronExpression: string | null;
  timezone: string;
  runAt: Date | null;
  startsAt: Date | null;
  endsAt: Date | null;
  maxFires: number | null;
}

/** What a schedule does with fire times that passed while no worker fired them (docs/schedules.md "Catch-up"). */
export type CatchUp = 'skip' | 'once' | 'all';

/** What one planning pass decided for a due schedule. */
export interface DuePlan {
  /** Fire times to fire now, oldest first. */
  fire: Date[];
  /** Fire times passed over (missed beyond the grace and not caught up, or beyond max_fires): how many, first and last. */
  skipped: { count: number; first: Date; last: Date; capped: boolean } | null;
  /** The next fire time after now, or null when the schedule has no more (it completes). */
  next: Date | null;
}

/** Missed fire times counted at most per pass: a schedule down for longer reports `capped` (at least this many). */
const MAX_ENUMERATED = 1000;

/** Null when the name is an IANA time zone this platform's tz data knows; else the problem. */
export function timezoneProblem(timezone: string): string | null {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: timezone });
    return null;
  } catch {
    return `timezone: ${JSON.stringify(timezone)} is not an IANA time zone (e.g. Europe/Berlin, America/New_York, UTC)`;
  }
}

/** Null when the expression parses (5 fields, or 6 with seconds first); else the problem. */
export function cronProblem(expression: string): string | null {
  const fields = expression.trim().split(/\s+/).length;
  if (fields !== 5 && fields !== 6)
    return `cron_expression: ${JSON.stringify(expression)} must have 5 fields (minute hour day month weekday) or 6 (seconds first)`;
  try {
    new Cron(expression, { paused: true });
    return null;
  } catch (err) {
    return `cron_expression: ${(err as Error).message}`;
  }
}

/** One parsed expression per timing (a pass over thousands of missed fire times parses it once). */
const parsed = new WeakMap<ScheduleTiming, Cron>();

function cronOf(t: ScheduleTiming): Cron {
  let c = parsed.get(t);
  if (!c) {
    c = new Cron(t.cronExpression ?? '', { timezone: t.timezone, paused: true });
    parsed.set(t, c);
  }
  return c;
}

/** The first fire time strictly after `after`, within the schedule's bounds (not counting max_fires). */
export function nextFireAfter(t: ScheduleTiming, after: Date): Date | null {
  let next: Date | null;
  if (t.kind === 'once') {
    next = t.runAt && t.runAt.getTime() > after.getTime() ? t.runAt : null;
  } else {
    const from = t.startsAt && t.startsAt.getTime() > after.getTime() ? new Date(t.startsAt.getTime() - 1) : after;
    next = cronOf(t).nextRun(from);
  }
  if (next && t.endsAt && next.getTime() > t.endsAt.getTime()) return null;
  return next;
}

/** Up to `n` next fire times after `after`, counting what max_fires leaves (`fired` so far). */
export function nextFires(t: ScheduleTiming, after: Date, n: number, fired: number): Date[] {
  const left = t.maxFires === null ? n : Math.max(0, Math.min(n, t.maxFires - fired));
  const out: Date[] = [];
  let at = after;
  while (out.length < left) {
    const next = nextFireAfter(t, at);
    if (!next) break;
    out.push(next);
    at = next;
  }
  return out;
}

/** Fire times in [from, to), oldest first: at most `max`, and whether there were more. */
function between(t: ScheduleTiming, from: Date, to: number, max: number): { list: Date[]; more: boolean } {
  const list: Date[] = [];
  for (let at: Date | null = from; at && at.getTime() < to; at = nextFireAfter(t, at)) {
    if (list.length === max) return { list, more: true };
    list.push(at);
  }
  return { list, more: false };
}

/** The newest `n` fire times before `to` and at or after `from`, oldest first. */
function newestBefore(t: ScheduleTiming, from: Date, to: number, n: number): Date[] {
  if (t.kind === 'once') return t.runAt && t.runAt.getTime() >= from.getTime() && t.runAt.getTime() < to ? [t.runAt] : [];
  return cronOf(t)
    .previousRuns(n, new Date(to))
    .filter((d) => d.getTime() >= from.getTime() && d.getTime() < to)
    .reverse();
}

/**
 * A due schedule's pass: every fire time from `nextFireAt` through `now`. Those within `graceMs` of now are on time and
 * fire; older ones were missed (no worker ran at the time) and follow `catchUp`: `skip` fires none of them, `once` the
 * newest, `all` the newest `catchUpMax`. max_fires bounds the total (`fired` so far); the newest fire times are kept.
 * Missed fire times are counted up to MAX_ENUMERATED (`capped` beyond).
 */
export function planDue(
  t: ScheduleTiming,
  state: { nextFireAt: Date; fired: number },
  now: Date,
  policy: { catchUp: CatchUp; catchUpMax: number; graceMs: number },
): DuePlan {
  const onTimeFrom = now.getTime() - policy.graceMs;
  const missed = between(t, state.nextFireAt, onTimeFrom, MAX_ENUMERATED);
  const firstOnTime = missed.list.length === 0 ? state.nextFireAt : nextFireAfter(t, new Date(onTimeFrom - 1));
  const onTime = firstOnTime ? between(t, firstOnTime, now.getTime() + 1, MAX_ENUMERATED).list : [];
  const keep = policy.catchUp === 'skip' ? 0 : policy.catchUp === 'once' ? 1 : Math.max(1, policy.catchUpMax);
  const caughtUp = keep === 0 || missed.list.length === 0 ? [] : missed.more ? newestBefore(t, state.nextFireAt, onTimeFrom, keep) : missed.list.slice(-keep);
  let fire = [...caughtUp, ...onTime];
  if (t.maxFires !== null) fire = fire.slice(Math.max(0, fire.length - Math.max(0, t.maxFires - state.fired)));
  const fired = new Set(fire.map((d) => d.getTime()));
  let skipped: DuePlan['skipped'] = null;
  if (missed.more) {
    // Beyond the count: the newest passed-over fire time is the one before the first caught-up (or on-time) one.
    const last = newestBefore(t, state.nextFireAt, caughtUp[0]?.getTime() ?? onTimeFrom, 1)[0] ?? state.nextFireAt;
    skipped = { count: MAX_ENUMERATED, first: state.nextFireAt, last, capped: true };
  } else {
    const passed = [...missed.list, ...onTime].filter((d) => !fired.has(d.getTime()));
    if (passed.length > 0) skipped = { count: passed.length, first: passed[0], last: passed[passed.length - 1], capped: false };
  }
  const exhausted = t.maxFires !== null && state.fired + fire.length >= t.maxFires;
  return { fire, skipped, next: exhausted ? null : nextFireAfter(t, now) };
}
