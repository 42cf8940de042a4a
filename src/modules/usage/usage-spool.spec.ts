import { completeRecords, csvSlices } from './usage-spool';

describe('csvSlices', () => {
  it('cuts at record ends only, never at a newline inside a quoted field', () => {
    const records = ['1,"a",x', '2,"two\nlines",y', '3,"say ""hi""\n",z', '4,,', '5,"e",w'];
    const csv = records.join('\n');
    expect(csvSlices(csv, 2)).toEqual([records.slice(0, 2).join('\n'), records.slice(2, 4).join('\n'), records[4]]);
    expect(csvSlices(csv, 10)).toEqual([csv]);
    expect(csvSlices(csv, 1)).toEqual(records);
  });

  it('has no empty slice for empty input or an exact multiple', () => {
    expect(csvSlices('', 500)).toEqual([]);
    expect(csvSlices('1\n2', 2)).toEqual(['1\n2']);
    expect(csvSlices('1\n2\n3\n4', 2)).toEqual(['1\n2', '3\n4']);
  });
});

describe('completeRecords', () => {
  it('keeps whole records and drops a tail a crash cut short, even inside a quoted newline', () => {
    expect(completeRecords('1,"a"\n2,"b"\n')).toBe('1,"a"\n2,"b"');
    expect(completeRecords('1,"a"\n2,"b')).toBe('1,"a"');
    expect(completeRecords('1,"a"\n2,"two\nli')).toBe('1,"a"');
    expect(completeRecords('1,"two\nlines"\n')).toBe('1,"two\nlines"');
    expect(completeRecords('')).toBe('');
    expect(completeRecords('1,"a')).toBe('');
  });
});
