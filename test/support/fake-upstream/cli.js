#!/usr/bin/env node
'use strict';
/**
 * Standalone fake LLM upstream for benchmarks.
 *
 *   node test/support/fake-upstream/cli.js --port 0 --latency-ms 20 --chunks 64 --chunk-interval-ms 20
 *
 * First stdout line: {"port":N,"url":"http://127.0.0.1:N"}. Serves until SIGTERM/SIGINT.
 * Request recording is off unless --record is given; GET /__fake/stats returns {"requests":N,"active":M}.
 */
const { startFakeUpstream } = require('./fake-upstream.js');

const USAGE = `usage: node cli.js [--port N] [--host H] [--latency-ms N] [--chunks N] [--chunk-interval-ms N]
                   [--content TEXT] [--require-key KEY] [--models a,b,c] [--record]`;

function parseArgs(argv) {
  const opts = { record: false };
  const numeric = { '--port': 'port', '--latency-ms': 'latencyMs', '--chunks': 'chunks', '--chunk-interval-ms': 'chunkIntervalMs' };
  const strings = { '--host': 'host', '--content': 'content', '--require-key': 'requireKey' };
  for (let i = 0; i < argv.length; i++) {
    let arg = argv[i];
    let value;
    const eq = arg.indexOf('=');
    if (arg.startsWith('--') && eq !== -1) {
      value = arg.slice(eq + 1);
      arg = arg.slice(0, eq);
    }
    const next = () => {
      if (value !== undefined) return value;
      if (i + 1 >= argv.length) throw new Error(`missing value for ${arg}`);
      return argv[++i];
    };
    if (arg === '--help' || arg === '-h') {
      process.stdout.write(USAGE + '\n');
      process.exit(0);
    } else if (arg === '--record') {
      opts.record = true;
    } else if (arg in numeric) {
      const n = Number(next());
      if (!Number.isFinite(n) || n < 0) throw new Error(`${arg} expects a non-negative number`);
      opts[numeric[arg]] = n;
    } else if (arg in strings) {
      opts[strings[arg]] = next();
    } else if (arg === '--models') {
      opts.models = next()
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean);
    } else {
      throw new Error(`unknown argument: ${arg}`);
    }
  }
  return opts;
}

async function main() {
  let opts;
  try {
    opts = parseArgs(process.argv.slice(2));
  } catch (err) {
    process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n${USAGE}\n`);
    process.exit(2);
  }
  const upstream = await startFakeUpstream(opts);
  process.stdout.write(JSON.stringify({ port: upstream.port, url: upstream.url }) + '\n');
  let stopping = false;
  const stop = () => {
    if (stopping) return;
    stopping = true;
    upstream.close().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}

main().catch((err) => {
  process.stderr.write(`fake-upstream: ${err && err.stack ? err.stack : String(err)}\n`);
  process.exit(1);
});
