/**
 * A scriptable, OpenAI-compatible HTTP server for tests. Tests never call a real model
 * provider: they point the `openai` SDK at `fake.baseURL` and script, per model name,
 * what each request gets back (answers, JSON, malformed bodies, HTTP errors, hangs,
 * socket resets, latency).
 *
 *   const fake = await startFakeOpenAI();
 *   fake.script('gpt-x', [{ kind: 'status', status: 429, retryAfter: 0.01 }, { kind: 'answer', content: 'ok' }]);
 *   const client = new OpenAI({ baseURL: fake.baseURL, apiKey: 'test', maxRetries: 1 });
 *   ...
 *   expect(fake.requests[0]?.messages).toEqual([...]);
 *   await fake.close();
 *
 * Routes (all under /v1):
 *   POST /v1/chat/completions  scripted per `model` (queue, then per-model default, then
 *                              the global default, which echoes `[<model>] <last user text>`).
 *                              `stream: true` gets Server-Sent Events for content behaviours.
 *   POST /v1/embeddings        deterministic vectors from a hash of each input; base64
 *                              (Float32 little-endian) or float arrays per `encoding_format`.
 *                              Scripted behaviours for the embedding model are consumed too:
 *                              faults (status, hang, reset, malformed-json) and delays apply;
 *                              content behaviours just yield the normal embeddings.
 *   GET  /v1/models[/:id]      known models (constructor `models`, scripted, defaulted, seen).
 *   anything else              404 with an OpenAI-style error body.
 * Every request, whatever its route, is appended to `requests`, with the usage a chat
 * completion reported (`usage`) and whether the client hung up before the answer
 * (`abortedByClient`: a cancelled or timed-out call).
 */
import { createHash } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

export interface Usage {
  prompt_tokens: number;
  completion_tokens: number;
}

export interface ChatMessageLike {
  role?: string;
  content?: unknown;
  [key: string]: unknown;
}

export interface RecordedRequest {
  method: string;
  /** Path without the query string, e.g. `/v1/chat/completions`. */
  path: string;
  headers: http.IncomingHttpHeaders;
  /** Parsed JSON, the raw text if it did not parse, or `undefined` when empty. */
  body: unknown;
  /** `body.model` when it is a string, else `undefined`. */
  model: string | undefined;
  /** `body.messages` when it is an array (chat requests), else `undefined`. */
  messages: ChatMessageLike[] | undefined;
  /** `Date.now()` once the body was fully read. */
  receivedAt: number;
  /** The behaviour that answered it (after unwrapping `slow`), for debugging. */
  behaviour?: Behaviour['kind'] | 'default-echo' | 'not-found' | 'invalid';
  /** The usage reported in a chat completion's body (what a real provider would bill). */
  usage?: Usage;
  /** True once the client closed the connection before a response was written (aborted, timed out). */
  abortedByClient: boolean;
}

export type Behaviour =
  | {
      kind: 'answer';
      content: string | ((request: RecordedRequest) => string);
      delayMs?: number;
      usage?: Usage;
      finishReason?: string;
    }
  | { kind: 'json'; value: unknown; delayMs?: number; usage?: Usage; finishReason?: string }
  /** HTTP 200, `content-type: application/json`, body that is not JSON. */
  | { kind: 'malformed-json'; delayMs?: number }
  /** A valid completion whose `content` is broken JSON text (default `{"tensions": [`). */
  | { kind: 'malformed-content'; content?: string; delayMs?: number }
  | {
      kind: 'status';
      status: number;
      /** Seconds, sent as `Retry-After` (fractions allowed: the SDK parses a float). */
      retryAfter?: number;
      /** Milliseconds, sent as `retry-after-ms` (read by the openai SDK before Retry-After). */
      retryAfterMs?: number;
      /** Replaces the whole default `{ error: { message, type, code } }` body; strings are sent raw. */
      body?: unknown;
      message?: string;
      headers?: Record<string, string>;
      delayMs?: number;
    }
  /** Never answers; the socket stays open until the client gives up or the server closes. */
  | { kind: 'hang' }
  /** Destroys the socket without writing a response. */
  | { kind: 'reset'; delayMs?: number }
  | { kind: 'slow'; delayMs: number; then: Behaviour };

export interface FakeOpenAIOptions {
  /** Default embedding dimensions (a request's `dimensions` wins). Default 8. */
  embeddingDims?: number;
  /** Models listed by `GET /v1/models` in addition to scripted/defaulted/seen ones. */
  models?: string[];
  /** Replaces the global echo default for every model without a queue or per-model default. */
  defaultBehaviour?: Behaviour;
  /** Per-model defaults installed at start (and restored by `reset()`). */
  defaults?: Record<string, Behaviour>;
  /**
   * Waits out a behaviour's positive `delayMs` (default: a timer that `close()` cuts short).
   * Tests inject their own to see which delays were asked for and when they end, with no clock.
   */
  sleep?: (ms: number) => Promise<void>;
}

export interface FakeOpenAI {
  /** `http://127.0.0.1:PORT/v1`, for `new OpenAI({ baseURL })`. */
  readonly baseURL: string;
  readonly port: number;
  /** Every received request, in arrival order (after its body was read). */
  readonly requests: RecordedRequest[];
  /** Queue behaviours for `model`, consumed one per request (appended to any existing queue). */
  script(model: string, behaviours: Behaviour[]): void;
  /** Answer for `model` when its queue is empty; `undefined` removes the per-model default. */
  setDefault(model: string, behaviour: Behaviour | undefined): void;
  /** Number of recorded requests (any route) whose body named `model`. */
  counts(model: string): number;
  /** Recorded requests whose body named `model`. */
  requestsFor(model: string): RecordedRequest[];
  /** Number of scripted behaviours still queued for `model`. */
  pending(model: string): number;
  /** Clears queues, recorded requests and `setDefault` changes (restores constructor defaults). */
  reset(): void;
  /** Stops the server, destroying every open socket (hanging ones included). Idempotent. */
  close(): Promise<void>;
}

const DEFAULT_EMBEDDING_DIMS = 8;
const DEFAULT_MALFORMED_CONTENT = '{"tensions": [';

/** The echo every model gets by default: `[<model>] ` + the last user message's first 80 chars. */
export function defaultEcho(request: Pick<RecordedRequest, 'model' | 'messages'>): string {
  const lastUser = [...(request.messages ?? [])].reverse().find((m) => m.role === 'user');
  return `[${request.model ?? ''}] ${messageText(lastUser?.content).slice(0, 80)}`;
}

/**
 * The deterministic embedding the fake returns for `text`: `dims` values derived from
 * SHA-256 of the text, L2-normalised and rounded to float32, so base64 and float
 * encodings decode to exactly the same numbers.
 */
export function fakeEmbedding(text: string, dims: number = DEFAULT_EMBEDDING_DIMS): number[] {
  const raw: number[] = [];
  for (let block = 0; raw.length < dims; block++) {
    const digest = createHash('sha256').update(`${block}\u0000${text}`).digest();
    for (let offset = 0; offset + 4 <= digest.length && raw.length < dims; offset += 4) {
      raw.push(digest.readUInt32LE(offset) / 0xffffffff - 0.5);
    }
  }
  const norm = Math.sqrt(raw.reduce((sum, v) => sum + v * v, 0)) || 1;
  return raw.map((v) => Math.fround(v / norm));
}

/** Float32 little-endian bytes, base64-encoded: what OpenAI sends for `encoding_format: 'base64'`. */
export function encodeEmbeddingBase64(vector: number[]): string {
  const buffer = Buffer.alloc(vector.length * 4);
  vector.forEach((v, i) => buffer.writeFloatLE(v, i * 4));
  return buffer.toString('base64');
}

function messageText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) {
    return content
      .map((part) => (part && typeof part === 'object' && typeof (part as { text?: unknown }).text === 'string' ? (part as { text: string }).text : ''))
      .join('');
  }
  return content === undefined || content === null ? '' : JSON.stringify(content);
}

function estimateTokens(text: string): number {
  return Math.max(1, Math.ceil(text.length / 4));
}

const ERROR_TYPES: Record<number, { type: string; code: string | null; message: string }> = {
  400: { type: 'invalid_request_error', code: null, message: 'Bad request (scripted by fake-openai).' },
  401: { type: 'invalid_request_error', code: 'invalid_api_key', message: 'Incorrect API key provided (scripted by fake-openai).' },
  403: { type: 'invalid_request_error', code: 'permission_denied', message: 'Forbidden (scripted by fake-openai).' },
  404: { type: 'invalid_request_error', code: 'not_found', message: 'Not found (scripted by fake-openai).' },
  429: { type: 'requests', code: 'rate_limit_exceeded', message: 'Rate limit reached (scripted by fake-openai).' },
  500: { type: 'server_error', code: null, message: 'The server had an error (scripted by fake-openai).' },
  503: { type: 'server_error', code: 'service_unavailable', message: 'The server is overloaded (scripted by fake-openai).' },
};

function errorBody(status: number, message?: string, code?: string | null): { error: Record<string, unknown> } {
  const known = ERROR_TYPES[status] ?? {
    type: status >= 500 ? 'server_error' : 'invalid_request_error',
    code: null,
    message: `HTTP ${status} (scripted by fake-openai).`,
  };
  return { error: { message: message ?? known.message, type: known.type, param: null, code: code ?? known.code } };
}

let idCounter = 0;
function nextId(prefix: string): string {
  idCounter += 1;
  return `${prefix}-fake${idCounter.toString().padStart(6, '0')}`;
}

export async function startFakeOpenAI(options: FakeOpenAIOptions = {}): Promise<FakeOpenAI> {
  const embeddingDims = options.embeddingDims ?? DEFAULT_EMBEDDING_DIMS;
  const globalDefault = options.defaultBehaviour;
  const queues = new Map<string, Behaviour[]>();
  const defaults = new Map<string, Behaviour>(Object.entries(options.defaults ?? {}));
  const requests: RecordedRequest[] = [];
  const sockets = new Set<Socket>();
  const timers = new Set<{ timer: NodeJS.Timeout; resolve: () => void }>();
  let closed = false;
  let closing: Promise<void> | undefined;

  /** Resolves after `ms`, or immediately once the server closes. */
  function sleep(ms: number): Promise<void> {
    if (!(ms > 0) || closed) return Promise.resolve();
    if (options.sleep) return options.sleep(ms);
    return new Promise((resolve) => {
      const entry = {
        resolve,
        timer: setTimeout(() => {
          timers.delete(entry);
          resolve();
        }, ms),
      };
      timers.add(entry);
    });
  }

  function nextBehaviour(model: string | undefined): Behaviour | undefined {
    if (model !== undefined) {
      const queue = queues.get(model);
      const scripted = queue?.shift();
      if (scripted) return scripted;
      const perModel = defaults.get(model);
      if (perModel) return perModel;
    }
    return globalDefault;
  }

  function knownModels(): string[] {
    const names = new Set<string>(options.models ?? []);
    for (const name of queues.keys()) names.add(name);
    for (const name of defaults.keys()) names.add(name);
    for (const r of requests) if (r.model !== undefined) names.add(r.model);
    return [...names].sort();
  }

  function alive(res: http.ServerResponse): boolean {
    return !closed && !res.destroyed && !res.writableEnded && !res.socket?.destroyed;
  }

  function sendJson(res: http.ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
    if (!alive(res)) return;
    const text = typeof body === 'string' ? body : JSON.stringify(body);
    res.writeHead(status, {
      'content-type': 'application/json',
      'content-length': Buffer.byteLength(text).toString(),
      ...headers,
    });
    res.end(text);
  }

  function sendError(res: http.ServerResponse, status: number, message: string, code: string | null): void {
    sendJson(res, status, errorBody(status, message, code));
  }

  /**
   * Unwraps `slow` and applies `delayMs`, then runs the fault behaviours shared by every
   * route. Returns the content behaviour left to render, or `undefined` when handled.
   */
  async function applyCommon(
    behaviour: Behaviour,
    record: RecordedRequest,
    req: http.IncomingMessage,
    res: http.ServerResponse,
  ): Promise<Extract<Behaviour, { kind: 'answer' | 'json' | 'malformed-content' }> | undefined> {
    let current = behaviour;
    while (current.kind === 'slow') {
      await sleep(current.delayMs);
      current = current.then;
    }
    record.behaviour = current.kind;
    if (current.kind === 'hang') return undefined; // leave the socket open; close() destroys it
    await sleep(current.delayMs ?? 0);
    if (!alive(res)) return undefined;
    switch (current.kind) {
      case 'reset':
        req.socket.destroy();
        return undefined;
      case 'malformed-json':
        sendJson(res, 200, '{"id": "chatcmpl-broken", "object": "chat.completion", "choices": [{"message": ');
        return undefined;
      case 'status': {
        const headers: Record<string, string> = { ...current.headers };
        if (current.retryAfter !== undefined) headers['retry-after'] = String(current.retryAfter);
        if (current.retryAfterMs !== undefined) headers['retry-after-ms'] = String(current.retryAfterMs);
        const body = current.body !== undefined ? current.body : errorBody(current.status, current.message);
        sendJson(res, current.status, body, headers);
        return undefined;
      }
      default:
        return current;
    }
  }

  async function handleChat(record: RecordedRequest, req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const body = record.body as Record<string, unknown> | undefined;
    if (!body || typeof body !== 'object' || record.model === undefined || record.messages === undefined) {
      record.behaviour = 'invalid';
      sendError(res, 400, 'fake-openai: chat completions need a JSON body with `model` and `messages`.', 'invalid_request');
      return;
    }
    const scripted = nextBehaviour(record.model);
    let behaviour: Extract<Behaviour, { kind: 'answer' | 'json' | 'malformed-content' }> | undefined;
    if (scripted) {
      behaviour = await applyCommon(scripted, record, req, res);
      if (!behaviour) return;
    } else {
      record.behaviour = 'default-echo';
    }

    let content: string;
    let usage: Usage | undefined;
    let finishReason = 'stop';
    try {
      if (!behaviour) content = defaultEcho(record);
      else if (behaviour.kind === 'answer') {
        content = typeof behaviour.content === 'function' ? behaviour.content(record) : behaviour.content;
        usage = behaviour.usage;
        finishReason = behaviour.finishReason ?? 'stop';
      } else if (behaviour.kind === 'json') {
        content = JSON.stringify(behaviour.value);
        usage = behaviour.usage;
        finishReason = behaviour.finishReason ?? 'stop';
      } else content = behaviour.content ?? DEFAULT_MALFORMED_CONTENT;
    } catch (error) {
      sendError(res, 500, `fake-openai: scripted content function threw: ${String(error)}`, 'fake_script_error');
      return;
    }

    const promptText = record.messages.map((m) => messageText(m.content)).join('\n');
    const promptTokens = usage?.prompt_tokens ?? estimateTokens(promptText);
    const completionTokens = usage?.completion_tokens ?? estimateTokens(content);
    const fullUsage = {
      prompt_tokens: promptTokens,
      completion_tokens: completionTokens,
      total_tokens: promptTokens + completionTokens,
    };
    record.usage = { prompt_tokens: promptTokens, completion_tokens: completionTokens };
    const id = nextId('chatcmpl');
    const created = Math.floor(Date.now() / 1000);

    if (body.stream === true) {
      if (!alive(res)) return;
      const includeUsage = (body.stream_options as { include_usage?: unknown } | undefined)?.include_usage === true;
      const chunk = (delta: Record<string, unknown>, finish: string | null) => ({
        id,
        object: 'chat.completion.chunk',
        created,
        model: record.model,
        choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }],
      });
      const events: unknown[] = [chunk({ role: 'assistant', content: '' }, null)];
      const pieceSize = Math.max(1, Math.ceil(content.length / 3));
      for (let i = 0; i < content.length; i += pieceSize) events.push(chunk({ content: content.slice(i, i + pieceSize) }, null));
      events.push(chunk({}, finishReason));
      if (includeUsage) {
        events.push({ id, object: 'chat.completion.chunk', created, model: record.model, choices: [], usage: fullUsage });
      }
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
      res.end(events.map((e) => `data: ${JSON.stringify(e)}\n\n`).join('') + 'data: [DONE]\n\n');
      return;
    }

    sendJson(res, 200, {
      id,
      object: 'chat.completion',
      created,
      model: record.model,
      choices: [
        {
          index: 0,
          message: { role: 'assistant', content, refusal: null },
          logprobs: null,
          finish_reason: finishReason,
        },
      ],
      usage: fullUsage,
    });
  }

  async function handleEmbeddings(record: RecordedRequest, req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const body = record.body as Record<string, unknown> | undefined;
    const input = body && typeof body === 'object' ? body.input : undefined;
    if (record.model === undefined || input === undefined) {
      record.behaviour = 'invalid';
      sendError(res, 400, 'fake-openai: embeddings need a JSON body with `model` and `input`.', 'invalid_request');
      return;
    }
    const scripted = nextBehaviour(record.model);
    if (scripted) {
      if (!(await applyCommon(scripted, record, req, res))) return;
    } else {
      record.behaviour = 'default-echo';
    }
    // A single string, an array of strings, a token array, or an array of token arrays.
    const inputs: unknown[] =
      typeof input === 'string' || (Array.isArray(input) && input.every((x) => typeof x === 'number')) ? [input] : Array.isArray(input) ? input : [input];
    const texts = inputs.map((x) => (typeof x === 'string' ? x : JSON.stringify(x)));
    const requestedDims = body?.dimensions;
    const dims = typeof requestedDims === 'number' && requestedDims > 0 ? requestedDims : embeddingDims;
    const base64 = body?.encoding_format === 'base64';
    const promptTokens = texts.reduce((sum, t) => sum + estimateTokens(t), 0);
    sendJson(res, 200, {
      object: 'list',
      data: texts.map((text, index) => {
        const vector = fakeEmbedding(text, dims);
        return { object: 'embedding', index, embedding: base64 ? encodeEmbeddingBase64(vector) : vector };
      }),
      model: record.model,
      usage: { prompt_tokens: promptTokens, total_tokens: promptTokens },
    });
  }

  async function handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    res.on('error', () => undefined);
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const raw = Buffer.concat(chunks).toString('utf8');
    let body: unknown = undefined;
    if (raw.length > 0) {
      try {
        body = JSON.parse(raw);
      } catch {
        body = raw;
      }
    }
    const objectBody = body && typeof body === 'object' && !Array.isArray(body) ? (body as Record<string, unknown>) : undefined;
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    const method = req.method ?? 'GET';
    const record: RecordedRequest = {
      method,
      path: url.pathname,
      headers: req.headers,
      body,
      model: typeof objectBody?.model === 'string' ? objectBody.model : undefined,
      messages: Array.isArray(objectBody?.messages) ? (objectBody.messages as ChatMessageLike[]) : undefined,
      receivedAt: Date.now(),
      abortedByClient: false,
    };
    requests.push(record);
    res.on('close', () => {
      if (!res.writableFinished) record.abortedByClient = true;
    });

    const pathname = url.pathname.replace(/\/+$/, '');
    if (method === 'POST' && pathname === '/v1/chat/completions') return handleChat(record, req, res);
    if (method === 'POST' && pathname === '/v1/embeddings') return handleEmbeddings(record, req, res);
    if (method === 'GET' && pathname === '/v1/models') {
      record.behaviour = 'default-echo';
      sendJson(res, 200, {
        object: 'list',
        data: knownModels().map((id) => ({ id, object: 'model', created: 0, owned_by: 'fake-openai' })),
      });
      return;
    }
    const modelMatch = /^\/v1\/models\/(.+)$/.exec(pathname);
    if (method === 'GET' && modelMatch?.[1] !== undefined) {
      const id = decodeURIComponent(modelMatch[1]);
      if (knownModels().includes(id)) {
        record.behaviour = 'default-echo';
        sendJson(res, 200, { id, object: 'model', created: 0, owned_by: 'fake-openai' });
        return;
      }
      record.behaviour = 'not-found';
      sendError(res, 404, `The model '${id}' does not exist`, 'model_not_found');
      return;
    }
    record.behaviour = 'not-found';
    sendError(res, 404, `Unknown request URL: ${method} ${url.pathname}.`, 'unknown_url');
  }

  const server = http.createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      if (alive(res)) sendError(res, 500, `fake-openai internal error: ${String(error)}`, 'fake_internal_error');
    });
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  server.on('clientError', (_error, socket) => socket.destroy());

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;

  return {
    baseURL: `http://127.0.0.1:${port}/v1`,
    port,
    requests,
    script(model, behaviours) {
      const queue = queues.get(model) ?? [];
      queue.push(...behaviours);
      queues.set(model, queue);
    },
    setDefault(model, behaviour) {
      if (behaviour) defaults.set(model, behaviour);
      else defaults.delete(model);
    },
    counts(model) {
      return requests.filter((r) => r.model === model).length;
    },
    requestsFor(model) {
      return requests.filter((r) => r.model === model);
    },
    pending(model) {
      return queues.get(model)?.length ?? 0;
    },
    reset() {
      queues.clear();
      requests.length = 0;
      defaults.clear();
      for (const [model, behaviour] of Object.entries(options.defaults ?? {})) defaults.set(model, behaviour);
    },
    close() {
      closing ??= new Promise<void>((resolve) => {
        closed = true;
        for (const entry of timers) {
          clearTimeout(entry.timer);
          entry.resolve();
        }
        timers.clear();
        server.close(() => resolve());
        server.closeAllConnections();
        for (const socket of sockets) socket.destroy();
      });
      return closing;
    },
  };
}
