/**
 * A Streamable HTTP MCP server's response with its messages bounded: a JSON body larger than `maxBytes`,
 * or one SSE event (the bytes between blank lines) larger than it, errors the body with a clear message instead of
 * growing in the worker's memory until the process dies.
 */
export function boundedResponse(res: Response, maxBytes: number, server: string): Response {
  if (!res.body || [101, 204, 205, 304].includes(res.status)) return res;
  const sse = (res.headers.get('content-type') ?? '').includes('text/event-stream');
  let size = 0;
  let prev = 0;
  const bounded = res.body.pipeThrough(
    new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, controller) {
        if (!sse) size += chunk.length;
        else
          for (const byte of chunk) {
            // An event ends at a blank line (LF LF; CRs in between are skipped).
            if (byte === 10 && prev === 10) size = 0;
            else size++;
            if (byte !== 13) prev = byte;
          }
        if (size > maxBytes) {
          controller.error(new Error(`MCP server "${server}" sent one message larger than ${maxBytes} bytes (GATEWAY_MCP_MAX_MESSAGE_BYTES)`));
          return;
        }
        controller.enqueue(chunk);
      },
    }),
  );
  return new Response(bounded, { status: res.status, statusText: res.statusText, headers: res.headers });
}
