import { InvalidRequestError } from './domain-error';

/** A keyset list's `next_cursor`: the (time, id) of the page's last row, opaque to clients. */
export function encodePageCursor(at: Date, id: string): string {
  return Buffer.from(JSON.stringify([at.toISOString(), id])).toString('base64url');
}

/** The (time, id) a `cursor` query value carries; 400 invalid_request for anything `encodePageCursor` did not make. */
export function decodePageCursor(cursor: string | undefined): { at: Date; id: string } | undefined {
  if (!cursor) return undefined;
  try {
    const [iso, id] = JSON.parse(Buffer.from(cursor, 'base64url').toString()) as [string, string];
    const at = new Date(iso);
    if (typeof id !== 'string' || Number.isNaN(at.getTime())) throw new Error('bad cursor');
    return { at, id };
  } catch {
    throw new InvalidRequestError('cursor is not a next_cursor value of this list');
  }
}

/** One page of a keyset list read with `limit + 1` rows: the first `limit` as views, whether more follow, and the cursor to them. */
export function keysetPage<R, V>(rows: R[], limit: number, view: (row: R) => V, cursorOf: (last: R) => string) {
  const page = rows.slice(0, limit);
  const more = rows.length > limit && page.length > 0;
  return { data: page.map(view), has_more: more, next_cursor: more ? cursorOf(page[page.length - 1]) : null };
}
