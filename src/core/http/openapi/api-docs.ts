import { dirname, join } from 'node:path';
import type { INestApplication } from '@nestjs/common';
import type { FastifyInstance } from 'fastify';
import { PUBLIC_ROUTE } from '../auth/public.decorator';
import { type ConsoleFile, CONSOLE_CSP, load, send } from '../web-console';
import { OPENAPI_PATH } from './openapi-document';

/** Where the API reference is served: Swagger UI from the installed `swagger-ui-dist`, reading /openapi.json. */
export const API_DOCS_PATH = '/docs';

/** The files of `swagger-ui-dist` the page loads; nothing else of the package is reachable. */
const UI_FILES = ['swagger-ui.css', 'swagger-ui-bundle.js', 'swagger-ui-standalone-preset.js', 'favicon-32x32.png'];

const PAGE = `<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8" />
    <title>Hecate API reference</title>
    <link rel="stylesheet" href="${API_DOCS_PATH}/swagger-ui.css" />
    <link rel="icon" type="image/png" href="${API_DOCS_PATH}/favicon-32x32.png" />
  </head>
  <body>
    <div id="swagger-ui"></div>
    <script src="${API_DOCS_PATH}/swagger-ui-bundle.js"></script>
    <script src="${API_DOCS_PATH}/swagger-ui-standalone-preset.js"></script>
    <script src="${API_DOCS_PATH}/initializer.js"></script>
  </body>
</html>
`;

const INITIALIZER = `window.ui = SwaggerUIBundle({
  url: ${JSON.stringify(OPENAPI_PATH)},
  dom_id: '#swagger-ui',
  deepLinking: true,
  presets: [SwaggerUIBundle.presets.apis, SwaggerUIStandalonePreset],
  layout: 'StandaloneLayout',
  // 27 tags, 116 operations: listed collapsed (expanding them all at once stalls the page), opened by a click.
  docExpansion: 'none',
});
`;

/**
 * The console's policy, except that Swagger UI writes `style` attributes and `<style>` elements of its own
 * (`style-src 'unsafe-inline'`); still no inline or foreign script, no connection but this server, no framing.
 */
const DOCS_CSP = CONSOLE_CSP.replace("style-src 'self'", "style-src 'self' 'unsafe-inline'");

/**
 * Serves the API reference at /docs, locally (no CDN): the page, its initializer and the four files of
 * `swagger-ui-dist` it loads, read on the first request (a start reads none of its 2 MB). Public like /openapi.json:
 * calling an operation from the page needs a credential entered under "Authorize".
 */
export function serveApiDocs(app: INestApplication): void {
  const fastify = app.getHttpAdapter().getInstance() as FastifyInstance;
  const config = { [PUBLIC_ROUTE]: true };
  const files = new Map<string, () => ConsoleFile>();
  const lazily = (make: () => ConsoleFile) => {
    let file: ConsoleFile | undefined;
    return () => (file ??= make());
  };
  const dist = () => dirname(require.resolve('swagger-ui-dist/package.json'));
  files.set(
    '',
    lazily(() => load('index.html', false, Buffer.from(PAGE))),
  );
  files.set(
    'initializer.js',
    lazily(() => load('initializer.js', false, Buffer.from(INITIALIZER))),
  );
  for (const name of UI_FILES)
    files.set(
      name,
      lazily(() => load(join(dist(), name), false)),
    );
  for (const [name, file] of files) {
    fastify.get(name ? `${API_DOCS_PATH}/${name}` : API_DOCS_PATH, { config }, (request, reply) => send(request, reply, file(), DOCS_CSP));
  }
}
