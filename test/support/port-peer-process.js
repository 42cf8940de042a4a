// A second process for cross-process port tests. It loads the BUILT adapters (npm test builds first;
// HECATE_DIST selects another build folder) and speaks JSON lines: commands on stdin, results on stdout.
//   node port-peer-process.js <redisUrl> <prefix>
// Commands: {op:'subscribe', pattern} → emits {event:'message', channel, message} per delivery
//           {op:'publish', channel, message} | {op:'append', stream, data} → {ok, index}
//           {op:'read', stream, after, blockMs} → {ok, result} | {op:'done', stream}
'use strict';
const path = require('node:path');
const readline = require('node:readline');

const dist = path.resolve(__dirname, '../..', process.env.HECATE_DIST || 'dist');
const { RedisConnections } = require(path.join(dist, 'src/core/redis/redis-connections.js'));
const { RedisEventBus } = require(path.join(dist, 'src/core/bus/redis-event-bus.adapter.js'));
const { RedisLiveStreamBuffer } = require(path.join(dist, 'src/core/live-streams/redis-live-stream-buffer.adapter.js'));

const [redisUrl, prefix] = process.argv.slice(2);
const redis = new RedisConnections(redisUrl);
const bus = new RedisEventBus(redis, `${prefix}:bus:`);
const live = new RedisLiveStreamBuffer(redis, bus, 60_000, `${prefix}:live:`);
const out = (obj) => process.stdout.write(`${JSON.stringify(obj)}\n`);

async function handle(cmd) {
  switch (cmd.op) {
    case 'subscribe':
      await bus.subscribe(cmd.pattern, (channel, message) => out({ event: 'message', channel, message }));
      return out({ id: cmd.id, ok: true });
    case 'publish':
      await bus.publish(cmd.channel, cmd.message);
      return out({ id: cmd.id, ok: true });
    case 'append':
      return out({ id: cmd.id, ok: true, index: await live.append(cmd.stream, cmd.data) });
    case 'done':
      await live.markDone(cmd.stream);
      return out({ id: cmd.id, ok: true });
    case 'read':
      return out({ id: cmd.id, ok: true, result: await live.read(cmd.stream, cmd.after, { blockMs: cmd.blockMs }) });
    default:
      return out({ id: cmd.id, ok: false, error: `unknown op ${cmd.op}` });
  }
}

(async () => {
  await redis.waitReady();
  await live.init();
  out({ event: 'ready' });
  const rl = readline.createInterface({ input: process.stdin });
  rl.on('line', (line) => {
    const cmd = JSON.parse(line);
    handle(cmd).catch((err) => out({ id: cmd.id, ok: false, error: String(err) }));
  });
  rl.on('close', async () => {
    await live.close();
    await bus.close();
    await redis.close();
    process.exit(0);
  });
})();
