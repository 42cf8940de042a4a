import { enableCompileCache } from 'node:module';

/**
 * V8's code cache for every module this process loads, kept on disk between starts (Node's default directory,
 * `<tmpdir>/node-compile-cache`, keyed by Node version and file contents; a NODE_COMPILE_CACHE directory when one is
 * set). The first import of every entrypoint (through core/telemetry/instrumentation), so it covers the rest:
 * bench/server-start measures about half a second of CPU less per start. NODE_DISABLE_COMPILE_CACHE=1 turns it off;
 * an unwritable directory only leaves it off.
 */
enableCompileCache();
