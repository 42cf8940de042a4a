import { scaledStackEnv } from '../../support/harness';
import { createServer, Server } from 'node:http';
import { AddressInfo } from 'node:net';
import { ScratchDatabase, waitFor } from '../../support/infra';
import { ServerProcess, startServer } from '../../support/server-process';
import { OPERATOR_TOKEN } from './platform-checks';

interface OtlpSpan {
  traceId: string;
  name: string;
  kind: number;
  attributes: { key: string; value: Record<string, unknown> }[];
}

/** A minimal OTLP/HTTP (JSON) collector that keeps every span it receives. */
function fakeCollector(): Promise<{ server: Server; url: string; spans: { scope: string; span: OtlpSpan }[] }> {
  const spans: { scope: string; span: OtlpSpan }[] = [];
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (d: Buffer) => (body += d.toString()));
    req.on('end', () => {
      if (req.url === '/v1/traces') {
        const payload = JSON.parse(body) as { resourceSpans: { scopeSpans: { scope: { name: string }; spans: OtlpSpan[] }[] }[] };
        for (const rs of payload.resourceSpans) for (const ss of rs.scopeSpans) for (const span of ss.spans) spans.push({ scope: ss.scope.name, span });
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () => resolve({ server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, spans })),
  );
}

describe('OpenTelemetry export', () => {
  let db: ScratchDatabase;
  let api: ServerProcess;
  let collector: Awaited<ReturnType<typeof fakeCollector>>;

  beforeAll(async () => {
    collector = await fakeCollector();
    let env: Record<string, string>;
    ({ env, db } = await scaledStackEnv({ token: OPERATOR_TOKEN }));
    api = await startServer('api', { ...env, OTEL_EXPORTER_OTLP_ENDPOINT: collector.url, OTEL_BSP_SCHEDULE_DELAY: '200' });
  });
  afterAll(async () => {
    await api?.stop();
    collector?.server.close();
    await db?.drop();
  });

  it('exports HTTP, Postgres and Redis spans, and X-Trace-Id names the request trace', async () => {
    const res = await fetch(`${api.url}/readyz`);
    expect(res.status).toBe(200);
    const traceId = res.headers.get('x-trace-id');
    const inTrace = await waitFor(
      () => {
        const mine = collector.spans.filter((s) => s.span.traceId === traceId);
        const scopes = new Set(mine.map((s) => s.scope));
        return ['@opentelemetry/instrumentation-http', '@opentelemetry/instrumentation-pg', '@opentelemetry/instrumentation-ioredis'].every((x) =>
          scopes.has(x),
        )
          ? mine
          : undefined;
      },
      { timeoutMs: 20_000, what: 'http, pg and ioredis spans of the request trace' },
    );
    const server = inTrace.find((s) => s.scope === '@opentelemetry/instrumentation-http' && s.span.kind === 2);
    expect(server?.span.name).toMatch(/GET/);
    // The exported spans never carry the operator token.
    expect(JSON.stringify(collector.spans)).not.toContain(OPERATOR_TOKEN);
  });
});
