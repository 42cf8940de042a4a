// No telemetry bootstrap here (docs/style.md rule 12 is for the server's roles): this is a client process an MCP host spawns
// per session, and importing the OpenTelemetry SDK would add over a second to its start. The server it relays to
// traces every request.
import { ConfigValidationError } from '@core/config/config.loader';
import { readProcessEnv } from '@core/config/env';
import { version } from '../package.json';
import { serveStdio, StdioRelayConfig, stdioRelayConfig } from './mcp-stdio';

function fatal(err: unknown): never {
  process.stderr.write(`hecate mcp: ${err instanceof ConfigValidationError ? err.message : err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
}

/** `npm run mcp`: Hecate as an MCP server over stdio, relaying to HECATE_BASE_URL with HECATE_API_KEY. */
let config: StdioRelayConfig;
try {
  config = stdioRelayConfig(readProcessEnv());
} catch (err) {
  fatal(err);
}
serveStdio(config, version).catch(fatal);
