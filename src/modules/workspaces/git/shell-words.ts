/**
 * Splits a command line into words the way a POSIX shell would for plain words and quotes ('…', "…",
 * backslash escapes), without expansion. Returns null for an unterminated quote.
 */
export function shellWords(line: string): string[] | null {
  const words: string[] = [];
  let current = '';
  let inWord = false;
  let i = 0;
  while (i < line.length) {
    const c = line[i];
    if (c === "'") {
      const end = line.indexOf("'", i + 1);
      if (end < 0) return null;
      current += line.slice(i + 1, end);
      inWord = true;
      i = end + 1;
    } else if (c === '"') {
      i += 1;
      while (i < line.length && line[i] !== '"') {
        if (line[i] === '\\' && i + 1 < line.length && '"\\$`'.includes(line[i + 1])) i += 1;
        current += line[i];
        i += 1;
      }
      if (i >= line.length) return null;
      inWord = true;
      i += 1;
    } else if (c === '\\' && i + 1 < line.length) {
      current += line[i + 1];
      inWord = true;
      i += 2;
    } else if (/\s/.test(c)) {
      if (inWord) words.push(current);
      current = '';
      inWord = false;
      i += 1;
    } else {
      current += c;
      inWord = true;
      i += 1;
    }
  }
  if (inWord) words.push(current);
  return words;
}
