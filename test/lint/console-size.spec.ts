import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { gzipSync } from 'node:zlib';

/**
 * The operator console's first load stays small (README, "Operator console"): the JavaScript the page loads before
 * anything else — the entry script and every module it preloads — is at most 250 KB gzipped. Pages are loaded when
 * first visited and do not count. Reads the build (`npm run build`, which `npm test` runs when dist/ is stale).
 */
const LIMIT_BYTES = 250 * 1024;
const web = resolve(__dirname, '../..', process.env.HECATE_DIST ?? 'dist', 'web');

describe('operator console bundle', () => {
  it('loads at most 250 KB of gzipped JavaScript first', () => {
    const index = join(web, 'index.html');
    if (!existsSync(index)) throw new Error(`${index} is missing: run npm run build (its build:web step writes the console)`);
    const html = readFileSync(index, 'utf8');
    const scripts = [...html.matchAll(/<script\b[^>]*\bsrc="([^"]+)"/g), ...html.matchAll(/<link\b[^>]*rel="modulepreload"[^>]*href="([^"]+)"/g)].map(
      (m) => m[1],
    );
    expect(scripts.length).toBeGreaterThan(0);
    const sizes = Object.fromEntries(scripts.map((src) => [src, gzipSync(readFileSync(join(web, src))).length]));
    const total = Object.values(sizes).reduce((a, b) => a + b, 0);
    expect({ total, within: total <= LIMIT_BYTES, sizes }).toEqual({ total, within: true, sizes });
    // The pages are chunks of their own, loaded later: the build has more scripts than the first load.
    const built = readdirSync(join(web, 'assets')).filter((f) => f.endsWith('.js'));
    expect(built.length).toBeGreaterThan(scripts.length);
  });
});
