/**
 * OpenTelemetry bootstrap: imported on line 1 of every entrypoint (docs/style.md rule 12) so the http, pg and
 * ioredis modules are patched before anything loads them. Spans are exported over OTLP/HTTP when
 * OTEL_EXPORTER_OTLP_ENDPOINT is set; otherwise the SDK is not started and costs nothing.
 */
import { NodeSDK } from '@opentelemetry/sdk-node';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { HttpInstrumentation } from '@opentelemetry/instrumentation-http';
import { PgInstrumentation } from '@opentelemetry/instrumentation-pg';
import { IORedisInstrumentation } from '@opentelemetry/instrumentation-ioredis';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { ATTR_SERVICE_NAME, ATTR_SERVICE_VERSION } from '@opentelemetry/semantic-conventions';
import { readProcessEnv } from '@core/config/env';
import { version } from '../../../package.json';

let sdk: NodeSDK | undefined;

export function startTelemetry(role: string): void {
  const env = readProcessEnv();
  const endpoint = env.OTEL_EXPORTER_OTLP_ENDPOINT;
  if (!endpoint || sdk) return;
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

export async function stopTelemetry(): Promise<void> {
  // The process is exiting: spans that cannot be flushed now are lost, and the SDK reports its export errors itself.
  if (sdk) await sdk.shutdown().catch(() => undefined);
}

startTelemetry(process.argv[1]?.includes('worker') ? 'worker' : 'api');
