import { runRow, taskRow } from '../../support/factories';
import { openTestDatabase } from '../../support/database';
import 'reflect-metadata';

import { DataSource } from 'typeorm';
import type { EventBus } from '@core/bus/event-bus.port';
import { InProcessEventBus } from '@core/bus/in-process-event-bus.adapter';
import { MetricsService } from '@core/metrics/metrics.service';
import { InProcessRunQueue } from '@core/queue/in-process-run-queue.adapter';

import { EventPublisher } from '@modules/events/event-publisher.service';
import { EventStoreRepository } from '@modules/events/event-store.repository';
import { EventStore } from '@modules/events/event-store.service';
import { FeedStamper } from '@modules/events/feed-stamper.service';
import { TaskRunEntity } from '@modules/tasks/task-run.entity';
import { TaskRunRepository } from '@modules/tasks/task-run.repository';
import { TaskEntity } from '@modules/tasks/task.entity';
import { TaskRepository } from '@modules/tasks/task.repository';

export type Backend = 'postgres' | 'pglite';

/** The event store and run repositories on a real database (a Postgres scratch database or a fresh PGlite). */
export interface RuntimeHarness {
  backend: Backend;
  dataSource: DataSource;
  url: string | undefined;
  bus: EventBus;
  events: EventStore;
  stamper: FeedStamper;
  tasks: TaskRepository;
  runs: TaskRunRepository;
  /** A task with one queued run (rows only). */
  queuedRun(tenantId?: string): Promise<TaskRunEntity>;
  close(): Promise<void>;
}

export async function openRuntime(backend: Backend, opts: { bus?: EventBus; poolSize?: number } = {}): Promise<RuntimeHarness> {
  const tdb = await openTestDatabase(backend, {
    poolSize: opts.poolSize ?? 40,
    entities: [TaskEntity, TaskRunEntity],
    prefix: 'hecate-tasks-',
  });
  const dataSource = tdb.dataSource;
  const bus = opts.bus ?? new InProcessEventBus();
  const repo = new EventStoreRepository(dataSource);
  const publisher = new EventPublisher(bus, new MetricsService(new InProcessRunQueue()));
  const stamper = new FeedStamper(repo, publisher);
  stamper.onApplicationBootstrap();
  const events = new EventStore(repo, publisher, stamper);
  const tasks = new TaskRepository(dataSource);
  const runs = new TaskRunRepository(dataSource);
  return {
    backend,
    dataSource,
    url: tdb.url,
    bus,
    events,
    stamper,
    tasks,
    runs,
    async queuedRun(tenantId = 'tenant-a') {
      const task = taskRow({ tenantId, status: 'queued' });
      await tasks.insert(task);
      const run = runRow(task);
      await runs.insert(dataSource.manager, run);
      return run;
    },
    async close() {
      stamper.onApplicationShutdown();
      publisher.onApplicationShutdown();
      await bus.close();
      await tdb.close();
    },
  };
}
