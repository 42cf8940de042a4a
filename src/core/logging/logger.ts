import pino, { Logger } from 'pino';
import { LoggerService } from '@nestjs/common';
import { prettyDestination } from './pretty-lines';

/** Paths whose values never reach a log line (docs/design.md §4.8). */
export const REDACT_PATHS = [
  'authorization',
  'headers.authorization',
  'req.headers.authorization',
  '*.authorization',
  'x-api-key',
  'headers["x-api-key"]',
  'req.headers["x-api-key"]',
  '*["x-api-key"]',
  'api_key',
  '*.api_key',
  'apiKey',
  '*.apiKey',
  'secret',
  '*.secret',
  'password',
  '*.password',
  'token',
  '*.token',
];

const DSN_PASSWORD = /(\b[a-z][a-z0-9+.-]*:\/\/[^:/?#\s]*:)([^@/\s]+)(@)/gi;
const BEARER = /(bearer\s+)[A-Za-z0-9._~+/=-]+/gi;
const HECATE_KEY = /\bhk_[A-Za-z0-9_-]{8,}/g;
const PROVIDER_KEY = /\b(sk-(?:ant-)?[A-Za-z0-9_-]{6,})/g;

/** Removes credentials that slipped into free text (DSNs, bearer tokens, hk_/sk- keys). */
export function scrubSecrets(text: string): string {
  return text.replace(DSN_PASSWORD, '$1***$3').replace(BEARER, '$1***').replace(HECATE_KEY, 'hk_***').replace(PROVIDER_KEY, 'sk-***');
}

let root: Logger | undefined;

/**
 * `destination`: stdout by default; a stdio protocol process (the ACP agent) logs to stderr (fd 2) instead. Every line
 * carries the process's role (`all` for `hecate`, `api` for `hecate-api`, …) once.
 */
export function createRootLogger(level: string, name: string, destination?: pino.DestinationStream, format: 'pretty' | 'json' = 'json'): Logger {
  if (!destination && format === 'pretty') destination = prettyDestination(process.stdout);
  const options: pino.LoggerOptions = {
    name,
    level,
    base: { pid: process.pid, role: name.replace(/^hecate-?/, '') || 'all' },
    redact: { paths: REDACT_PATHS, censor: '***' },
    timestamp: pino.stdTimeFunctions.isoTime,
    formatters: { level: (label) => ({ level: label }) },
    hooks: {
      logMethod(args, method) {
        const scrubbed = args.map((a) => (typeof a === 'string' ? scrubSecrets(a) : a)) as typeof args;
        method.apply(this, scrubbed);
      },
    },
  };
  root = destination ? pino(options, destination) : pino(options);
  return root;
}

export function rootLogger(): Logger {
  root ??= createRootLogger('info', 'hecate');
  return root;
}

/**
 * Nest's own start-up narration — a line per module, controller and route (about 180 of them) — is `debug`: the
 * `info` lines of a start are the server's own.
 */
const FRAMEWORK_NARRATION = new Set(['InstanceLoader', 'RoutesResolver', 'RouterExplorer', 'NestFactory', 'NestApplication']);

/** Nest's LoggerService on top of pino, so framework logs are JSON with the request id too. */
export class PinoNestLogger implements LoggerService {
  constructor(private readonly logger: Logger) {}
  log(message: unknown, context?: string): void {
    this.write(context && FRAMEWORK_NARRATION.has(context) ? 'debug' : 'info', message, context);
  }
  error(message: unknown, traceOrContext?: string, context?: string): void {
    this.write('error', message, context ?? traceOrContext, context ? traceOrContext : undefined);
  }
  warn(message: unknown, context?: string): void {
    this.write('warn', message, context);
  }
  debug(message: unknown, context?: string): void {
    this.write('debug', message, context);
  }
  verbose(message: unknown, context?: string): void {
    this.write('trace', message, context);
  }
  fatal(message: unknown, context?: string): void {
    this.write('fatal', message, context);
  }
  private write(level: pino.Level, message: unknown, context?: string, stack?: string): void {
    const obj: Record<string, unknown> = { context };
    if (stack) obj.stack = scrubSecrets(stack);
    if (message instanceof Error) {
      obj.err = { message: scrubSecrets(message.message), stack: scrubSecrets(message.stack ?? '') };
      this.logger[level](obj, scrubSecrets(message.message));
    } else if (typeof message === 'object' && message !== null) {
      this.logger[level]({ ...obj, ...(message as object) });
    } else {
      this.logger[level](obj, scrubSecrets(String(message)));
    }
  }
}
