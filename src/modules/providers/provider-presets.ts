import type { ProviderKind, ProviderProtocol } from '@core/config/groups/gateway.env';

export interface ProviderPreset {
  id: string;
  name: string;
  kind: ProviderKind;
  protocol: ProviderProtocol;
  /** Includes the version segment: requests go to `${baseUrl}/chat/completions`, `${baseUrl}/messages`, `${baseUrl}/models`. */
  baseUrl: string;
  defaultModel: string;
  docsUrl: string;
  description: string;
  /** Local presets only: the command looked up on PATH by local discovery. */
  command?: string;
}

const cloud = (p: Omit<ProviderPreset, 'kind' | 'protocol'> & { protocol?: ProviderProtocol }): ProviderPreset => ({
  kind: 'cloud',
  protocol: 'openai',
  ...p,
});
const local = (p: Omit<ProviderPreset, 'kind' | 'protocol'>): ProviderPreset => ({ kind: 'local', protocol: 'openai', ...p });

/** The built-in catalog (inventory §5): 21 cloud and 4 local presets, sorted by id. */
export const PROVIDER_PRESETS: readonly ProviderPreset[] = [
  cloud({
    id: 'alibaba',
    name: 'Alibaba Cloud (Qwen)',
    baseUrl: 'https://dashscope-intl.aliyuncs.com/compatible-mode/v1',
    defaultModel: 'qwen-plus',
    docsUrl: 'https://www.alibabacloud.com/help/en/model-studio/compatibility-of-openai-with-dashscope',
    description: 'Alibaba Model Studio (DashScope). Qwen models through the OpenAI-compatible endpoint.',
  }),
  cloud({
    id: 'anthropic',
    name: 'Anthropic',
    protocol: 'anthropic',
    baseUrl: 'https://api.anthropic.com/v1',
    defaultModel: 'claude-sonnet-4-5',
    docsUrl: 'https://docs.anthropic.com/en/docs/about-claude/models/overview',
    description: "Anthropic's hosted API: Claude Opus, Sonnet and Haiku through the native Messages protocol.",
  }),
  cloud({
    id: 'cerebras',
    name: 'Cerebras',
    baseUrl: 'https://api.cerebras.ai/v1',
    defaultModel: 'llama-3.3-70b',
    docsUrl: 'https://inference-docs.cerebras.ai/',
    description: 'Cerebras inference: very high tokens-per-second on open-weight models.',
  }),
  cloud({
    id: 'cohere',
    name: 'Cohere',
    baseUrl: 'https://api.cohere.ai/compatibility/v1',
    defaultModel: 'command-a-03-2025',
    docsUrl: 'https://docs.cohere.com/docs/compatibility-api',
    description: "Cohere's Command models through the compatibility API.",
  }),
  cloud({
    id: 'deepinfra',
    name: 'DeepInfra',
    baseUrl: 'https://api.deepinfra.com/v1/openai',
    defaultModel: 'meta-llama/Meta-Llama-3.1-8B-Instruct',
    docsUrl: 'https://deepinfra.com/docs/openai_api',
    description: 'DeepInfra serverless inference for open-weight models.',
  }),
  cloud({
    id: 'deepseek',
    name: 'DeepSeek',
    baseUrl: 'https://api.deepseek.com/v1',
    defaultModel: 'deepseek-chat',
    docsUrl: 'https://api-docs.deepseek.com/',
    description: "DeepSeek's chat and reasoning models.",
  }),
  cloud({
    id: 'fireworks',
    name: 'Fireworks AI',
    baseUrl: 'https://api.fireworks.ai/inference/v1',
    defaultModel: 'accounts/fireworks/models/llama-v3p1-8b-instruct',
    docsUrl: 'https://docs.fireworks.ai/getting-started/introduction',
    description: 'Fireworks serverless inference; model ids are namespaced (accounts/fireworks/models/<slug>).',
  }),
  cloud({
    id: 'gemini',
    name: 'Google Gemini',
    baseUrl: 'https://generativelanguage.googleapis.com/v1beta/openai',
    defaultModel: 'gemini-2.5-flash',
    docsUrl: 'https://ai.google.dev/gemini-api/docs/openai',
    description: 'Gemini models through the OpenAI-compatible endpoint.',
  }),
  cloud({
    id: 'groq',
    name: 'Groq',
    baseUrl: 'https://api.groq.com/openai/v1',
    defaultModel: 'llama-3.1-8b-instant',
    docsUrl: 'https://console.groq.com/docs/models',
    description: 'Groq LPU inference: low time-to-first-token on open-weight models.',
  }),
  cloud({
    id: 'huggingface',
    name: 'Hugging Face',
    baseUrl: 'https://router.huggingface.co/v1',
    defaultModel: 'openai/gpt-oss-20b',
    docsUrl: 'https://huggingface.co/docs/inference-providers',
    description: 'Hugging Face Inference Providers router.',
  }),
  cloud({
    id: 'mistral',
    name: 'Mistral',
    baseUrl: 'https://api.mistral.ai/v1',
    defaultModel: 'mistral-small-latest',
    docsUrl: 'https://docs.mistral.ai/getting-started/models/models_overview/',
    description: "Mistral's hosted API: Mistral, Codestral, Pixtral and Ministral.",
  }),
  cloud({
    id: 'moonshot',
    name: 'Moonshot AI (Kimi)',
    baseUrl: 'https://api.moonshot.ai/v1',
    defaultModel: 'kimi-k2-0905-preview',
    docsUrl: 'https://platform.moonshot.ai/docs',
    description: 'Moonshot AI Kimi models.',
  }),
  cloud({
    id: 'nvidia',
    name: 'NVIDIA',
    baseUrl: 'https://integrate.api.nvidia.com/v1',
    defaultModel: 'meta/llama-3.1-8b-instruct',
    docsUrl: 'https://build.nvidia.com/explore/discover',
    description: 'NVIDIA NIM through build.nvidia.com.',
  }),
  cloud({
    id: 'openai',
    name: 'OpenAI',
    baseUrl: 'https://api.openai.com/v1',
    defaultModel: 'gpt-5.4-mini',
    docsUrl: 'https://platform.openai.com/docs',
    description: "OpenAI's Responses + Chat Completions API.",
  }),
  cloud({
    id: 'openrouter',
    name: 'OpenRouter',
    baseUrl: 'https://openrouter.ai/api/v1',
    defaultModel: 'openai/gpt-4o-mini',
    docsUrl: 'https://openrouter.ai/docs',
    description: 'OpenRouter: one key for many hosted models.',
  }),
  cloud({
    id: 'perplexity',
    name: 'Perplexity',
    baseUrl: 'https://api.perplexity.ai',
    defaultModel: 'sonar',
    docsUrl: 'https://docs.perplexity.ai/',
    description: 'Perplexity Sonar: search-grounded answers with citations.',
  }),
  cloud({
    id: 'requesty',
    name: 'Requesty',
    baseUrl: 'https://router.requesty.ai/v1',
    defaultModel: 'openai/gpt-4o-mini',
    docsUrl: 'https://docs.requesty.ai/',
    description: 'Requesty LLM router.',
  }),
  cloud({
    id: 'together_ai',
    name: 'Together AI',
    baseUrl: 'https://api.together.xyz/v1',
    defaultModel: 'meta-llama/Llama-3.3-70B-Instruct-Turbo',
    docsUrl: 'https://docs.together.ai/docs/inference-models',
    description: 'Together AI inference for open-weight models.',
  }),
  cloud({
    id: 'vercel_ai_gateway',
    name: 'Vercel AI Gateway',
    baseUrl: 'https://ai-gateway.vercel.sh/v1',
    defaultModel: 'openai/gpt-4o-mini',
    docsUrl: 'https://vercel.com/docs/ai-gateway',
    description: "Vercel's AI Gateway (OpenAI-compatible).",
  }),
  cloud({
    id: 'xai',
    name: 'xAI',
    baseUrl: 'https://api.x.ai/v1',
    defaultModel: 'grok-3-mini',
    docsUrl: 'https://docs.x.ai/docs/models',
    description: "xAI's Grok API.",
  }),
  cloud({
    id: 'zai',
    name: 'z.ai',
    baseUrl: 'https://api.z.ai/api/paas/v4',
    defaultModel: 'glm-4.6',
    docsUrl: 'https://docs.z.ai/',
    description: 'Zhipu z.ai: the GLM family.',
  }),
  local({
    id: 'llamacpp',
    name: 'llama.cpp',
    baseUrl: 'http://127.0.0.1:8080/v1',
    defaultModel: '',
    command: 'llama-server',
    docsUrl: 'https://github.com/ggml-org/llama.cpp/tree/master/tools/server',
    description: 'Local llama.cpp server (llama-server), OpenAI-compatible.',
  }),
  local({
    id: 'lmstudio',
    name: 'LM Studio',
    baseUrl: 'http://127.0.0.1:1234/v1',
    defaultModel: '',
    command: 'lms',
    docsUrl: 'https://lmstudio.ai/docs/app/api/endpoints/openai',
    description: 'LM Studio local server, OpenAI-compatible.',
  }),
  local({
    id: 'localai',
    name: 'LocalAI',
    baseUrl: 'http://127.0.0.1:8080/v1',
    defaultModel: '',
    command: 'local-ai',
    docsUrl: 'https://localai.io/',
    description: 'LocalAI, a self-hosted OpenAI drop-in.',
  }),
  local({
    id: 'ollama',
    name: 'Ollama',
    baseUrl: 'http://127.0.0.1:11434/v1',
    defaultModel: 'llama3.1:8b',
    command: 'ollama',
    docsUrl: 'https://github.com/ollama/ollama/blob/main/docs/openai.md',
    description: 'Local Ollama server.',
  }),
];

const BY_ID = new Map(PROVIDER_PRESETS.map((p) => [p.id, p]));

export const presetById = (id: string | null | undefined): ProviderPreset | undefined => (id ? BY_ID.get(id) : undefined);

/** `PROVIDER_<NAME>_API_KEY` for a provider name. */
export const apiKeyEnvName = (name: string): string => `PROVIDER_${name.toUpperCase()}_API_KEY`;

export function toPresetResponse(p: ProviderPreset) {
  const upper = p.id.toUpperCase();
  const snippet = p.kind === 'local' ? `PROVIDER_${upper}_BASE_URL=${p.baseUrl}` : `${apiKeyEnvName(p.id)}=your_api_key_here`;
  return {
    id: p.id,
    name: p.name,
    kind: p.kind,
    protocol: p.protocol,
    base_url: p.baseUrl,
    base_url_env: `PROVIDER_${upper}_BASE_URL`,
    api_key_env: p.kind === 'local' ? '' : apiKeyEnvName(p.id),
    default_model: p.defaultModel,
    docs_url: p.docsUrl,
    description: p.description,
    env_snippet: snippet,
  };
}
