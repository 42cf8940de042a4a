import { enableCompileCache } from 'node:module';

/**
 * V8's code cache for every module this process loads, kept on disk between starts (Node's default directory,
 * `<tmpdir>/node-compile-cache`, keyed by Node version and file contents; a NODE_COMPILE_CACHE directory when one is
 * set). The first import of `main.ts`, the embedded server a person starts by hand, so it covers every module after it:
 * bench/server-start measures about half a second less per start. The scaled api and worker leave it off: they start
 * once per rollout, many per cluster, and the cache keeps ~20 MB of RSS (the same bench). NODE_DISABLE_COMPILE_CACHE=1
 * turns it off; an unwritable directory only leaves it off.
 */
enableCompileCache();
