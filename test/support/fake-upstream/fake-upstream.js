'use strict';
/**
 * Fake LLM upstream for integration/e2e tests and benchmarks.
 *
 * Plain CommonJS, only `node:` built-ins, so it loads unchanged in Jest (CJS mode, any transform),
 * in plain `node`, and from ESM (`import { startFakeUpstream } from '.../fake-upstream.js'`).
 * Types live in `fake-upstream.d.ts`; the standalone process entry point is `cli.js`.
 *
 * Speaks:
 *   OpenAI     GET /v1/models, GET /v1/models/:id, POST /v1/chat/completions (stream and not)
 *   Anthropic  POST /v1/messages (stream and not), POST /v1/messages/count_tokens,
 *              GET /v1/models (Anthropic list shape when an `anthropic-version` header is present)
 *   Ollama     GET /api/tags, GET / ("Ollama is running")
 *   Control    GET /__fake/stats  -> {"requests":N,"active":M}  (never recorded nor scripted)
 *
 * Hot-path notes: model lists are serialised once per setModels(); SSE frames are built by string
 * concatenation around a per-request prefix; split content (and its JSON-escaped pieces) is cached;
 * with chunkIntervalMs=0 a whole stream is written with a single res.end().
 */

const http = require('node:http');
const crypto = require('node:crypto');
// Real timers even when a Jest test installs fake timers on the global object.
const { setTimeout: realSetTimeout, clearTimeout: realClearTimeout } = require('node:timers');

const DEFAULT_MODELS = Object.freeze(['gpt-4o-mini', 'claude-3-5-haiku-latest', 'llama3.2']);
const DEFAULT_REPLY = 'Hello from fake upstream';
const DEFAULT_SIGNATURE = 'ZmFrZS10aGlua2luZy1zaWduYXR1cmU='; // base64("fake-thinking-signature")
const MODEL_CREATED = 1715367049;
const MODEL_CREATED_AT = '2024-10-22T00:00:00Z';
const PIECE_CACHE_MAX = 1024;

const SSE_HEADERS_BASE = {
  'content-type': 'text/event-stream; charset=utf-8',
  'cache-control': 'no-cache',
};

const OPENAI_ERROR_TYPES = {
  400: 'invalid_request_error',
  401: 'invalid_request_error',
  403: 'permission_error',
  404: 'invalid_request_error',
  409: 'conflict_error',
  422: 'invalid_request_error',
  429: 'rate_limit_exceeded',
  500: 'server_error',
  502: 'server_error',
  503: 'server_error',
  504: 'server_error',
};
const OPENAI_ERROR_CODES = { 401: 'invalid_api_key', 429: 'rate_limit_exceeded' };
const ANTHROPIC_ERROR_TYPES = {
  400: 'invalid_request_error',
  401: 'authentication_error',
  402: 'billing_error',
  403: 'permission_error',
  404: 'not_found_error',
  413: 'request_too_large',
  429: 'rate_limit_error',
  500: 'api_error',
  502: 'api_error',
  503: 'api_error',
  504: 'timeout_error',
  529: 'overloaded_error',
};

const TO_OPENAI_FINISH = {
  stop: 'stop',
  end_turn: 'stop',
  stop_sequence: 'stop',
  length: 'length',
  max_tokens: 'length',
  tool_calls: 'tool_calls',
  tool_use: 'tool_calls',
  content_filter: 'content_filter',
  refusal: 'content_filter',
};
const TO_ANTHROPIC_STOP = {
  stop: 'end_turn',
  end_turn: 'end_turn',
  stop_sequence: 'stop_sequence',
  length: 'max_tokens',
  max_tokens: 'max_tokens',
  tool_calls: 'tool_use',
  tool_use: 'tool_use',
  content_filter: 'refusal',
  refusal: 'refusal',
  pause_turn: 'pause_turn',
};

// ---------------------------------------------------------------------------------------------
// small helpers

function safeParse(text) {
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
}

function extractKey(headers) {
  const xKey = headers['x-api-key'];
  if (typeof xKey === 'string' && xKey !== '') return xKey;
  const auth = headers['authorization'];
  if (typeof auth === 'string') {
    return auth.startsWith('Bearer ') || auth.startsWith('bearer ') ? auth.slice(7).trim() : auth;
  }
  return undefined;
}

function protocolOf(path, headers) {
  if (path === '/v1/messages' || path.startsWith('/v1/messages/')) return 'anthropic';
  if (path === '/' || path.startsWith('/api/')) return 'ollama';
  if (path.startsWith('/v1/models') && headers['anthropic-version'] !== undefined) return 'anthropic';
  return 'openai';
}

function isCompletionPath(path) {
  return path === '/v1/chat/completions' || path === '/v1/messages' || path === '/v1/responses';
}

/** Text of an OpenAI/Anthropic message `content` (string or array of parts). */
function contentText(content) {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  let out = '';
  for (const part of content) {
    if (part && typeof part.text === 'string') out += part.text;
    else if (part && typeof part.content === 'string') out += part.content; // tool_result
  }
  return out;
}

/** Responses API `input`: a string, or items (`message` with `input_text` parts, `function_call_output`, …). */
function responsesMessages(body) {
  const input = body && body.input;
  if (typeof input === 'string') return [{ role: 'user', content: input }];
  if (!Array.isArray(input)) return undefined;
  const out = [];
  for (const item of input) {
    if (!item) continue;
    if (item.type === 'function_call_output') out.push({ role: 'tool', content: typeof item.output === 'string' ? item.output : JSON.stringify(item.output) });
    else if (item.role)
      out.push({
        role: item.role,
        content: typeof item.content === 'string' ? item.content : (item.content || []).map((c) => ({ type: 'text', text: c && c.text })),
      });
  }
  return out;
}

function lastUserText(body) {
  const msgs = (body && body.messages) || responsesMessages(body);
  if (!Array.isArray(msgs)) return '';
  for (let i = msgs.length - 1; i >= 0; i--) {
    const m = msgs[i];
    if (m && m.role === 'user') {
      const c = m.content;
      if (typeof c === 'string') return c;
      if (Array.isArray(c)) {
        let out = '';
        for (const part of c) if (part && part.type === 'text' && typeof part.text === 'string') out += part.text;
        return out;
      }
      return '';
    }
  }
  return '';
}

/** Text of the request's last message when it is an assistant message (a prefill), else ''. */
function trailingAssistantText(body) {
  const msgs = body && body.messages;
  if (!Array.isArray(msgs) || msgs.length === 0) return '';
  const last = msgs[msgs.length - 1];
  return last && last.role === 'assistant' ? contentText(last.content) : '';
}

/** Deterministic "token" estimate: ceil(chars / 4), at least 1. */
function estimateInputTokens(body) {
  if (!body || typeof body !== 'object') return 1;
  let chars = 0;
  const msgs = Array.isArray(body.messages) ? body.messages : responsesMessages(body);
  if (Array.isArray(msgs)) for (const m of msgs) if (m) chars += contentText(m.content).length;
  if (body.system !== undefined) chars += contentText(body.system).length;
  if (typeof body.instructions === 'string') chars += body.instructions.length;
  return Math.max(1, Math.ceil(chars / 4));
}

function tokensOf(text) {
  return Math.ceil(text.length / 4);
}

/** Split into exactly min(n, len) non-empty pieces of near-equal length. */
function splitEven(text, n) {
  const len = text.length;
  if (len === 0) return [];
  const k = Math.max(1, Math.min(n, len));
  const out = new Array(k);
  for (let i = 0; i < k; i++) out[i] = text.slice(Math.floor((i * len) / k), Math.floor(((i + 1) * len) / k));
  return out;
}

/** Word-ish pieces: "Hello from x" -> ["Hello", " from", " x"]. */
function splitWords(text) {
  if (text === '') return [];
  const out = text.match(/\s*\S+|\s+$/g);
  return out === null ? [text] : out;
}

function normalizeToolCalls(toolCalls, seq, prefix) {
  if (!toolCalls || toolCalls.length === 0) return undefined;
  return toolCalls.map((tc, i) => {
    const args = tc.arguments;
    const argsJson = typeof args === 'string' ? args : JSON.stringify(args === undefined ? {} : args);
    let input = args;
    if (typeof args === 'string') {
      const parsed = safeParse(args);
      input = parsed !== null && typeof parsed === 'object' ? parsed : {};
    } else if (args === undefined) {
      input = {};
    }
    return { id: tc.id || `${prefix}${seq}_${i}`, name: tc.name, argsJson, input };
  });
}

function hasHeader(headers, name) {
  if (!headers) return false;
  for (const k of Object.keys(headers)) if (k.toLowerCase() === name) return true;
  return false;
}

function fakeDigest(id) {
  return crypto.createHash('sha256').update(id).digest('hex');
}

function ownerOf(id) {
  if (id.startsWith('gpt') || id.startsWith('o1') || id.startsWith('o3') || id.startsWith('o4')) return 'openai';
  if (id.startsWith('claude')) return 'anthropic';
  return 'library';
}

function buildModelCache(ids) {
  const list = ids.slice();
  const openaiList = JSON.stringify({
    object: 'list',
    data: list.map((id) => ({ id, object: 'model', created: MODEL_CREATED, owned_by: ownerOf(id) })),
  });
  const anthropicList = JSON.stringify({
    data: list.map((id) => ({ type: 'model', id, display_name: id, created_at: MODEL_CREATED_AT })),
    has_more: false,
    first_id: list.length ? list[0] : null,
    last_id: list.length ? list[list.length - 1] : null,
  });
  const tags = JSON.stringify({
    models: list.map((id) => ({
      name: id,
      model: id,
      modified_at: MODEL_CREATED_AT,
      size: 2019393189,
      digest: fakeDigest(id),
      details: {
        parent_model: '',
        format: 'gguf',
        family: 'llama',
        families: ['llama'],
        parameter_size: '3.2B',
        quantization_level: 'Q4_K_M',
      },
    })),
  });
  return { ids: new Set(list), list, openaiList, anthropicList, tags };
}

// ---------------------------------------------------------------------------------------------
// server

/**
 * @param {import('./fake-upstream').FakeUpstreamOptions} [opts]
 * @returns {Promise<import('./fake-upstream').FakeUpstream>}
 */
async function startFakeUpstream(opts = {}) {
  const host = opts.host || '127.0.0.1';
  const initialModels = opts.models ? opts.models.slice() : DEFAULT_MODELS.slice();
  const defaults = {
    latencyMs: opts.latencyMs || 0,
    chunks: opts.chunks,
    chunkIntervalMs: opts.chunkIntervalMs || 0,
    content: opts.content,
    continuePrefill: opts.continuePrefill === true,
    requireKey: opts.requireKey,
  };
  const record = opts.record !== false;

  /** @type {Array<{rule: import('./fake-upstream').ScriptRule, remaining: number}>} */
  const rules = [];
  /** @type {import('./fake-upstream').RecordedRequest[]} */
  const requests = [];
  const sockets = new Set();
  const waiters = new Set();
  const pieceCache = new Map();
  let models = buildModelCache(initialModels);
  let seq = 0;
  let requestCount = 0;
  let active = 0;
  let closing = false;
  let closePromise;

  function notify() {
    if (waiters.size === 0) return;
    for (const w of waiters) {
      let ok;
      try {
        ok = w.pred(api);
      } catch (err) {
        waiters.delete(w);
        realClearTimeout(w.timer);
        w.reject(err);
        continue;
      }
      if (ok) {
        waiters.delete(w);
        realClearTimeout(w.timer);
        w.resolve();
      }
    }
  }

  function takeRule(rec, completion) {
    for (let i = 0; i < rules.length; i++) {
      const entry = rules[i];
      if (!ruleMatches(entry.rule.match, rec, completion)) continue;
      if (entry.remaining !== Infinity && --entry.remaining <= 0) rules.splice(i, 1);
      return entry.rule;
    }
    return undefined;
  }

  /** Split reply text into stream pieces (cached: benchmarks send the same prompt over and over). */
  function piecesFor(text, n, extend) {
    const key = `${n === undefined ? '' : n}|${extend ? 1 : 0}|${text}`;
    let hit = pieceCache.get(key);
    if (hit !== undefined) return hit;
    let full = text;
    if (extend && n !== undefined && full.length > 0 && full.length < n) {
      while (full.length < n) full += ' ' + text;
    }
    const pieces = n === undefined ? splitWords(full) : splitEven(full, n);
    hit = { text: full, textJson: JSON.stringify(full), pieces, json: pieces.map((p) => JSON.stringify(p)) };
    if (pieceCache.size >= PIECE_CACHE_MAX) pieceCache.clear();
    pieceCache.set(key, hit);
    return hit;
  }

  // -------------------------------------------------------------------------------------------
  // request handling

  function onRequest(req, res) {
    const url = req.url || '/';
    const q = url.indexOf('?');
    const path = q === -1 ? url : url.slice(0, q);
    if (path === '/__fake/stats') {
      req.resume();
      const s = JSON.stringify({ requests: requestCount, active });
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(s) });
      res.end(s);
      return;
    }
    const h = req.headers;
    if ((req.method === 'GET' || req.method === 'HEAD') && h['content-length'] === undefined && h['transfer-encoding'] === undefined) {
      req.resume();
      dispatch(req, res, path, url, '');
      return;
    }
    let raw = '';
    req.setEncoding('utf8');
    req.on('data', (c) => {
      raw += c;
    });
    req.on('end', () => dispatch(req, res, path, url, raw));
  }

  function dispatch(req, res, path, url, raw) {
    const body = raw === '' ? null : safeParse(raw);
    const headers = req.headers;
    const id = ++seq;
    /** @type {import('./fake-upstream').RecordedRequest} */
    const rec = {
      method: req.method || 'GET',
      requestId: `req_fake${id}`,
      path,
      url,
      headers,
      body,
      rawBody: raw,
      receivedAt: Date.now(),
      apiKey: extractKey(headers),
      protocol: protocolOf(path, headers),
      model: body !== null && typeof body.model === 'string' ? body.model : undefined,
      stream: body !== null && body.stream === true,
      aborted: false,
      closedAt: undefined,
    };
    const ctx = { id, rec, timer: null, dropped: false };
    requestCount++;
    active++;
    if (record) requests.push(rec);
    res.on('close', () => {
      if (ctx.timer !== null) {
        realClearTimeout(ctx.timer);
        ctx.timer = null;
      }
      if (!res.writableFinished && !ctx.dropped && !closing) rec.aborted = true;
      rec.closedAt = Date.now();
      active--;
      notify();
    });
    notify();

    let rule;
    try {
      rule = takeRule(rec, isCompletionPath(path));
    } catch (err) {
      sendError(res, rec, 500, undefined, undefined, `fake upstream: match predicate threw: ${String(err)}`);
      return;
    }
    if (rule !== undefined && rule.hang) return; // accept and never answer

    const latency = rule !== undefined && rule.latencyMs !== undefined ? rule.latencyMs : defaults.latencyMs;
    if (latency > 0) {
      ctx.timer = realSetTimeout(() => {
        ctx.timer = null;
        if (!res.destroyed) respond(ctx, res, rule);
      }, latency);
    } else {
      respond(ctx, res, rule);
    }
  }

  function respond(ctx, res, rule) {
    const rec = ctx.rec;
    try {
      const requireKey = rule !== undefined && rule.requireKey !== undefined ? rule.requireKey : defaults.requireKey;
      if (requireKey !== undefined && rec.apiKey !== requireKey) {
        const msg =
          rec.protocol === 'anthropic'
            ? 'invalid x-api-key'
            : `Incorrect API key provided: ${rec.apiKey === undefined ? '(none)' : rec.apiKey.slice(0, 6) + '***'}.`;
        sendError(res, rec, 401, rule, undefined, msg);
        return;
      }
      if (rule !== undefined && rule.status !== undefined && rule.status >= 400) {
        sendError(res, rec, rule.status, rule, rule.errorBody);
        return;
      }
      route(ctx, res, rule);
    } catch (err) {
      if (!res.headersSent) sendError(res, rec, 500, undefined, undefined, `fake upstream internal error: ${String(err)}`);
      else res.destroy();
    }
  }

  function route(ctx, res, rule) {
    const rec = ctx.rec;
    const { method, path } = rec;
    if (method === 'POST') {
      if (path === '/v1/chat/completions') return openaiChat(ctx, res, rule);
      if (path === '/v1/messages') return anthropicMessages(ctx, res, rule);
      if (path === '/v1/responses') return openaiResponses(ctx, res, rule);
      if (path === '/v1/messages/count_tokens') {
        if (rec.body === null) return sendError(res, rec, 400, rule, undefined, 'Request body is not valid JSON');
        return sendJson(res, rec, 200, `{"input_tokens":${estimateInputTokens(rec.body)}}`, rule);
      }
    } else if (method === 'GET') {
      if (path === '/v1/models') {
        return sendJson(res, rec, 200, rec.protocol === 'anthropic' ? models.anthropicList : models.openaiList, rule);
      }
      if (path.startsWith('/v1/models/')) {
        const mid = decodeURIComponent(path.slice('/v1/models/'.length));
        if (!models.ids.has(mid)) return sendError(res, rec, 404, rule, undefined, `The model '${mid}' does not exist`, 'model_not_found');
        const one =
          rec.protocol === 'anthropic'
            ? { type: 'model', id: mid, display_name: mid, created_at: MODEL_CREATED_AT }
            : { id: mid, object: 'model', created: MODEL_CREATED, owned_by: ownerOf(mid) };
        return sendJson(res, rec, 200, JSON.stringify(one), rule);
      }
      if (path === '/api/tags') return sendJson(res, rec, 200, models.tags, rule);
      if (path === '/') {
        res.writeHead(200, withRuleHeaders({ 'content-type': 'text/plain; charset=utf-8', 'content-length': 17 }, rule));
        res.end('Ollama is running');
        return;
      }
    }
    sendError(res, rec, 404, rule, undefined, `Unknown route: ${method} ${path}`);
  }

  // -------------------------------------------------------------------------------------------
  // responses

  function withRuleHeaders(headers, rule) {
    if (rule !== undefined && rule.headers) {
      for (const k of Object.keys(rule.headers)) {
        const v = rule.headers[k];
        if (v === undefined || v === null) delete headers[k.toLowerCase()];
        else headers[k.toLowerCase()] = v;
      }
    }
    return headers;
  }

  function baseHeaders(rec, contentType) {
    const h = { 'content-type': contentType };
    if (rec.protocol === 'anthropic') h['request-id'] = rec.requestId;
    else if (rec.protocol === 'openai') h['x-request-id'] = rec.requestId;
    return h;
  }

  function sendJson(res, rec, status, bodyStr, rule) {
    const h = baseHeaders(rec, 'application/json');
    h['content-length'] = Buffer.byteLength(bodyStr);
    res.writeHead(status, withRuleHeaders(h, rule));
    res.end(bodyStr);
  }

  function errorPayload(protocol, status, message, code) {
    if (protocol === 'anthropic') {
      const type = ANTHROPIC_ERROR_TYPES[status] || (status >= 500 ? 'api_error' : 'invalid_request_error');
      return { type: 'error', error: { type, message } };
    }
    if (protocol === 'ollama') return { error: message };
    const type = OPENAI_ERROR_TYPES[status] || (status >= 500 ? 'server_error' : 'invalid_request_error');
    return { error: { message, type, param: null, code: code || OPENAI_ERROR_CODES[status] || null } };
  }

  function sendError(res, rec, status, rule, errorBody, message, code) {
    let bodyStr;
    let contentType = 'application/json';
    if (typeof errorBody === 'string') {
      bodyStr = errorBody;
      const t = errorBody.trimStart();
      if (!(t.startsWith('{') || t.startsWith('['))) contentType = 'text/plain; charset=utf-8';
    } else if (errorBody !== undefined) {
      bodyStr = JSON.stringify(errorBody);
    } else {
      bodyStr = JSON.stringify(errorPayload(rec.protocol, status, message || `Fake upstream error (status ${status})`, code));
    }
    const h = baseHeaders(rec, contentType);
    h['content-length'] = Buffer.byteLength(bodyStr);
    if (status === 429 && !hasHeader(rule && rule.headers, 'retry-after')) h['retry-after'] = '1';
    if (status === 401 && rec.protocol === 'openai') h['www-authenticate'] = 'Bearer';
    res.writeHead(status, withRuleHeaders(h, rule));
    res.end(bodyStr);
  }

  function midStreamErrorFrame(rec, rule) {
    if (rec.protocol === 'anthropic') {
      const payload =
        rule.errorBody !== undefined && typeof rule.errorBody !== 'string'
          ? JSON.stringify(rule.errorBody)
          : JSON.stringify({ type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } });
      return `event: error\ndata: ${payload}\n\n`;
    }
    const payload =
      rule.errorBody !== undefined && typeof rule.errorBody !== 'string'
        ? JSON.stringify(rule.errorBody)
        : JSON.stringify({
            error: { message: 'The server had an error while processing your request.', type: 'server_error', param: null, code: null },
          });
    return `data: ${payload}\n\n`;
  }

  /** Reply text/pieces/usage shared by both protocols. */
  function plan(ctx, rule, toolIdPrefix) {
    const body = ctx.rec.body;
    const r = rule || {};
    const n = r.chunks !== undefined ? r.chunks : defaults.chunks;
    let text;
    let extend = false;
    if (r.content !== undefined) text = r.content;
    else if (r.toolCalls && r.toolCalls.length) text = '';
    else if (defaults.content !== undefined) {
      text = defaults.content;
      extend = true;
    } else {
      const u = lastUserText(body);
      text = u === '' ? DEFAULT_REPLY : `echo: ${u}`;
      extend = true;
    }
    // A model that continues a prefill: a trailing assistant message that starts the reply gets only the rest.
    const prefill = (r.continuePrefill !== undefined ? r.continuePrefill : defaults.continuePrefill) ? trailingAssistantText(body) : '';
    if (prefill && text.startsWith(prefill)) {
      text = text.slice(prefill.length);
      extend = false;
    }
    const split = piecesFor(text, n, extend);
    const thinking = r.thinking ? { text: r.thinking.text || '', signature: r.thinking.signature || DEFAULT_SIGNATURE } : undefined;
    const thinkingPieces = thinking ? piecesFor(thinking.text, n, false) : undefined;
    const tools = normalizeToolCalls(r.toolCalls, ctx.id, toolIdPrefix);
    const argN = n !== undefined ? n : 4;
    const usage = r.usage || {};
    let output = usage.output;
    if (output === undefined) {
      output = tokensOf(split.text) + (thinking ? tokensOf(thinking.text) : 0);
      if (tools) for (const t of tools) output += tokensOf(t.name) + tokensOf(t.argsJson);
      output = Math.max(1, output);
    }
    const input = usage.input !== undefined ? usage.input : estimateInputTokens(body);
    return { n, argN, split, thinking, thinkingPieces, tools, input, output, stopReason: r.stopReason };
  }

  function modelOf(rec) {
    return rec.model !== undefined ? rec.model : 'unknown';
  }

  // ---- OpenAI ----------------------------------------------------------------------------------

  function openaiChat(ctx, res, rule) {
    const rec = ctx.rec;
    const body = rec.body;
    if (body === null || typeof body !== 'object' || Array.isArray(body)) {
      return sendError(res, rec, 400, rule, undefined, 'We could not parse the JSON body of your request.');
    }
    const p = plan(ctx, rule, 'call_fake');
    const id = `chatcmpl-fake${ctx.id}`;
    const created = Math.floor(Date.now() / 1000);
    const model = modelOf(rec);
    const tools = p.tools;
    const finish = p.stopReason !== undefined ? TO_OPENAI_FINISH[p.stopReason] || p.stopReason : tools ? 'tool_calls' : 'stop';
    const usage = { prompt_tokens: p.input, completion_tokens: p.output, total_tokens: p.input + p.output };

    if (!rec.stream) {
      // String template instead of JSON.stringify of a nested object: this is the benchmark hot path.
      let message = `{"role":"assistant","content":${p.split.text === '' && tools ? 'null' : p.split.textJson},"refusal":null,"annotations":[]`;
      if (p.thinking) message += `,"reasoning_content":${p.thinkingPieces.textJson}`;
      if (tools) {
        const calls = tools.map((t) => ({ id: t.id, type: 'function', function: { name: t.name, arguments: t.argsJson } }));
        message += `,"tool_calls":${JSON.stringify(calls)}`;
      }
      const out =
        `{"id":"${id}","object":"chat.completion","created":${created},"model":${JSON.stringify(model)},` +
        `"choices":[{"index":0,"message":${message}},"logprobs":null,"finish_reason":${JSON.stringify(finish)}}],` +
        `"usage":{"prompt_tokens":${usage.prompt_tokens},"completion_tokens":${usage.completion_tokens},"total_tokens":${usage.total_tokens}},` +
        `"service_tier":"default","system_fingerprint":"fp_fake"}`;
      return sendNonStream(ctx, res, rule, out);
    }

    const includeUsage = !!(body.stream_options && body.stream_options.include_usage);
    const usageNull = includeUsage ? ',"usage":null' : '';
    const prefix = `{"id":"${id}","object":"chat.completion.chunk","created":${created},"model":${JSON.stringify(model)},"service_tier":"default","system_fingerprint":"fp_fake","choices":`;
    const head = `data: ${prefix}[{"index":0,"delta":`;
    const tail = `,"logprobs":null,"finish_reason":null}]${usageNull}}\n\n`;
    const batches = [
      head + (p.split.text === '' && tools ? '{"role":"assistant","content":null,"refusal":null}' : '{"role":"assistant","content":"","refusal":null}') + tail,
    ];
    if (p.thinkingPieces) for (const pj of p.thinkingPieces.json) batches.push(`${head}{"reasoning_content":${pj}}${tail}`);
    for (const pj of p.split.json) batches.push(`${head}{"content":${pj}}${tail}`);
    if (tools) {
      for (let i = 0; i < tools.length; i++) {
        const t = tools[i];
        batches.push(
          `${head}{"tool_calls":[{"index":${i},"id":${JSON.stringify(t.id)},"type":"function","function":{"name":${JSON.stringify(t.name)},"arguments":""}}]}${tail}`,
        );
        for (const piece of splitEven(t.argsJson, p.argN)) {
          batches.push(`${head}{"tool_calls":[{"index":${i},"function":{"arguments":${JSON.stringify(piece)}}}]}${tail}`);
        }
      }
    }
    let end = `${head}{},"logprobs":null,"finish_reason":${JSON.stringify(finish)}}]${usageNull}}\n\n`;
    if (includeUsage) end += `data: ${prefix}[],"usage":${JSON.stringify(usage)}}\n\n`;
    end += 'data: [DONE]\n\n';
    batches[batches.length - 1] += end;
    streamBatches(ctx, res, rule, batches);
  }

  // ---- OpenAI Responses ------------------------------------------------------------------------

  /** `POST /v1/responses` (what Codex speaks): a `message` item with the text, `function_call` items for tool calls. */
  function openaiResponses(ctx, res, rule) {
    const rec = ctx.rec;
    const body = rec.body;
    if (body === null || typeof body !== 'object' || Array.isArray(body)) {
      return sendError(res, rec, 400, rule, undefined, 'We could not parse the JSON body of your request.');
    }
    const p = plan(ctx, rule, 'call_fake');
    const id = `resp_fake${ctx.id}`;
    const created = Math.floor(Date.now() / 1000);
    const model = modelOf(rec);
    const tools = p.tools;
    const withText = p.split.text !== '' || !tools;
    const msgId = `msg_fake${ctx.id}`;
    const usage = {
      input_tokens: p.input,
      input_tokens_details: { cached_tokens: 0 },
      output_tokens: p.output,
      output_tokens_details: { reasoning_tokens: 0 },
      total_tokens: p.input + p.output,
    };
    const items = [];
    if (withText)
      items.push({
        id: msgId,
        type: 'message',
        status: 'completed',
        role: 'assistant',
        content: [{ type: 'output_text', text: p.split.text, annotations: [] }],
      });
    if (tools)
      for (const t of tools) items.push({ id: `fc_${t.id}`, type: 'function_call', status: 'completed', call_id: t.id, name: t.name, arguments: t.argsJson });
    const response = (status, output) => ({ id, object: 'response', created_at: created, status, model, output, usage: status === 'completed' ? usage : null });
    if (!rec.stream) return sendNonStream(ctx, res, rule, JSON.stringify(response('completed', items)));

    let seq = 0;
    const ev = (type, data) => `event: ${type}\ndata: ${JSON.stringify({ type, sequence_number: seq++, ...data })}\n\n`;
    const batches = [ev('response.created', { response: response('in_progress', []) }) + ev('response.in_progress', { response: response('in_progress', []) })];
    const add = (s) => {
      batches[batches.length - 1] += s;
    };
    let index = 0;
    if (withText) {
      add(ev('response.output_item.added', { output_index: index, item: { ...items[0], status: 'in_progress', content: [] } }));
      add(
        ev('response.content_part.added', { item_id: msgId, output_index: index, content_index: 0, part: { type: 'output_text', text: '', annotations: [] } }),
      );
      for (const piece of p.split.pieces)
        batches.push(ev('response.output_text.delta', { item_id: msgId, output_index: index, content_index: 0, delta: piece }));
      add(ev('response.output_text.done', { item_id: msgId, output_index: index, content_index: 0, text: p.split.text }));
      add(ev('response.content_part.done', { item_id: msgId, output_index: index, content_index: 0, part: items[0].content[0] }));
      add(ev('response.output_item.done', { output_index: index, item: items[0] }));
      index++;
    }
    if (tools) {
      for (const item of items.filter((i) => i.type === 'function_call')) {
        add(ev('response.output_item.added', { output_index: index, item: { ...item, status: 'in_progress', arguments: '' } }));
        for (const piece of splitEven(item.arguments, p.argN))
          batches.push(ev('response.function_call_arguments.delta', { item_id: item.id, output_index: index, delta: piece }));
        add(ev('response.function_call_arguments.done', { item_id: item.id, output_index: index, arguments: item.arguments }));
        add(ev('response.output_item.done', { output_index: index, item }));
        index++;
      }
    }
    add(ev('response.completed', { response: response('completed', items) }));
    streamBatches(ctx, res, rule, batches);
  }

  // ---- Anthropic -------------------------------------------------------------------------------

  function anthropicMessages(ctx, res, rule) {
    const rec = ctx.rec;
    const body = rec.body;
    if (body === null || typeof body !== 'object' || Array.isArray(body)) {
      return sendError(res, rec, 400, rule, undefined, 'There was an issue with your request body: invalid JSON');
    }
    const p = plan(ctx, rule, 'toolu_fake');
    const id = `msg_fake${ctx.id}`;
    const model = modelOf(rec);
    const tools = p.tools;
    const stop = p.stopReason !== undefined ? TO_ANTHROPIC_STOP[p.stopReason] || p.stopReason : tools ? 'tool_use' : 'end_turn';
    const withText = p.split.text !== '' || !tools;

    if (!rec.stream) {
      const blocks = [];
      if (p.thinking) blocks.push(JSON.stringify({ type: 'thinking', thinking: p.thinking.text, signature: p.thinking.signature }));
      if (withText) blocks.push(`{"type":"text","text":${p.split.textJson}}`);
      if (tools) for (const t of tools) blocks.push(JSON.stringify({ type: 'tool_use', id: t.id, name: t.name, input: t.input }));
      const out =
        `{"id":"${id}","type":"message","role":"assistant","model":${JSON.stringify(model)},"content":[${blocks.join(',')}],` +
        `"stop_reason":${JSON.stringify(stop)},"stop_sequence":null,"stop_details":null,"container":null,` +
        `"usage":{"input_tokens":${p.input},"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"output_tokens":${p.output},"service_tier":"standard"}}`;
      return sendNonStream(ctx, res, rule, out);
    }

    const batches = [
      `event: message_start\ndata: {"type":"message_start","message":{"id":"${id}","type":"message","role":"assistant","model":${JSON.stringify(model)},"content":[],"stop_reason":null,"stop_sequence":null,"stop_details":null,"container":null,"usage":{"input_tokens":${p.input},"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"output_tokens":1,"service_tier":"standard"}}}\n\n`,
    ];
    let index = 0;
    let pinged = false;
    const add = (s) => {
      batches[batches.length - 1] += s;
    };
    const startBlock = (blockJson) => {
      add(`event: content_block_start\ndata: {"type":"content_block_start","index":${index},"content_block":${blockJson}}\n\n`);
      if (!pinged) {
        pinged = true;
        add('event: ping\ndata: {"type": "ping"}\n\n');
      }
    };
    const delta = (deltaJson) => {
      batches.push(`event: content_block_delta\ndata: {"type":"content_block_delta","index":${index},"delta":${deltaJson}}\n\n`);
    };
    const stopBlock = () => {
      add(`event: content_block_stop\ndata: {"type":"content_block_stop","index":${index}}\n\n`);
      index++;
    };
    if (p.thinking) {
      startBlock('{"type":"thinking","thinking":"","signature":""}');
      for (const pj of p.thinkingPieces.json) delta(`{"type":"thinking_delta","thinking":${pj}}`);
      delta(`{"type":"signature_delta","signature":${JSON.stringify(p.thinking.signature)}}`);
      stopBlock();
    }
    if (withText) {
      startBlock('{"type":"text","text":""}');
      for (const pj of p.split.json) delta(`{"type":"text_delta","text":${pj}}`);
      stopBlock();
    }
    if (tools) {
      for (const t of tools) {
        startBlock(`{"type":"tool_use","id":${JSON.stringify(t.id)},"name":${JSON.stringify(t.name)},"input":{}}`);
        for (const piece of splitEven(t.argsJson, p.argN)) delta(`{"type":"input_json_delta","partial_json":${JSON.stringify(piece)}}`);
        stopBlock();
      }
    }
    add(
      `event: message_delta\ndata: {"type":"message_delta","delta":{"stop_reason":${JSON.stringify(stop)},"stop_sequence":null,"stop_details":null},"usage":{"output_tokens":${p.output}}}\n\n` +
        'event: message_stop\ndata: {"type":"message_stop"}\n\n',
    );
    streamBatches(ctx, res, rule, batches);
  }

  // ---- writers ---------------------------------------------------------------------------------

  function sendNonStream(ctx, res, rule, out) {
    if (rule !== undefined) {
      const partialMode = rule.hangAfterChunks !== undefined ? 'hang' : rule.dropAfterChunks !== undefined ? 'drop' : undefined;
      if (partialMode !== undefined) {
        // Headers promise the full body; only the first half arrives.
        const h = baseHeaders(ctx.rec, 'application/json');
        h['content-length'] = Buffer.byteLength(out);
        res.writeHead(200, withRuleHeaders(h, rule));
        finishPartial(ctx, res, partialMode, out.slice(0, Math.max(1, out.length >> 1)));
        return;
      }
      if (rule.errorAfterChunks !== undefined) return sendError(res, ctx.rec, 500, rule, rule.errorBody);
    }
    sendJson(res, ctx.rec, 200, out, rule);
  }

  function finishPartial(ctx, res, mode, data) {
    if (mode === 'hang') {
      res.write(data);
      return;
    }
    ctx.dropped = true;
    res.write(data, () => {
      if (res.socket) res.socket.destroy();
    });
  }

  /**
   * batches[0] is the preamble; every later batch starts with exactly one delta frame (followed by
   * the non-delta frames up to the next delta). Batch 0 and 1 go out together (first token), then one
   * batch per chunkIntervalMs.
   */
  function streamBatches(ctx, res, rule, batches) {
    const r = rule || {};
    const interval = r.chunkIntervalMs !== undefined ? r.chunkIntervalMs : defaults.chunkIntervalMs;
    let last = batches.length - 1;
    let mode = 'end';
    if (r.hangAfterChunks !== undefined) {
      mode = 'hang';
      last = Math.min(last, r.hangAfterChunks);
    } else if (r.dropAfterChunks !== undefined) {
      mode = 'drop';
      last = Math.min(last, r.dropAfterChunks);
    } else if (r.errorAfterChunks !== undefined) {
      mode = 'error';
      last = Math.min(last, r.errorAfterChunks);
    }
    const finish = (data) => {
      if (mode === 'end') res.end(data);
      else if (mode === 'error') res.end(data + midStreamErrorFrame(ctx.rec, r));
      else finishPartial(ctx, res, mode, data);
    };
    const h = baseHeaders(ctx.rec, SSE_HEADERS_BASE['content-type']);
    h['cache-control'] = SSE_HEADERS_BASE['cache-control'];
    res.writeHead(200, withRuleHeaders(h, rule));

    if (!(interval > 0)) {
      let all = '';
      for (let i = 0; i <= last; i++) all += batches[i];
      finish(all);
      return;
    }
    let i = last >= 1 ? 2 : 1;
    const first = last >= 1 ? batches[0] + batches[1] : batches[0];
    if (i > last) {
      finish(first);
      return;
    }
    res.write(first);
    const tick = () => {
      ctx.timer = null;
      if (res.destroyed) return;
      const b = batches[i++];
      if (i > last) finish(b);
      else {
        res.write(b);
        ctx.timer = realSetTimeout(tick, interval);
      }
    };
    ctx.timer = realSetTimeout(tick, interval);
  }

  // -------------------------------------------------------------------------------------------

  const server = http.createServer(onRequest);
  server.keepAliveTimeout = 120_000;
  server.headersTimeout = 121_000;
  server.requestTimeout = 0;
  server.maxRequestsPerSocket = 0;
  server.on('connection', (socket) => {
    socket.setNoDelay(true);
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });

  await new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port || 0, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const addr = server.address();
  const port = typeof addr === 'object' && addr !== null ? addr.port : 0;
  const urlHost = host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host.includes(':') ? `[${host}]` : host;

  /** @type {import('./fake-upstream').FakeUpstream} */
  const api = {
    url: `http://${urlHost}:${port}`,
    port,
    requests,
    get requestCount() {
      return requestCount;
    },
    get activeRequests() {
      return active;
    },
    script(rule) {
      if (rule === null || typeof rule !== 'object') throw new TypeError('script(rule): rule must be an object');
      const times = rule.times === undefined ? 1 : rule.times;
      if (!(times > 0)) throw new RangeError(`script(rule): times must be > 0 (got ${times})`);
      rules.push({ rule, remaining: times });
    },
    reset() {
      rules.length = 0;
      requests.length = 0;
      requestCount = 0;
      models = buildModelCache(initialModels);
    },
    setModels(ids) {
      models = buildModelCache(ids);
    },
    waitFor(pred, timeoutMs = 2000) {
      if (closing) return Promise.reject(new Error('fake upstream is closed'));
      try {
        if (pred(api)) return Promise.resolve();
      } catch (err) {
        return Promise.reject(err);
      }
      return new Promise((resolve, reject) => {
        const w = { pred, resolve, reject, timer: null };
        w.timer = realSetTimeout(() => {
          waiters.delete(w);
          reject(new Error(`fake upstream: waitFor timed out after ${timeoutMs} ms`));
        }, timeoutMs);
        waiters.add(w);
      });
    },
    waitForRequests(n, timeoutMs = 2000) {
      return api.waitFor(() => requestCount >= n, timeoutMs).then(() => requests);
    },
    close() {
      if (closePromise) return closePromise;
      closing = true;
      rules.length = 0;
      for (const w of waiters) {
        realClearTimeout(w.timer);
        w.reject(new Error('fake upstream closed'));
      }
      waiters.clear();
      closePromise = new Promise((resolve) => {
        server.close(() => resolve());
        for (const s of sockets) s.destroy();
        sockets.clear();
      });
      return closePromise;
    },
  };
  return api;
}

function ruleMatches(match, rec, completion) {
  if (match === undefined) return completion;
  if (typeof match === 'string') return rec.model === match;
  if (typeof match === 'function') return !!match(rec);
  if (match.path !== undefined) {
    if (typeof match.path === 'string' ? rec.path !== match.path : !match.path.test(rec.path)) return false;
  } else if (!completion) {
    return false;
  }
  if (match.model !== undefined && rec.model !== match.model) return false;
  if (match.stream !== undefined && rec.stream !== match.stream) return false;
  if (match.protocol !== undefined && rec.protocol !== match.protocol) return false;
  if (match.method !== undefined && rec.method !== match.method) return false;
  return true;
}

exports.startFakeUpstream = startFakeUpstream;
exports.DEFAULT_MODELS = DEFAULT_MODELS;
exports.DEFAULT_REPLY = DEFAULT_REPLY;
