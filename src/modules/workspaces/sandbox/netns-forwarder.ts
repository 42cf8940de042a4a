/**
 * The first process of a sandboxed command that has network (docs/security.md): its network namespace has only loopback,
 * so this script listens there and relays every connection over the worker's egress socket (bind-mounted into the
 * sandbox), then runs the real command — which inherits the proxy variables bubblewrap set (EgressProxy.bwrapArgs) —
 * forwards signals and exits as the command did. It runs as `node -e` with the runtime already mounted read-only: no file of the server is mounted.
 *
 * argv: <egress socket> <proxy port> <gateway port, 0 = none> <command…>. On the gateway port it relays the
 * gateway's own URL (`http://127.0.0.1:<api port>`) for clients that ignore proxy variables; the worker side tells
 * the two apart by the request form (absolute URI through the proxy, origin form on the gateway port).
 */
export const FORWARDER_SOURCE = String.raw`
'use strict';
const net = require('net');
const { spawn } = require('child_process');
const [sock, proxyPort, gatewayPort, ...argv] = process.argv.slice(1);
const relay = (client) => {
  const up = net.connect({ path: sock, allowHalfOpen: true });
  client.pipe(up);
  up.pipe(client);
  const drop = () => { client.destroy(); up.destroy(); };
  client.on('error', drop);
  up.on('error', drop);
};
const listen = (port) => new Promise((resolve, reject) => {
  const server = net.createServer({ allowHalfOpen: true }, relay);
  server.once('error', reject);
  server.listen(Number(port), '127.0.0.1', () => { server.unref(); resolve(); });
});
const ports = [proxyPort].concat(gatewayPort !== '0' ? [gatewayPort] : []);
Promise.all(ports.map(listen)).then(run, (err) => {
  process.stderr.write('hecate sandbox: cannot start the network relay: ' + err.message + '\n');
  process.exit(125);
});
function run() {
  // The proxy variables come from bubblewrap (--setenv, EgressProxy.bwrapArgs): the command inherits them.
  const child = spawn(argv[0], argv.slice(1), { stdio: 'inherit' });
  const signals = ['SIGTERM', 'SIGINT', 'SIGHUP', 'SIGQUIT', 'SIGUSR1', 'SIGUSR2'];
  for (const s of signals) process.on(s, () => { try { child.kill(s); } catch (e) {} });
  child.on('error', (err) => {
    process.stderr.write('hecate sandbox: cannot run ' + argv[0] + ': ' + (err.code || err.message) + '\n');
    process.exit(127);
  });
  child.on('exit', (code, signal) => {
    if (signal) {
      for (const s of signals) process.removeAllListeners(s);
      process.kill(process.pid, signal);
      return;
    }
    process.exit(code === null ? 1 : code);
  });
}
`;
