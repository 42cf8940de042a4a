/**
 * OpenTelemetry bootstrap: imported on line 1 of every entrypoint (docs/style.md rule 12) so the http, pg and
 * ioredis modules are patched before anything loads them. Spans are exported over OTLP/HTTP when
 * OTEL_EXPORTER_OTLP_ENDPOINT is set; otherwise the SDK is neither loaded nor started and costs nothing. The SDK and
 * its instrumentations are required only then, synchronously (patching must precede the entrypoint's own imports):
 * loading them is about a second of CPU per process start, which every pod without an endpoint would pay.
 */
import type { NodeSDK } from '@opentelemetry/sdk-node';
import { readProcessEnv } from '@core/config/env';
import { version } from '../../../package.json';

let sdk: NodeSDK | undefined;

/* eslint-disable @typescript-eslint/no-require-imports -- loaded on demand, before the entrypoint's imports (above) */
export function startTelemetry(role: string): void {
  const env = readProcessEnv();
  const endpoint = env.OTEL_EXPORTER_OTLP_ENDPOINT;
  if (!endpoint || sdk) return;
  const { NodeSDK } = require('@opentelemetry/sdk-node') as typeof import('@opentelemetry/sdk-node');
  const { OTLPTraceExporter } = require('@opentelemetry/exporter-trace-otlp-http') as typeof import('@opentelemetry/exporter-trace-otlp-http');
  const { HttpInstrumentation } = require('@opentelemetry/instrumentation-http') as typeof import('@opentelemetry/instrumentation-http');
  const { PgInstrumentation } = require('@opentelemetry/instrumentation-pg') as typeof import('@opentelemetry/instrumentation-pg');
  const { IORedisInstrumentation } = require('@opentelemetry/instrumentation-ioredis') as typeof import('@opentelemetry/instrumentation-ioredis');
  const { resourceFromAttributes } = require('@opentelemetry/resources') as typeof import('@opentelemetry/resources');
  const { ATTR_SERVICE_NAME, ATTR_SERVICE_VERSION } = require('@opentelemetry/semantic-conventions') as typeof import('@opentelemetry/semantic-conventions');
  sdk = new NodeSDK({
    resource: resourceFromAttributes({
      [ATTR_SERVICE_NAME]: env.OTEL_SERVICE_NAME || `hecate-${role}`,
      [ATTR_SERVICE_VERSION]: version,
    }),
    traceExporter: new OTLPTraceExporter({ url: `${endpoint.replace(/\/$/, '')}/v1/traces` }),
    instrumentations: [
      new HttpInstrumentation({ ignoreIncomingRequestHook: (req) => req.url === '/healthz' || req.url === '/metrics' }),
      new PgInstrumentation({ enhancedDatabaseReporting: false }),
      new IORedisInstrumentation(),
    ],
  });
  sdk.start();
}
/* eslint-enable @typescript-eslint/no-require-imports */

export async function stopTelemetry(): Promise<void> {
  // The process is exiting: spans that cannot be flushed now are lost, and the SDK reports its export errors itself.
  if (sdk) await sdk.shutdown().catch(() => undefined);
}

startTelemetry(process.argv[1]?.includes('worker') ? 'worker' : 'api');
