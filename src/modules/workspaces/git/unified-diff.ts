const CONTEXT = 3;
const MAX_CELLS = 4_000_000;

type Op = { kind: ' ' | '-' | '+'; line: string };

const splitLines = (text: string): string[] => (text === '' ? [] : text.replace(/\n$/, '').split('\n'));

/** Line operations from an LCS table over the middle part (prefix/suffix trimmed). */
function diffOps(a: string[], b: string[]): Op[] {
  let start = 0;
  while (start < a.length && start < b.length && a[start] === b[start]) start += 1;
  let endA = a.length;
  let endB = b.length;
  while (endA > start && endB > start && a[endA - 1] === b[endB - 1]) {
    endA -= 1;
    endB -= 1;
  }
  const head: Op[] = a.slice(0, start).map((line) => ({ kind: ' ', line }));
  const tail: Op[] = a.slice(endA).map((line) => ({ kind: ' ', line }));
  const ma = a.slice(start, endA);
  const mb = b.slice(start, endB);
  const middle: Op[] = [];
  if ((ma.length + 1) * (mb.length + 1) > MAX_CELLS) {
    for (const line of ma) middle.push({ kind: '-', line });
    for (const line of mb) middle.push({ kind: '+', line });
  } else {
    const w = mb.length + 1;
    const lcs = new Uint32Array((ma.length + 1) * w);
    for (let i = ma.length - 1; i >= 0; i -= 1) {
      for (let j = mb.length - 1; j >= 0; j -= 1) {
        lcs[i * w + j] = ma[i] === mb[j] ? lcs[(i + 1) * w + j + 1] + 1 : Math.max(lcs[(i + 1) * w + j], lcs[i * w + j + 1]);
      }
    }
    let i = 0;
    let j = 0;
    while (i < ma.length && j < mb.length) {
      if (ma[i] === mb[j]) {
        middle.push({ kind: ' ', line: ma[i] });
        i += 1;
        j += 1;
      } else if (lcs[(i + 1) * w + j] >= lcs[i * w + j + 1]) {
        middle.push({ kind: '-', line: ma[i++] });
      } else {
        middle.push({ kind: '+', line: mb[j++] });
      }
    }
    while (i < ma.length) middle.push({ kind: '-', line: ma[i++] });
    while (j < mb.length) middle.push({ kind: '+', line: mb[j++] });
  }
  return [...head, ...middle, ...tail];
}

/** A unified diff (`--- a/path`, `+++ b/path`, hunks with 3 lines of context). */
export function unifiedDiff(path: string, before: string | null, after: string | null): string {
  const ops = diffOps(splitLines(before ?? ''), splitLines(after ?? ''));
  const lines = [`--- ${before === null ? '/dev/null' : `a/${path}`}`, `+++ ${after === null ? '/dev/null' : `b/${path}`}`];
  const changed = ops.map((o, i) => (o.kind !== ' ' ? i : -1)).filter((i) => i >= 0);
  if (changed.length === 0) return lines.join('\n') + '\n';
  let i = 0;
  while (i < changed.length) {
    const from = Math.max(0, changed[i] - CONTEXT);
    let to = Math.min(ops.length, changed[i] + CONTEXT + 1);
    while (i + 1 < changed.length && changed[i + 1] - CONTEXT <= to) {
      i += 1;
      to = Math.min(ops.length, changed[i] + CONTEXT + 1);
    }
    let aStart = 1;
    let bStart = 1;
    for (let k = 0; k < from; k += 1) {
      if (ops[k].kind !== '+') aStart += 1;
      if (ops[k].kind !== '-') bStart += 1;
    }
    const hunk = ops.slice(from, to);
    const aLen = hunk.filter((o) => o.kind !== '+').length;
    const bLen = hunk.filter((o) => o.kind !== '-').length;
    lines.push(`@@ -${aLen === 0 ? aStart - 1 : aStart},${aLen} +${bLen === 0 ? bStart - 1 : bStart},${bLen} @@`);
    for (const o of hunk) lines.push(`${o.kind}${o.line}`);
    i += 1;
  }
  return lines.join('\n') + '\n';
}
