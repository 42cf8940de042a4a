// A subscriber of the public events feed for the scale bench: keeps every cursor it receives and follows the feed
// across api restarts with `Last-Event-ID`.
import { request } from 'undici';
import { sleep } from '../lib/load.mjs';
import { AUTH, dispatcher, sseFrames } from './http.mjs';

/**
 * One subscriber of `GET /hecate/v1/events/stream` from the start of the feed; keeps every cursor it receives, in order.
 * When its stream ends it reconnects with `Last-Event-ID` to another api: after the `retry:` of a reconnect frame, or
 * at once when the stream ended without one (counted).
 */
export async function feedSubscriber(ctx, index) {
  const s = { index, cursors: [], last: 0, connects: 0, hinted: 0, errorFrames: 0, unhinted: 0, refused: 0, failedConnects: 0, reconnectGapsMs: [], apis: [] };
  ctx.subscribers.push(s);
  let avoid;
  let droppedAt;
  while (!ctx.feedAbort.signal.aborted) {
    const api = ctx.router.pick(avoid);
    if (!api) {
      await sleep(100);
      continue;
    }
    let res;
    try {
      res = await request(`${api.url}/hecate/v1/events/stream${s.last === 0 ? '?after_sequence=0' : ''}`, {
        headers: { ...AUTH, accept: 'text/event-stream', ...(s.last > 0 ? { 'last-event-id': String(s.last) } : {}) },
        dispatcher,
        signal: ctx.feedAbort.signal,
      });
    } catch (err) {
      if (ctx.feedAbort.signal.aborted) break;
      if (err?.code === 'ECONNREFUSED') s.refused += 1;
      else s.failedConnects += 1;
      avoid = api;
      await sleep(100);
      continue;
    }
    if (res.statusCode !== 200) {
      s.failedConnects += 1;
      ctx.ledger.sample('feed_subscriber', 'connect_status', { api, status: res.statusCode, body: (await res.body.text()).slice(0, 300) });
      avoid = api;
      await sleep(500);
      continue;
    }
    s.connects += 1;
    s.apis.push(api.label);
    api.feeds = (api.feeds ?? 0) + 1;
    let how = 'ended without a reconnect frame';
    let retry = 1000;
    try {
      for await (const f of sseFrames(res.body)) {
        if (f.event === 'event') {
          const cursor = Number(f.id);
          if (droppedAt !== undefined) {
            s.reconnectGapsMs.push(Date.now() - droppedAt);
            droppedAt = undefined;
          }
          s.cursors.push(cursor);
          if (cursor > s.last) s.last = cursor;
        } else if (f.event === 'reconnect' || f.event === 'error') {
          how = f.event;
          retry = f.retry ?? retry;
        }
      }
    } catch (err) {
      if (ctx.feedAbort.signal.aborted) break;
      how = `socket error: ${err?.code ?? ''} ${err?.message ?? err}`.trim();
    }
    api.feeds -= 1;
    if (ctx.feedAbort.signal.aborted) break;
    droppedAt = Date.now();
    avoid = api;
    if (how === 'reconnect') s.hinted += 1;
    else if (how === 'error') s.errorFrames += 1;
    else {
      s.unhinted += 1;
      ctx.ledger.incident('feed_subscriber', 'stream_dropped_without_hint', { api, subscriber: index, error: how }, { defect: true });
    }
    await sleep(how === 'reconnect' || how === 'error' ? retry : 0);
  }
}
