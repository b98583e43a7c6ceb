/**
 * The question's embedding has a deadline (issue 43, part 4; providers/question-embedder.ts):
 * past it the caller stops waiting, while the request goes on and its late answer fills the
 * query cache (providers/embedder.ts `withQueryCache`), which never sends one text twice at once.
 * Fake timers: no wall clock.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { ProviderError } from '../core/ports/chat.ts';
import { EmbeddingDeadlineError, type Embedder } from '../core/ports/embedder.ts';
import { vectorsUnavailable } from '../core/search/vectors.ts';
import { withQueryCache } from '../providers/embedder.ts';
import { questionDeadlineOf, withQuestionDeadline } from '../providers/question-embedder.ts';
import { EmbeddingsConfigSchema } from '../schemas/embeddings.ts';
import { parseEmbeddingsConfig } from '../providers/embeddings-config.ts';

/** An embedder whose answers the test releases (or fails) one request at a time. */
function scriptedEmbedder() {
  const requests: { texts: string[]; answer: () => void; fail: (error: Error) => void }[] = [];
  const embedder: Embedder = {
    id: 'scripted@2',
    dims: 2,
    embed: (texts) =>
      new Promise((resolve, reject) => {
        requests.push({ texts: [...texts], answer: () => resolve(texts.map((_, index) => Float32Array.of(1, index))), fail: reject });
      }),
  };
  return { embedder, requests };
}

const AT = new Date('2026-03-01T12:00:00.000Z');

beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
});

describe('the deadline of a question embedding', () => {
  it('gives up at the deadline; the late answer fills the cache, and no second request is sent meanwhile', async () => {
    const { embedder: inner, requests } = scriptedEmbedder();
    const lines: string[] = [];
    const embedder = withQuestionDeadline(withQueryCache(inner), { deadlineMs: 400, now: () => AT, log: (line) => lines.push(line) });
    expect(embedder.deadlineMs).toBe(400);
    expect(embedder.lastQuestion).toBeUndefined();

    const first = embedder.embed(['where is the harbour?']).catch((error: unknown) => error);
    await vi.advanceTimersByTimeAsync(399);
    expect(requests).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(1);
    const error = await first;
    expect(error).toBeInstanceOf(EmbeddingDeadlineError);
    expect((error as Error).message).toBe('the embedding model did not answer within 400 ms');
    expect(embedder.lastQuestion).toEqual({
      vectors: 'unavailable',
      cause: 'timeout',
      reason: 'the embedding model did not answer within 400 ms',
      at: AT.toISOString(),
    });

    // Asked again while the first request is still out: it waits for that one, not a new one.
    const second = embedder.embed(['where is the harbour?']).catch((caught: unknown) => caught);
    await vi.advanceTimersByTimeAsync(400);
    expect(await second).toBeInstanceOf(EmbeddingDeadlineError);
    expect(requests.map((request) => request.texts)).toEqual([['where is the harbour?']]);

    // The answer comes late: it is kept, and the next ask is served from it at once.
    requests[0]!.answer();
    await vi.advanceTimersByTimeAsync(0);
    const [vector] = await embedder.embed(['where is the harbour?']);
    expect(Array.from(vector!)).toEqual([1, 0]);
    expect(requests).toHaveLength(1);
    expect(embedder.lastQuestion).toEqual({ vectors: 'used', at: AT.toISOString() });
    // One line when questions stop being embedded in time, one when they are again; not one per question.
    expect(lines).toEqual([
      'question embeddings unavailable (the embedding model did not answer within 400 ms): answering from the words alone until they come back',
      'question embeddings back: answering with both sides again',
    ]);
  });

  it('passes a failure on at once and keeps nothing of it: the next ask sends the text again', async () => {
    const { embedder: inner, requests } = scriptedEmbedder();
    const embedder = withQuestionDeadline(withQueryCache(inner), { deadlineMs: 400, now: () => AT });
    const first = embedder.embed(['bread']).catch((error: unknown) => error);
    requests[0]!.fail(new ProviderError('server_error', 'provider error 503', 503));
    expect(await first).toBeInstanceOf(ProviderError);
    expect(embedder.lastQuestion).toMatchObject({ vectors: 'unavailable', cause: 'error', reason: 'the embedding model failed: server_error (HTTP 503)' });

    const again = embedder.embed(['bread']);
    expect(requests).toHaveLength(2);
    requests[1]!.answer();
    expect(await again).toHaveLength(1);
    expect(embedder.lastQuestion?.vectors).toBe('used');
  });

  it('without a deadline (the embedded USE-lite) waits as long as the embedder takes', async () => {
    const { embedder: inner, requests } = scriptedEmbedder();
    const embedder = withQuestionDeadline(inner, { now: () => AT });
    expect(embedder.deadlineMs).toBeUndefined();
    let settled = false;
    const answer = embedder.embed(['tides']).then((vectors) => ((settled = true), vectors));
    await vi.advanceTimersByTimeAsync(60_000);
    expect(settled).toBe(false);
    requests[0]!.answer();
    expect(await answer).toHaveLength(1);
    expect(vi.getTimerCount()).toBe(0);
  });

  it('clears its timer when the answer comes in time', async () => {
    const { embedder: inner, requests } = scriptedEmbedder();
    const embedder = withQuestionDeadline(inner, { deadlineMs: 400 });
    const answer = embedder.embed(['lamp']);
    requests[0]!.answer();
    await answer;
    expect(vi.getTimerCount()).toBe(0);
  });
});

describe('what a caller is told', () => {
  it('names the kind and status of a provider failure, never its message (which may quote a key or an address)', () => {
    const refused = new ProviderError('auth', 'embeddings model m at http://10.0.0.7/v1: Incorrect API key provided: sk-abc***xyz', 401);
    expect(vectorsUnavailable(refused)).toEqual({ cause: 'error', reason: 'the embedding model failed: auth (HTTP 401)' });
    expect(vectorsUnavailable(new ProviderError('timeout', 'm at http://10.0.0.7/v1 did not answer'))).toMatchObject({ cause: 'timeout' });
    expect(vectorsUnavailable(Object.assign(new Error('$0.5 of $0.5 spent at http://10.0.0.7'), { code: 'embedding_ceiling' }))).toEqual({
      cause: 'error',
      reason: 'the embedding model failed: embedding_ceiling',
    });
    expect(vectorsUnavailable(new TypeError('worker at /srv/x exited'))).toEqual({ cause: 'error', reason: 'the embedding model failed: TypeError' });
  });
});

describe('query_timeout_ms', () => {
  it('defaults to 400 ms for an endpoint, is capped by timeout_ms, and a bad value names the key', () => {
    const config = EmbeddingsConfigSchema.parse({ base_url: 'http://h/v1', model: 'm' });
    expect(config.query_timeout_ms).toBe(400);
    expect(questionDeadlineOf({ kind: 'openai-compatible', config, embedder: undefined as never, source: 'x.yaml' })).toBe(400);
    const short = EmbeddingsConfigSchema.parse({ base_url: 'http://h/v1', model: 'm', timeout_ms: 250 });
    expect(questionDeadlineOf({ kind: 'openai-compatible', config: short, embedder: undefined as never, source: 'x.yaml' })).toBe(250);
    expect(questionDeadlineOf({ kind: 'use-lite', embedder: undefined as never })).toBeUndefined();
    expect(() => parseEmbeddingsConfig('base_url: http://h/v1\nmodel: m\nquery_timeout_ms: 0\n', 'emb.yaml')).toThrow(/^emb\.yaml: query_timeout_ms: /);
    expect(() => parseEmbeddingsConfig('base_url: http://h/v1\nmodel: m\nquery_timeout_ms: fast\n', 'emb.yaml')).toThrow(/^emb\.yaml: query_timeout_ms: /);
  });
});
