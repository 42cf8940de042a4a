import { rootLogger } from '@core/logging/logger';

/**
 * A background pass run every `intervalMs` (the timer does not hold the process open), never two at once: a tick while
 * one runs is skipped. A failed pass is logged and the next interval retries. `stop()` ends the timer and waits for the
 * pass in flight; `stopped` tells a long pass to end early.
 */
export class PeriodicPass {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private ended = false;

  constructor(
    private readonly what: string,
    private readonly pass: () => Promise<void>,
  ) {}

  get stopped(): boolean {
    return this.ended;
  }

  start(intervalMs: number): void {
    this.timer = setInterval(() => void this.run(), intervalMs);
    this.timer.unref();
  }

  /** One pass now (resolves when it ends), unless one is running or the pass was stopped. */
  async run(): Promise<void> {
    if (this.running || this.ended) return;
    this.running = this.pass()
      .catch((err: unknown) => rootLogger().warn({ err: String(err) }, `${this.what} failed; retrying next interval`))
      .finally(() => (this.running = undefined));
    await this.running;
  }

  async stop(): Promise<void> {
    this.ended = true;
    clearInterval(this.timer);
    // run() already logged a failure; only the end of the pass in flight is waited for.
    await this.running;
  }
}
