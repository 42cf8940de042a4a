/**
 * The worker's lifeline to what it runs. Every supervised process gets one end of a socket pair as fd 3; the worker
 * holds the other and never writes to it, so a read on fd 3 blocks for as long as the worker lives and sees end of file
 * the moment it is gone — SIGKILLed included, at any instant.
 *
 * bubblewrap's `--die-with-parent` alone leaves a window: its outer process and the sandbox's first process arm the
 * parent-death signal only after the namespaces are set up, so a worker killed during those few milliseconds (wider on
 * a loaded host) leaves a sandbox running with nobody to stop it. The guard below closes that window: it runs as the
 * first thing inside the sandbox (as the command's own uid), starts a reader on fd 3 that kills everything in the
 * sandbox's PID namespace at end of file, closes fd 3 and execs the command — which never holds the lifeline.
 */
export const LIFELINE_FD = 3;

/**
 * `argv` behind the guard. `namespace`: the command runs in a PID namespace of its own (bubblewrap), so `kill -1`
 * reaches exactly the sandbox's processes. `group`: no namespace (GATEWAY_TASK_SANDBOX=none), so the guard kills its
 * process group — the one the supervisor made — and nothing else.
 */
export function behindLifeline(argv: string[], scope: 'namespace' | 'group'): string[] {
  const victims = scope === 'namespace' ? '-1' : '0';
  return ['/bin/sh', '-c', `{ read -r _ <&${LIFELINE_FD}; kill -KILL ${victims}; } & exec ${LIFELINE_FD}<&-; exec "$@"`, 'hecate-lifeline', ...argv];
}
