/**
 * Proves the fake OpenAI-compatible server against the real `openai` SDK: every scripted
 * behaviour (answers, JSON, malformed bodies, HTTP errors with retries, hangs, resets,
 * latency), embeddings in both encodings, and request recording.
 */
import http from 'node:http';
import OpenAI, { APIConnectionError, APIConnectionTimeoutError, InternalServerError, RateLimitError } from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { defaultEcho, fakeEmbedding, startFakeOpenAI, type FakeOpenAI } from '../devkit/fake-openai.ts';

let fake: FakeOpenAI;

function client(overrides: Partial<ConstructorParameters<typeof OpenAI>[0]> = {}): OpenAI {
  return new OpenAI({ baseURL: fake.baseURL, apiKey: 'test', maxRetries: 0, timeout: 2_000, ...overrides });
}

/** Waits for a condition the server reaches on its own (an event, not a duration). */
async function until(condition: () => boolean): Promise<void> {
  while (!condition()) await new Promise((resolve) => setTimeout(resolve, 5));
}

function ask(model: string, content: string, c: OpenAI = client()) {
  return c.chat.completions.create({ model, messages: [{ role: 'user', content }] });
}

beforeAll(async () => {
  fake = await startFakeOpenAI({ models: ['listed-model'] });
});

afterAll(async () => {
  await fake.close();
});

beforeEach(() => {
  fake.reset();
});

describe('fake OpenAI server: chat completions', () => {
  it('answers with scripted content and usage', async () => {
    fake.script('m-answer', [{ kind: 'answer', content: 'hello there', usage: { prompt_tokens: 11, completion_tokens: 3 } }]);
    const completion = await ask('m-answer', 'hi');
    expect(completion.object).toBe('chat.completion');
    expect(completion.model).toBe('m-answer');
    expect(completion.id).toMatch(/^chatcmpl-/);
    expect(completion.choices[0]?.message).toMatchObject({ role: 'assistant', content: 'hello there' });
    expect(completion.choices[0]?.finish_reason).toBe('stop');
    expect(completion.usage).toMatchObject({ prompt_tokens: 11, completion_tokens: 3, total_tokens: 14 });
  });

  it('computes content from the request and default usage from lengths', async () => {
    fake.script('m-fn', [{ kind: 'answer', content: (request) => `saw ${request.messages?.length} messages` }]);
    const completion = await ask('m-fn', 'x'.repeat(40));
    expect(completion.choices[0]?.message.content).toBe('saw 1 messages');
    expect(completion.usage?.prompt_tokens).toBe(10);
    expect(completion.usage?.completion_tokens).toBe(Math.ceil('saw 1 messages'.length / 4));
  });

  it('consumes the queue in order, then the per-model default, then the global echo', async () => {
    fake.script('m-queue', [
      { kind: 'answer', content: 'first' },
      { kind: 'answer', content: 'second' },
    ]);
    expect(fake.pending('m-queue')).toBe(2);
    const c = client();
    expect((await ask('m-queue', 'a', c)).choices[0]?.message.content).toBe('first');
    expect((await ask('m-queue', 'b', c)).choices[0]?.message.content).toBe('second');
    const long = 'y'.repeat(120);
    expect((await ask('m-queue', long, c)).choices[0]?.message.content).toBe(`[m-queue] ${'y'.repeat(80)}`);
    fake.setDefault('m-queue', { kind: 'answer', content: 'fallback' });
    expect((await ask('m-queue', 'c', c)).choices[0]?.message.content).toBe('fallback');
    expect(fake.counts('m-queue')).toBe(4);
    expect(fake.pending('m-queue')).toBe(0);
  });

  it('echoes the last user message by default, deterministically', async () => {
    const completion = await client().chat.completions.create({
      model: 'm-echo',
      messages: [
        { role: 'system', content: 'be brief' },
        { role: 'user', content: 'first question' },
        { role: 'assistant', content: 'an answer' },
        { role: 'user', content: [{ type: 'text', text: 'second question' }] },
      ],
    });
    expect(completion.choices[0]?.message.content).toBe('[m-echo] second question');
    expect(defaultEcho(fake.requests[0]!)).toBe('[m-echo] second question');
  });

  it('returns JSON content for structured outputs', async () => {
    const value = { tensions: [{ a: 'x', b: 'y', strength: 0.5 }] };
    fake.script('m-json', [{ kind: 'json', value }]);
    const completion = await ask('m-json', 'extract');
    expect(JSON.parse(completion.choices[0]?.message.content ?? '')).toEqual(value);
  });

  it('returns a valid completion with broken JSON content', async () => {
    fake.script('m-badcontent', [{ kind: 'malformed-content' }]);
    const completion = await ask('m-badcontent', 'extract');
    const content = completion.choices[0]?.message.content ?? '';
    expect(content).toBe('{"tensions": [');
    expect(() => JSON.parse(content)).toThrow();
  });

  it('makes the SDK throw on a malformed JSON body', async () => {
    fake.script('m-malformed', [{ kind: 'malformed-json' }]);
    await expect(ask('m-malformed', 'hi')).rejects.toThrow();
    expect(fake.counts('m-malformed')).toBe(1);
  });

  it('retries a 429 honouring Retry-After, then succeeds', async () => {
    fake.script('m-429', [
      { kind: 'status', status: 429, retryAfter: 0.05 },
      { kind: 'answer', content: 'after retry' },
    ]);
    const completion = await ask('m-429', 'hi', client({ maxRetries: 1 }));
    expect(completion.choices[0]?.message.content).toBe('after retry');
    expect(fake.requests.length).toBe(2);
    const [first, second] = fake.requests;
    expect(second!.receivedAt - first!.receivedAt).toBeGreaterThanOrEqual(40);
    expect(second!.headers['x-stainless-retry-count']).toBe('1');
    expect(second!.messages).toEqual(first!.messages);
  });

  it('surfaces a 429 as RateLimitError with the OpenAI error body when retries are off', async () => {
    fake.script('m-429b', [{ kind: 'status', status: 429, retryAfter: 1 }]);
    const error = await ask('m-429b', 'hi').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RateLimitError);
    expect((error as RateLimitError).status).toBe(429);
    expect((error as RateLimitError).headers?.get('retry-after')).toBe('1');
    expect((error as RateLimitError).code).toBe('rate_limit_exceeded');
  });

  it('surfaces a 500 as InternalServerError', async () => {
    fake.script('m-500', [{ kind: 'status', status: 500 }]);
    const error = await ask('m-500', 'hi').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InternalServerError);
    expect((error as InternalServerError).status).toBe(500);
    expect((error as InternalServerError).type).toBe('server_error');
  });

  it('sends 400/401 with OpenAI error bodies and custom bodies verbatim', async () => {
    fake.script('m-4xx', [
      { kind: 'status', status: 401 },
      { kind: 'status', status: 400, body: { error: { message: 'custom', type: 'invalid_request_error', code: 'x' } } },
    ]);
    const c = client();
    await expect(ask('m-4xx', 'a', c)).rejects.toMatchObject({ status: 401, code: 'invalid_api_key' });
    await expect(ask('m-4xx', 'b', c)).rejects.toMatchObject({ status: 400, code: 'x', message: '400 custom' });
  });

  it('hangs until the client timeout fires', async () => {
    fake.script('m-hang', [{ kind: 'hang' }]);
    const error = await ask('m-hang', 'hi', client({ timeout: 200 })).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(APIConnectionTimeoutError);
    expect(fake.counts('m-hang')).toBe(1);
    // The client gave up on an open request: nothing was written before it closed the connection.
    const [hung] = fake.requestsFor('m-hang');
    await until(() => hung!.abortedByClient);
    expect(hung).toMatchObject({ behaviour: 'hang', abortedByClient: true });
  });

  it('resets the socket: the SDK throws a connection error', async () => {
    fake.script('m-reset', [{ kind: 'reset' }]);
    const error = await ask('m-reset', 'hi').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(APIConnectionError);
    expect(error).not.toBeInstanceOf(APIConnectionTimeoutError);
  });

  it('delays answers (delayMs and slow wrapper) until the delay is over, and answers others meanwhile', async () => {
    // An injected sleep: the test sees each delay asked for and decides when it ends (no clock).
    const asked: number[] = [];
    const release: Array<() => void> = [];
    const own = await startFakeOpenAI({ sleep: (ms) => new Promise<void>((resolve) => (asked.push(ms), release.push(resolve))) });
    try {
      own.script('m-slow', [
        { kind: 'answer', content: 'late', delayMs: 150 },
        { kind: 'slow', delayMs: 100, then: { kind: 'json', value: { ok: true } } },
      ]);
      own.script('m-now', [{ kind: 'answer', content: 'now' }]);
      const c = new OpenAI({ baseURL: own.baseURL, apiKey: 'test', maxRetries: 0, timeout: 60_000 });
      const order: string[] = [];
      const late = ask('m-slow', 'a', c).then((completion) => (order.push('late'), completion));
      await until(() => asked.length === 1);
      expect(asked).toEqual([150]);
      // While the delayed answer waits, a later request without delay is answered first.
      order.push((await ask('m-now', 'b', c)).choices[0]!.message.content!);
      release[0]!();
      expect((await late).choices[0]?.message.content).toBe('late');
      expect(order).toEqual(['now', 'late']);
      const slow = ask('m-slow', 'c', c);
      await until(() => asked.length === 2);
      expect(asked).toEqual([150, 100]);
      release[1]!();
      expect((await slow).choices[0]?.message.content).toBe('{"ok":true}');
    } finally {
      await own.close();
    }
  });

  it('streams content behaviours as server-sent events', async () => {
    fake.script('m-stream', [{ kind: 'answer', content: 'streamed answer text' }]);
    const stream = await client().chat.completions.create({
      model: 'm-stream',
      messages: [{ role: 'user', content: 'hi' }],
      stream: true,
      stream_options: { include_usage: true },
    });
    let text = '';
    let usage: OpenAI.CompletionUsage | null | undefined;
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta.content ?? '';
      usage = chunk.usage ?? usage;
    }
    expect(text).toBe('streamed answer text');
    expect(usage?.total_tokens).toBeGreaterThan(0);
  });
});

describe('fake OpenAI server: request recording', () => {
  it('records method, path, headers, body, model and messages in order', async () => {
    const messages = [
      { role: 'system' as const, content: 'You are the divergence engine.' },
      { role: 'user' as const, content: 'Find tensions between A and B.' },
    ];
    const c = client();
    const before = Date.now();
    await c.chat.completions.create({ model: 'm-rec', messages, temperature: 0 });
    await ask('m-other', 'second');
    expect(fake.requests).toHaveLength(2);
    const [first, second] = fake.requests;
    expect(first).toMatchObject({ method: 'POST', path: '/v1/chat/completions', model: 'm-rec', messages });
    expect(first!.body).toMatchObject({ model: 'm-rec', temperature: 0, messages });
    expect(first!.headers.authorization).toBe('Bearer test');
    expect(first!.receivedAt).toBeGreaterThanOrEqual(before);
    expect(second!.model).toBe('m-other');
    expect(second!.receivedAt).toBeGreaterThanOrEqual(first!.receivedAt);
    expect(fake.counts('m-rec')).toBe(1);
    expect(fake.requestsFor('m-other')).toEqual([second]);
  });

  it('reset() clears queues, requests and per-model defaults', async () => {
    fake.script('m-reset-state', [{ kind: 'answer', content: 'queued' }]);
    fake.setDefault('m-reset-state', { kind: 'answer', content: 'default' });
    await ask('m-reset-state', 'x');
    fake.script('m-reset-state', [{ kind: 'answer', content: 'never used' }]);
    fake.reset();
    expect(fake.requests).toHaveLength(0);
    expect(fake.pending('m-reset-state')).toBe(0);
    expect((await ask('m-reset-state', 'z')).choices[0]?.message.content).toBe('[m-reset-state] z');
  });
});

describe('fake OpenAI server: embeddings, models, unknown routes', () => {
  it('returns deterministic embeddings; SDK base64 default decodes to the float values', async () => {
    const c = client();
    const input = ['alpha', 'beta', 'alpha'];
    const viaBase64 = await c.embeddings.create({ model: 'emb', input });
    const viaFloat = await c.embeddings.create({ model: 'emb', input, encoding_format: 'float' });
    expect(fake.requests[0]!.body).toMatchObject({ encoding_format: 'base64' });
    expect(fake.requests[1]!.body).toMatchObject({ encoding_format: 'float' });
    const a = viaBase64.data.map((d) => d.embedding);
    const b = viaFloat.data.map((d) => d.embedding);
    expect(a).toEqual(b);
    expect(a[0]).toHaveLength(8);
    expect(a[0]).toEqual(a[2]);
    expect(a[0]).not.toEqual(a[1]);
    expect(a[0]).toEqual(fakeEmbedding('alpha'));
    expect(Math.hypot(...a[0]!)).toBeCloseTo(1, 5);
    expect(viaFloat.data.map((d) => d.index)).toEqual([0, 1, 2]);
    expect(viaFloat.usage.prompt_tokens).toBeGreaterThan(0);
  });

  it('embeds a single string and honours dimensions', async () => {
    const single = await client().embeddings.create({ model: 'emb', input: 'gamma', dimensions: 16 });
    expect(single.data).toHaveLength(1);
    expect(single.data[0]!.embedding).toEqual(fakeEmbedding('gamma', 16));
  });

  it('applies scripted faults to embeddings', async () => {
    fake.script('emb-faulty', [{ kind: 'status', status: 503 }]);
    await expect(client().embeddings.create({ model: 'emb-faulty', input: 'x' })).rejects.toMatchObject({ status: 503 });
  });

  it('lists known models', async () => {
    fake.setDefault('m-known', { kind: 'answer', content: 'x' });
    const ids: string[] = [];
    for await (const model of client().models.list()) ids.push(model.id);
    expect(ids).toEqual(expect.arrayContaining(['listed-model', 'm-known']));
    expect((await client().models.retrieve('listed-model')).id).toBe('listed-model');
  });

  it('answers unknown paths with a 404 OpenAI error body', async () => {
    const response = await fetch(`${fake.baseURL}/nope`, { method: 'POST', body: '{}' });
    expect(response.status).toBe(404);
    const body = (await response.json()) as { error: { message: string; type: string; code: string } };
    expect(body.error).toMatchObject({ type: 'invalid_request_error', code: 'unknown_url' });
    expect(fake.requests.at(-1)).toMatchObject({ method: 'POST', path: '/v1/nope', body: {} });
  });
});

describe('fake OpenAI server: close()', () => {
  it('destroys hanging sockets and resolves', async () => {
    const own = await startFakeOpenAI();
    own.script('m', [{ kind: 'hang' }]);
    const outcome = new Promise<string>((resolve) => {
      const req = http.request(`${own.baseURL}/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' } });
      req.on('response', () => resolve('response'));
      req.on('error', (error) => resolve(`error:${(error as NodeJS.ErrnoException).code ?? error.message}`));
      req.end(JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'hi' }] }));
    });
    while (own.requests.length === 0) await new Promise((r) => setTimeout(r, 5));
    // A hang never answers, so close() resolving at all shows it does not wait for open sockets.
    await own.close();
    expect(await outcome).toBe('error:ECONNRESET');
    await own.close(); // idempotent
  });
});
