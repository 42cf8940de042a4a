/** A loopback host name as a URL parser gives it: exactly 127.0.0.0/8, `localhost` or `[::1]` (not `127.0.0.1.evil.example`). */
const isLoopback = (hostname: string): boolean =>
  hostname === 'localhost' || hostname === '[::1]' || /^127\.(25[0-5]|2[0-4]\d|1?\d?\d)(\.(25[0-5]|2[0-4]\d|1?\d?\d)){2}$/.test(hostname);

const hostnameOf = (url: string): string | undefined => {
  try {
    return new URL(url).hostname.toLowerCase();
  } catch {
    return undefined;
  }
};

/**
 * DNS rebinding (MCP transport security): without a configured credential every caller of a loopback-bound server is the
 * local operator, so a web page whose host name resolves to 127.0.0.1 could drive the tools through the user's browser.
 * Such a request carries the page's name in `Host` (and `Origin`); a local client names the loopback address. Returns
 * why a request must be refused, or undefined.
 */
export function rebindingProblem(headers: { host?: string; origin?: string | string[] }): string | undefined {
  const host = headers.host ? hostnameOf(`http://${headers.host}`) : undefined;
  if (!host || !isLoopback(host)) return `Host ${JSON.stringify(headers.host ?? '')} is not a loopback address`;
  const origin = Array.isArray(headers.origin) ? headers.origin[0] : headers.origin;
  if (origin === undefined) return undefined;
  const from = hostnameOf(origin);
  return from && isLoopback(from) ? undefined : `Origin ${JSON.stringify(origin)} is not a loopback origin`;
}
