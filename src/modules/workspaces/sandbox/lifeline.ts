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
  // The reader holds none of the command's stdio: nothing it says reaches the command's output, and the worker's view
  // of the streams ends with the command. bubblewrap's outer process exits as soon as the command does, before the
  // namespace is gone, so the reader may yet see end of file with nothing left to kill: it says nothing then either.
  return [
    '/bin/sh',
    '-c',
    `{ read -r _ <&${LIFELINE_FD}; kill -KILL ${victims}; } </dev/null >/dev/null 2>&1 & exec ${LIFELINE_FD}<&-; exec "$@"`,
    'hecate-lifeline',
    ...argv,
  ];
}
