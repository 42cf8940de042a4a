export type ToolCalling = 'unknown' | 'none' | 'basic' | 'parallel';
export type ImageInput = 'unknown' | 'none' | 'supported';

export interface CatalogCapabilities {
  tool_calling: ToolCalling;
  streaming: boolean;
  max_context_tokens: number | null;
  image_input: ImageInput;
}

/** micro-USD per 1M tokens. */
export interface Price {
  input: number;
  output: number;
  cachedInput: number;
}

interface CatalogEntry {
  /** Matches the model id, or the part after the last `/` (OpenRouter-style `openai/gpt-4o`). */
  pattern: RegExp;
  caps: CatalogCapabilities;
  price?: Price;
}

const caps = (tool_calling: ToolCalling, max_context_tokens: number, image_input: ImageInput): CatalogCapabilities => ({
  tool_calling,
  streaming: true,
  max_context_tokens,
  image_input,
});
const usd = (input: number, output: number, cachedInput = input): Price => ({
  input: Math.round(input * 1e6),
  output: Math.round(output * 1e6),
  cachedInput: Math.round(cachedInput * 1e6),
});

// Ordered: the first matching entry wins, so specific ids come before family prefixes.
const CATALOG: CatalogEntry[] = [
  { pattern: /^gpt-4o-mini/, caps: caps('parallel', 128_000, 'supported'), price: usd(0.15, 0.6, 0.075) },
  { pattern: /^gpt-4o/, caps: caps('parallel', 128_000, 'supported'), price: usd(2.5, 10, 1.25) },
  { pattern: /^gpt-4\.1-nano/, caps: caps('parallel', 1_047_576, 'supported'), price: usd(0.1, 0.4, 0.025) },
  { pattern: /^gpt-4\.1-mini/, caps: caps('parallel', 1_047_576, 'supported'), price: usd(0.4, 1.6, 0.1) },
  { pattern: /^gpt-4\.1/, caps: caps('parallel', 1_047_576, 'supported'), price: usd(2, 8, 0.5) },
  { pattern: /^gpt-5(\.\d+)?-nano/, caps: caps('parallel', 400_000, 'supported'), price: usd(0.05, 0.4, 0.005) },
  { pattern: /^gpt-5(\.\d+)?-mini/, caps: caps('parallel', 400_000, 'supported'), price: usd(0.25, 2, 0.025) },
  { pattern: /^gpt-5/, caps: caps('parallel', 400_000, 'supported'), price: usd(1.25, 10, 0.125) },
  { pattern: /^o4-mini/, caps: caps('parallel', 200_000, 'supported'), price: usd(1.1, 4.4, 0.275) },
  { pattern: /^o3-mini/, caps: caps('parallel', 200_000, 'none'), price: usd(1.1, 4.4, 0.55) },
  { pattern: /^o3/, caps: caps('parallel', 200_000, 'supported'), price: usd(2, 8, 0.5) },
  { pattern: /^gpt-3\.5-turbo/, caps: caps('parallel', 16_385, 'none'), price: usd(0.5, 1.5) },
  { pattern: /^claude-opus-4-[15]/, caps: caps('parallel', 200_000, 'supported'), price: usd(5, 25, 0.5) },
  { pattern: /^claude-(opus-4|3-opus)/, caps: caps('parallel', 200_000, 'supported'), price: usd(15, 75, 1.5) },
  { pattern: /^claude-(sonnet-4|3-7-sonnet|3-5-sonnet)/, caps: caps('parallel', 200_000, 'supported'), price: usd(3, 15, 0.3) },
  { pattern: /^claude-haiku-4/, caps: caps('parallel', 200_000, 'supported'), price: usd(1, 5, 0.1) },
  { pattern: /^claude-3-5-haiku/, caps: caps('parallel', 200_000, 'supported'), price: usd(0.8, 4, 0.08) },
  { pattern: /^claude-3-haiku/, caps: caps('parallel', 200_000, 'supported'), price: usd(0.25, 1.25, 0.03) },
  { pattern: /^claude-/, caps: caps('parallel', 200_000, 'supported') },
  { pattern: /^gemini-2\.5-pro/, caps: caps('parallel', 1_048_576, 'supported'), price: usd(1.25, 10, 0.31) },
  { pattern: /^gemini-2\.5-flash-lite/, caps: caps('parallel', 1_048_576, 'supported'), price: usd(0.1, 0.4, 0.025) },
  { pattern: /^gemini-2\.5-flash/, caps: caps('parallel', 1_048_576, 'supported'), price: usd(0.3, 2.5, 0.075) },
  { pattern: /^gemini-2\.0-flash/, caps: caps('parallel', 1_048_576, 'supported'), price: usd(0.1, 0.4, 0.025) },
  { pattern: /^gemini-/, caps: caps('parallel', 1_048_576, 'supported') },
  { pattern: /^deepseek-chat/, caps: caps('basic', 128_000, 'none'), price: usd(0.27, 1.1, 0.07) },
  { pattern: /^deepseek-reasoner/, caps: caps('basic', 128_000, 'none'), price: usd(0.55, 2.19, 0.14) },
  { pattern: /^mistral-large/, caps: caps('parallel', 128_000, 'none'), price: usd(2, 6) },
  { pattern: /^mistral-small/, caps: caps('parallel', 128_000, 'supported'), price: usd(0.1, 0.3) },
  { pattern: /^codestral/, caps: caps('basic', 256_000, 'none'), price: usd(0.3, 0.9) },
  { pattern: /^grok-3-mini/, caps: caps('parallel', 131_072, 'none'), price: usd(0.3, 0.5, 0.075) },
  { pattern: /^grok-(3|4)/, caps: caps('parallel', 131_072, 'supported'), price: usd(3, 15, 0.75) },
  { pattern: /^llama-3\.1-8b-instant/, caps: caps('parallel', 131_072, 'none'), price: usd(0.05, 0.08) },
  { pattern: /^llama-3\.3-70b/, caps: caps('parallel', 131_072, 'none'), price: usd(0.59, 0.79) },
  { pattern: /^command-a/, caps: caps('parallel', 256_000, 'none'), price: usd(2.5, 10) },
  { pattern: /^(qwen-plus|qwen-max|qwen-turbo)/, caps: caps('parallel', 131_072, 'none') },
  { pattern: /^sonar/, caps: caps('none', 127_072, 'none'), price: usd(1, 1) },
];

const lookup = (model: string): CatalogEntry | undefined => {
  const bare = model.includes('/') ? model.slice(model.lastIndexOf('/') + 1) : model;
  return CATALOG.find((e) => e.pattern.test(model)) ?? CATALOG.find((e) => e.pattern.test(bare));
};

export const catalogCapabilities = (model: string): CatalogCapabilities | undefined => lookup(model)?.caps;
export const catalogPrice = (model: string): Price | undefined => lookup(model)?.price;
