import { Injectable } from '@nestjs/common';

type Provider = () => unknown | Promise<unknown>;

/**
 * Lets modules add fields to `/healthz` (cheap, synchronous facts such as `sandbox`) and to
 * `/hecate/v1/system/stats` (run counts, …) without `core/` importing `modules/`.
 */
@Injectable()
export class SystemInfoRegistry {
  private readonly liveness = new Map<string, () => unknown>();
  private readonly stats = new Map<string, Provider>();

  addLiveness(key: string, provider: () => unknown): void {
    this.liveness.set(key, provider);
  }

  addStats(key: string, provider: Provider): void {
    this.stats.set(key, provider);
  }

  livenessFields(): Record<string, unknown> {
    return Object.fromEntries([...this.liveness].map(([k, p]) => [k, p()]));
  }

  async statsFields(): Promise<Record<string, unknown>> {
    const entries = await Promise.all([...this.stats].map(async ([k, p]) => [k, await p()] as const));
    return Object.fromEntries(entries);
  }
}
