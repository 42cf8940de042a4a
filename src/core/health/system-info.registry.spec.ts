import 'reflect-metadata';
import { type DiscoveryService, MetadataScanner, Reflector } from '@nestjs/core';
import { Declarations } from '@core/discovery/declarations';
import { MetricsService } from '@core/metrics/metrics.service';
import { InProcessRunQueue } from '@core/queue/in-process-run-queue.adapter';
import { Liveness, PendingApprovalsGauge, SystemStat } from './system-info.decorator';
import { SystemInfoRegistry } from './system-info.registry';

class Shallow {
  @SystemStat('shallow')
  stats() {
    return { n: 1 };
  }
}

class Deep {
  constructor(private readonly pending: number) {}

  @SystemStat('deep')
  async stats() {
    return Promise.resolve('deep value');
  }

  @Liveness('deep_fact')
  fact() {
    return { ok: true };
  }

  @PendingApprovalsGauge('task')
  countPending() {
    return Promise.resolve(this.pending);
  }
}

class AlsoShallow {
  @SystemStat('also_shallow')
  stats() {
    return 3;
  }

  @PendingApprovalsGauge('agent_chat')
  countPending() {
    return Promise.resolve(2);
  }
}

class SecondShallow {
  @SystemStat('shallow')
  stats() {
    return 'again';
  }
}

describe('SystemInfoRegistry', () => {
  let queue: InProcessRunQueue;
  let metrics: MetricsService;
  beforeEach(() => {
    queue = new InProcessRunQueue();
    metrics = new MetricsService(queue);
  });
  afterEach(() => queue.close());

  /** Providers as Nest hands them out, each with the depth of the module that provides it. */
  const registryOf = (...wrappers: Array<[instance: unknown, depth: number]>): SystemInfoRegistry => {
    const discovery = { getProviders: () => wrappers.map(([instance, depth]) => ({ instance, host: { distance: depth } })) } as unknown as DiscoveryService;
    const registry = new SystemInfoRegistry(new Declarations(discovery, new MetadataScanner(), new Reflector()), metrics);
    registry.onModuleInit();
    return registry;
  };

  it('serves every @SystemStat and @Liveness field in Nest init order: the deepest module first, provider order among equals', async () => {
    const registry = registryOf([new Shallow(), 2], [new Deep(4), 5], [new AlsoShallow(), 2]);
    expect(JSON.stringify(await registry.statsFields())).toBe(JSON.stringify({ deep: 'deep value', shallow: { n: 1 }, also_shallow: 3 }));
    expect(registry.livenessFields()).toEqual({ deep_fact: { ok: true } });
  });

  it('reads the fields at each call', async () => {
    let n = 0;
    class Counting {
      @SystemStat('count')
      count() {
        return ++n;
      }
    }
    const registry = registryOf([new Counting(), 1]);
    expect(await registry.statsFields()).toEqual({ count: 1 });
    expect(await registry.statsFields()).toEqual({ count: 2 });
  });

  it('wires each @PendingApprovalsGauge into the scrape', async () => {
    registryOf([new Deep(4), 5], [new AlsoShallow(), 2]);
    const body = (await metrics.render()).body;
    expect(body).toContain('hecate_approvals_pending{kind="task"} 4');
    expect(body).toContain('hecate_approvals_pending{kind="agent_chat"} 2');
  });

  it('a key declared twice is a boot error naming both methods', () => {
    expect(() => registryOf([new Shallow(), 2], [new SecondShallow(), 3])).toThrow(
      'system stat "shallow" is declared twice: Shallow.stats, SecondShallow.stats',
    );
    expect(() => registryOf([new Deep(1), 2], [new Deep(2), 3])).toThrow('liveness field "deep_fact" is declared twice: Deep.fact, Deep.fact');
  });
});
