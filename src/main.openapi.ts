import { writeFileSync } from 'node:fs';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter } from '@nestjs/platform-fastify';
import { DataSource } from 'typeorm';
import { loadConfig } from '@core/config/config.loader';
import { ApiModule } from './api.module';
import { openApiDocument } from './openapi';

/**
 * `node dist/src/main.openapi.js [file]`: writes the OpenAPI document (to stdout without a file) with no database,
 * Redis or port. Nest's preview mode resolves the api role's module graph without instantiating a provider, so the
 * DataSource handed in is never initialised; the document depends on the controllers and DTOs only, not on the
 * environment (hence the default configuration). The SDK's types are generated from this file (libs/sdk).
 */
async function main(): Promise<void> {
  const config = loadConfig({});
  const core = { config, dataSource: new DataSource({ type: 'postgres' }), redis: null };
  const app = await NestFactory.create(ApiModule.forRoot(core), new FastifyAdapter(), { preview: true, logger: false, abortOnError: false });
  const json = `${JSON.stringify(openApiDocument(app, config.version), null, 2)}\n`;
  await app.close();
  const out = process.argv[2];
  if (out) writeFileSync(out, json);
  else process.stdout.write(json);
}

main().catch((err: unknown) => {
  process.stderr.write(`openapi: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
});
