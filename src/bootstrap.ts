import { createServer, Server } from 'node:http';
import { flushCompileCache } from 'node:module';
import { resolve } from 'node:path';
import { INestApplicationContext } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { ConfigValidationError } from '@core/config/config.loader';
import { processConfig } from '@core/config/env';
import { logConfigWarnings } from '@core/config/config-warnings';
import type { CoreResources } from '@core/core.module';
import { openDatabase } from '@core/database/database.module';
import { HealthService } from '@core/health/health.service';
import { createHttpApp, listen } from '@core/http/http-app';
import { serveOpenApi } from '@core/http/openapi';
import { serveApiDocs } from '@core/http/openapi/api-docs';
import { serveConsole } from '@core/http/web-console';
import { startSummary } from './start-summary';
import { openRedis } from '@core/infrastructure.module';
import { createRootLogger, PinoNestLogger, rootLogger } from '@core/logging/logger';
import { MetricsService } from '@core/metrics/metrics.service';
import { stopTelemetry } from '@core/telemetry/instrumentation';
import { AllInOneModule } from './all-in-one.module';
import { ApiModule } from './api.module';
import { openApiDocument } from './openapi';
import { WorkerModule } from './worker.module';

export type Role = 'api' | 'worker' | 'all';

async function openCore(role: Role): Promise<CoreResources> {
  const config = processConfig();
  logConfigWarnings(
    createRootLogger(config.telemetry.logLevel, role === 'all' ? 'hecate' : `hecate-${role}`, undefined, config.telemetry.logFormat),
    config.warnings,
  );
  // Entities are registered by importing the module files above; the DataSource sees them all.
  const dataSource = await openDatabase(config, role);
  const redis = await openRedis(config);
  return { config, dataSource, redis };
}

/** The worker's side port: health and metrics only, no public routes. */
function startSidePort(ctx: INestApplicationContext, host: string, port: number): Promise<Server> {
  const health = ctx.get(HealthService);
  const metrics = ctx.get(MetricsService);
  const server = createServer((req, res) => {
    const send = (status: number, body: string, type = 'application/json') => {
      res.writeHead(status, { 'content-type': type });
      res.end(body);
    };
    const path = (req.url ?? '/').split('?')[0];
    if (req.method !== 'GET') return send(405, JSON.stringify({ error: { type: 'invalid_request', message: 'GET only' } }));
    if (path === '/healthz') return send(200, JSON.stringify(health.liveness()));
    if (path === '/readyz') {
      return void health.readiness().then((r) => send(r.status === 'error' ? 503 : 200, JSON.stringify(r)));
    }
    if (path === '/metrics') return void metrics.render().then((m) => send(200, m.body, m.contentType));
    send(404, JSON.stringify({ error: { type: 'not_found', message: `no route ${path}` } }));
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve(server));
  });
}

function onSignals(shutdown: (signal: string) => Promise<void>): void {
  let stopping = false;
  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    process.on(signal, () => {
      if (stopping) return;
      stopping = true;
      void shutdown(signal);
    });
  }
}

/**
 * Once ready, writes V8's code cache of every module loaded so far (core/compile-cache.ts enables it; errors are
 * ignored by Node itself): the next start of the same build on that directory compiles less, and
 * a process killed later, which never reaches the exit that writes it otherwise, still leaves it behind.
 */
function keepCodeCache(): void {
  flushCompileCache();
}

/** Starts one role. Every startup failure is printed plainly and exits 1. */
export async function boot(role: Role): Promise<void> {
  let core: CoreResources;
  try {
    core = await openCore(role);
  } catch (err) {
    if (err instanceof ConfigValidationError) {
      process.stderr.write(`${err.message}\n`);
    } else {
      rootLogger().fatal({ err: err instanceof Error ? err.message : String(err) }, 'startup failed');
      process.stderr.write(`startup failed: ${err instanceof Error ? err.message : String(err)}\n`);
    }
    process.exit(1);
  }
  const { config } = core;
  const log = rootLogger();
  const graceMs = config.server.shutdownGraceMs;
  try {
    if (role === 'worker') {
      const ctx = await NestFactory.createApplicationContext(WorkerModule.forRoot(core), {
        logger: new PinoNestLogger(log),
        abortOnError: false,
      });
      await ctx.init();
      const side = await startSidePort(ctx, config.server.host, config.server.workerHealthPort);
      log.info({ port: config.server.workerHealthPort, mode: config.mode, queues: config.queue.workerQueues }, 'worker ready');
      keepCodeCache();
      onSignals(async (signal) => {
        log.info({ signal, graceMs }, 'draining worker');
        const hard = setTimeout(() => process.exit(1), graceMs + 10_000).unref();
        side.close();
        await ctx.close();
        await stopTelemetry();
        clearTimeout(hard);
        log.info('worker stopped');
        process.exit(0);
      });
      return;
    }
    const app = await createHttpApp(role === 'all' ? AllInOneModule.forRoot(core) : ApiModule.forRoot(core), config);
    serveOpenApi(app, () => openApiDocument(app, config.version));
    serveApiDocs(app);
    // The console's build sits beside the server's (`dist/web` next to `dist/src`); without it `/` is a JSON 404.
    const consoleServed = serveConsole(app, resolve(__dirname, '..', 'web'));
    const url = await listen(app, config);
    log.info(startSummary(app, config, url, consoleServed), 'hecate listening');
    keepCodeCache();
    onSignals(async (signal) => {
      log.info({ signal, graceMs }, 'shutting down');
      const hard = setTimeout(() => process.exit(1), graceMs + 10_000).unref();
      await app.close();
      await stopTelemetry();
      clearTimeout(hard);
      log.info('stopped');
      process.exit(0);
    });
  } catch (err) {
    log.fatal({ err: err instanceof Error ? err.message : String(err) }, 'startup failed');
    process.stderr.write(`startup failed: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(1);
  }
}
