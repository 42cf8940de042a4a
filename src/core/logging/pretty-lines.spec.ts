import { prettyLine } from './pretty-lines';

const record = (fields: Record<string, unknown>) =>
  JSON.stringify({ level: 'info', time: '2026-11-27T13:52:39.123Z', pid: 7, role: 'all', name: 'hecate', ...fields });

describe('prettyLine', () => {
  it('puts a short record on one line, without pid, role and name', () => {
    expect(prettyLine(record({ msg: 'consuming queues', queues: ['runs', 'system'], concurrency: 4 }))).toBe(
      '13:52:39 info  consuming queues  queues=["runs","system"]  concurrency=4\n',
    );
  });

  it('gives a long record one aligned line per field', () => {
    const line = prettyLine(record({ msg: 'hecate listening', url: 'http://127.0.0.1:8765', next: 'x'.repeat(120) }));
    expect(line.split('\n')).toEqual(['13:52:39 info  hecate listening', '         url   http://127.0.0.1:8765', `         next  ${'x'.repeat(120)}`, '']);
  });

  it('passes through what is not JSON', () => {
    expect(prettyLine('plain\n')).toBe('plain\n');
  });
});
