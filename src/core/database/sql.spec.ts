import { isoText, NOW, setClause } from './sql';

describe('the raw-SQL kit', () => {
  it('setClause numbers its parameters from `first`, in the order of the map', () => {
    const at = new Date('2026-01-02T03:04:05.678Z');
    expect(setClause({ status: 'done', attempts: 2, finished_at: at, note: null }, 3)).toEqual({
      sql: 'status = $3, attempts = $4, finished_at = $5, note = $6',
      params: ['done', 2, at, null],
    });
  });

  it('NOW is the database clock, undefined leaves its column alone, objects and arrays go as JSON text', () => {
    expect(setClause({ a: undefined, updated_at: NOW, meta: { k: [1] }, paths: ['x'], b: undefined }, 2)).toEqual({
      sql: 'updated_at = now(), meta = $2, paths = $3',
      params: ['{"k":[1]}', '["x"]'],
    });
  });

  it('NUL in text and in JSON is stored as U+FFFD', () => {
    expect(setClause({ content: 'a\u0000b', meta: { t: 'c\u0000' } }, 1).params).toEqual(['a\uFFFDb', '{"t":"c\\ufffd"}']);
  });

  it('refuses a column that is not a plain name, and an empty SET list', () => {
    expect(() => setClause({ 'status = status; DROP TABLE x; --': 1 }, 1)).toThrow('setClause: bad column');
    expect(() => setClause({ a: undefined }, 1)).toThrow('setClause: nothing to set');
  });

  it('isoText renders a timestamp column as UTC ISO-8601 text with milliseconds', () => {
    expect(isoText('m.created_at')).toBe(`to_char(m.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`);
  });
});
