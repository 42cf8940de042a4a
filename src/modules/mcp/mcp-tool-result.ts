import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';

const MAX_TEXT = 256 * 1024;

/** A `tools/call` result as text for the model: text parts joined, other parts described; structured content kept. */
export function renderToolResult(result: CallToolResult): { text: string; isError: boolean; structured?: unknown } {
  const parts = (result.content ?? []).map((c) => {
    switch (c.type) {
      case 'text':
        return c.text;
      case 'image':
      case 'audio':
        return `[${c.type} ${c.mimeType}, ${Math.round((c.data.length * 3) / 4)} bytes]`;
      case 'resource':
        return 'text' in c.resource && typeof c.resource.text === 'string' ? c.resource.text : `[resource ${c.resource.uri}]`;
      case 'resource_link':
        return `[resource ${c.uri}]`;
      default:
        return '';
    }
  });
  let text = parts.filter((p) => p !== '').join('\n');
  if (!text && result.structuredContent !== undefined) text = JSON.stringify(result.structuredContent);
  if (text.length > MAX_TEXT) text = `${text.slice(0, MAX_TEXT)}\n[truncated: ${text.length - MAX_TEXT} more characters]`;
  return { text, isError: result.isError === true, ...(result.structuredContent !== undefined ? { structured: result.structuredContent } : {}) };
}
