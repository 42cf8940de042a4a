import { spoolSlices } from './usage-spool';

describe('spoolSlices', () => {
  it('cuts at record ends only, never at a newline inside a quoted field', () => {
    const records = ['1,"a",x', '2,"two\nlines",y', '3,"say ""hi""\n",z', '4,,', '5,"e",w'];
    const text = `${records.join('\n')}\n`;
    expect(spoolSlices(text, 2)).toEqual([records.slice(0, 2).join('\n'), records.slice(2, 4).join('\n'), records[4]]);
    expect(spoolSlices(text, 10)).toEqual([records.join('\n')]);
    expect(spoolSlices(text, 1)).toEqual(records);
  });

  it('has no empty slice for empty input or an exact multiple', () => {
    expect(spoolSlices('', 500)).toEqual([]);
    expect(spoolSlices('1\n2\n', 2)).toEqual(['1\n2']);
    expect(spoolSlices('1\n2\n3\n4\n', 2)).toEqual(['1\n2', '3\n4']);
  });

  it('drops a last record a crash cut short, even inside a quoted newline', () => {
    expect(spoolSlices('1,"a"\n2,"b', 500)).toEqual(['1,"a"']);
    expect(spoolSlices('1,"a"\n2,"two\nli', 500)).toEqual(['1,"a"']);
    expect(spoolSlices('1,"a"\n2,"b"\n3,"two\nli', 2)).toEqual(['1,"a"\n2,"b"']);
    expect(spoolSlices('1,"two\nlines"\n', 500)).toEqual(['1,"two\nlines"']);
    expect(spoolSlices('1,"a', 500)).toEqual([]);
  });
});
