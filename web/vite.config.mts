import { resolve } from 'node:path';
import { defineConfig } from 'vite';

const here = import.meta.dirname;
/** Where `npm run dev:web` sends API calls: a server started with `npm start` (or HECATE_DEV_API). */
const api = process.env.HECATE_DEV_API ?? 'http://127.0.0.1:8765';

/**
 * The operator console: built into dist/web (served by the api, src/core/http/web-console.ts), talking to the server
 * only through @hecate/sdk, imported from its source. No inline script and no data: asset, for the page's
 * Content-Security-Policy.
 */
export default defineConfig({
  root: here,
  // JSX through Vite's own transform (oxc), React's automatic runtime. No React plugin: its only gain is Fast Refresh
  // in development, and its optional Babel peers conflict with the Babel 7 that Jest brings.
  oxc: { jsx: { runtime: 'automatic', importSource: 'react' } },
  resolve: { alias: { '@hecate/sdk': resolve(here, '../libs/sdk/src/index.ts') } },
  build: {
    outDir: resolve(here, '../dist/web'),
    emptyOutDir: true,
    target: 'es2022',
    assetsInlineLimit: 0,
    modulePreload: { polyfill: false },
    reportCompressedSize: false,
  },
  server: {
    // The dev server is another origin: forward API paths to the server as same-origin calls (the browser wall refuses
    // a foreign Origin, docs/security.md), so the proxy drops the header it would relay.
    proxy: Object.fromEntries(
      ['/hecate', '/v1', '/healthz', '/readyz'].map((path) => [
        path,
        { target: api, changeOrigin: true, configure: (proxy) => proxy.on('proxyReq', (req) => req.removeHeader('origin')) },
      ]),
    ),
  },
});
