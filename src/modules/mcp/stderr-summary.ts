const ERROR_LINE = /\b(Cannot find module|[A-Za-z]*Error:|ENOENT|EACCES|No such file|not found|Permission denied)/;
const UNSEEN_FILE = /Cannot find module|ENOENT|No such file/;

/**
 * What a failed server printed, for a person: the first line that names the error (Node's "Error: Cannot find module
 * …", which a stack trace pushes out of the tail), then the last 400 characters, and — when a file was missing — the
 * likely cause: the sandbox shows only the workspace, the system directories and GATEWAY_TASK_SANDBOX_READ_PATHS.
 */
export function stderrSummary(stderr: string): string {
  const text = stderr.trim();
  if (!text) return '';
  const tail = text.slice(-400);
  const first = text
    .split('\n')
    .map((l) => l.trim())
    .find((l) => ERROR_LINE.test(l));
  const head = first && !tail.includes(first) ? `${first.slice(0, 300)} … ` : '';
  const hint = UNSEEN_FILE.test(text)
    ? ' (a file outside the workspace and the system directories is not visible in the sandbox: list its directory in GATEWAY_TASK_SANDBOX_READ_PATHS)'
    : '';
  return `${head}${tail}${hint}`;
}
