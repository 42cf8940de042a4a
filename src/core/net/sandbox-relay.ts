/**
 * Set by the worker's sandbox egress proxy on every request it relays to this server's own ingress (an adapter's
 * metered model calls). Such a request is never taken for the local operator: it needs a valid credential even when
 * no operator token is configured. A client setting it itself only gives up the local operator's trust.
 */
export const SANDBOX_RELAY_HEADER = 'x-hecate-sandbox-relay';
