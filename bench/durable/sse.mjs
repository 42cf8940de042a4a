// A small SSE reader for bench/durable: node:http, frames split per chunk (no re-scanning of a growing buffer), so
// reading a feed of 100,000 events costs the bench little next to the server it reads from.
import { get } from 'node:http';

/** `id`, `event` and `data` (data lines joined by \n) of one frame's text; undefined for a frame of comments only. */
function parseFrame(text) {
  const frame = { id: undefined, event: 'message', data: undefined };
  for (const line of text.split('\n')) {
    const colon = line.indexOf(':');
    if (colon <= 0) continue; // a comment (":…") or an empty line
    const field = line.slice(0, colon);
    const value = line.slice(colon + (line[colon + 1] === ' ' ? 2 : 1));
    if (field === 'data') frame.data = frame.data === undefined ? value : `${frame.data}\n${value}`;
    else if (field === 'id') frame.id = value;
    else if (field === 'event') frame.event = value;
  }
  return frame.data === undefined && frame.id === undefined ? undefined : frame;
}

/**
 * Opens `url` as an event stream and calls `onFrame(frame)` for every frame. Resolves once the response headers are in,
 * with `close()` and `ended` (a promise settled when the server ends the stream or the connection fails).
 */
export function openSse(url, headers, onFrame) {
  return new Promise((resolve, reject) => {
    const req = get(url, { headers: { accept: 'text/event-stream', ...headers } }, (res) => {
      if (res.statusCode !== 200) {
        res.resume();
        reject(new Error(`GET ${url} → ${res.statusCode}`));
        return;
      }
      res.setEncoding('utf8');
      let rest = '';
      const ended = new Promise((done) => {
        res.on('data', (chunk) => {
          const parts = (rest + chunk).split('\n\n');
          rest = parts.pop();
          for (const part of parts) {
            const frame = parseFrame(part);
            if (frame) onFrame(frame);
          }
        });
        res.once('end', () => done('end'));
        res.once('error', (err) => done(String(err)));
        res.once('close', () => done('close'));
      });
      resolve({ close: () => req.destroy(), ended });
    });
    req.once('error', reject);
  });
}
