/**
 * Embeddings from any OpenAI-compatible `/v1/embeddings` endpoint (a hosted API, or a local
 * server: Ollama, llama.cpp's server, text-embeddings-inference, vLLM, Infinity) behind the
 * Embedder port. As in providers/chat.ts, the SDK's own retries are off and one deadline covers
 * a request and its retries (call-policy.ts). Every request is priced before it is sent, at the
 * most its texts can cost: one that could take the process's spend past the ceiling is refused
 * unsent (EmbeddingCeilingError).
 */
import OpenAI from 'openai';
import { backoffMs, RETRYABLE, retryAfterMs, sleep } from './call-policy.ts';
import { settleFailure } from './chat.ts';
import { normalize } from './embedder.ts';
import { ProviderError } from '../core/ports/chat.ts';
import type { Embedder } from '../core/ports/embedder.ts';
import type { EmbeddingsConfig } from '../schemas/embeddings.ts';

/** A request refused before it was sent: it could have taken the spend past `ceiling_usd`. */
export class EmbeddingCeilingError extends Error {
  readonly code = 'embedding_ceiling';
  constructor(
    message: string,
    readonly spentUsd: number,
    readonly ceilingUsd: number,
  ) {
    super(message);
    this.name = 'EmbeddingCeilingError';
  }
}

/** The endpoint returned a vector of another length than the embedder's (configured or first seen). */
export class EmbeddingDimensionError extends Error {
  readonly code = 'embedding_dimensions';
  constructor(message: string) {
    super(message);
    this.name = 'EmbeddingDimensionError';
  }
}

/** What one embedder has spent since it was created. */
export interface EmbeddingSpend {
  /** Requests answered or timed out (a timed-out request may have been billed). */
  requests: number;
  tokens: number;
  usd: number;
}

export interface OpenAIEmbedder extends Embedder {
  readonly model: string;
  /** A copy of the spend so far. */
  readonly spend: EmbeddingSpend;
  /** Texts waiting for a free request slot (`concurrency`). */
  readonly queuedTexts: number;
}

/** The id in caches and artifacts: another model or another vector length is another id. */
export function openAIEmbedderId(model: string, dims: number): string {
  return `openai-compatible:${model}@${dims}`;
}

/**
 * The most tokens `texts` can be billed for: a token covers at least one byte of text, and some
 * tokenisers add start and end tokens of their own.
 */
export function maxInputTokens(texts: readonly string[]): number {
  return texts.reduce((sum, text) => sum + Buffer.byteLength(text, 'utf8') + TOKENS_BESIDE_TEXT, 0);
}
const TOKENS_BESIDE_TEXT = 4;

export interface OpenAIEmbedderOptions {
  config: EmbeddingsConfig;
  env: NodeJS.ProcessEnv;
  /** Where the configuration came from (its file), for messages. */
  source?: string;
}

/**
 * An embedder over the endpoint. Without `dimensions` in the configuration, one request (of
 * one short text, metered like any other) learns the model's vector length, which the id names.
 */
export async function createOpenAIEmbedder({ config, env, source = 'EMBEDDINGS_CONFIG' }: OpenAIEmbedderOptions): Promise<OpenAIEmbedder> {
  const apiKey = config.api_key_env ? env[config.api_key_env] : 'unused';
  if (!apiKey) throw new Error(`${source}: api_key_env: the environment variable ${config.api_key_env} is not set`);
  const client = new OpenAI({ baseURL: config.base_url, apiKey, timeout: config.timeout_ms, maxRetries: 0 });
  const name = `embeddings model ${config.model} at ${config.base_url}`;
  const spend: EmbeddingSpend = { requests: 0, tokens: 0, usd: 0 };
  let reservedUsd = 0;
  let dims = config.dimensions;
  let queued = 0;
  const slots = createSlots(config.concurrency);
  const priceOf = (tokens: number) => (tokens * config.price_per_million_tokens) / 1_000_000;

  function charge(tokens: number): void {
    spend.requests++;
    spend.tokens += tokens;
    spend.usd += priceOf(tokens);
  }

  /** Holds back the most a request can cost, or refuses it when that could pass the ceiling. */
  function reserve(texts: readonly string[], tokens: number): number {
    const bound = priceOf(tokens);
    if (spend.usd + reservedUsd + bound > config.ceiling_usd) {
      throw new EmbeddingCeilingError(
        `${name}: a request of ${texts.length} text(s) (at most ${tokens} tokens, $${bound.toFixed(4)}) could take the spend past ceiling_usd ` +
          `$${config.ceiling_usd} ($${spend.usd.toFixed(4)} spent, $${reservedUsd.toFixed(4)} in flight): not sent (${source})`,
        spend.usd,
        config.ceiling_usd,
      );
    }
    reservedUsd += bound;
    return bound;
  }

  function vectorsOf(response: OpenAI.CreateEmbeddingResponse, count: number): Float32Array[] {
    const data = [...(Array.isArray(response.data) ? response.data : [])].sort((a, b) => a.index - b.index);
    if (data.length !== count) throw new ProviderError('malformed', `${name} returned ${data.length} vectors for ${count} texts`);
    return data.map((item) => {
      const values: unknown = item.embedding;
      if (!Array.isArray(values) || !values.every((value) => typeof value === 'number' && Number.isFinite(value))) {
        throw new ProviderError('malformed', `${name} returned an embedding that is not an array of numbers`);
      }
      dims ??= values.length;
      if (values.length !== dims) {
        const expected = config.dimensions !== undefined ? 'the configured dimensions' : 'what its first vector had';
        throw new EmbeddingDimensionError(`${name} returned a vector of ${values.length} dimensions, expected ${dims} (${expected}; ${source})`);
      }
      return normalize(Float32Array.from(values as number[]));
    });
  }

  /** One request of one batch, with its retries inside one deadline. */
  async function embedBatch(texts: string[]): Promise<Float32Array[]> {
    const started = performance.now();
    const deadline = AbortSignal.timeout(config.timeout_ms);
    const tokens = maxInputTokens(texts);
    for (let attempts = 1; ; attempts++) {
      const bound = reserve(texts, tokens);
      let response: OpenAI.CreateEmbeddingResponse;
      try {
        if (deadline.aborted) throw deadline.reason;
        response = await client.embeddings.create(
          {
            model: config.model,
            input: texts,
            encoding_format: 'float',
            ...(config.dimensions !== undefined ? { dimensions: config.dimensions } : {}),
          },
          { signal: deadline, maxRetries: 0 },
        );
      } catch (error) {
        const failure = settleFailure(error, undefined, deadline, config.timeout_ms, attempts);
        // A request that timed out may have been processed and billed: counted at its most.
        if (failure.failure === 'timeout') charge(tokens);
        const named = new ProviderError(failure.failure, `${name}: ${failure.message}`, failure.status);
        if (!RETRYABLE.has(failure.failure) || attempts > config.max_retries) throw named;
        const headers = error instanceof OpenAI.APIError ? error.headers : undefined;
        const wait = backoffMs(attempts - 1, retryAfterMs(headers, Date.now()));
        // A retry that could only start after the deadline is not made.
        if (performance.now() - started + wait >= config.timeout_ms) throw named;
        try {
          await sleep(wait, deadline);
        } catch (aborted) {
          const late = settleFailure(aborted, undefined, deadline, config.timeout_ms, attempts);
          throw new ProviderError(late.failure, `${name}: ${late.message}`, late.status);
        }
        continue;
      } finally {
        reservedUsd -= bound;
      }
      // Billed whatever the vectors turn out to be; a provider that reports no usage is counted at the most.
      charge(response.usage?.prompt_tokens ?? tokens);
      return vectorsOf(response, texts.length);
    }
  }

  async function embed(texts: readonly string[]): Promise<Float32Array[]> {
    // Endpoints refuse empty inputs; USE-lite's stand-in for them is the same.
    const clean = texts.map((text) => (text.trim() === '' ? '.' : text));
    const batches: string[][] = [];
    for (let start = 0; start < clean.length; start += config.batch_size) batches.push(clean.slice(start, start + config.batch_size));
    let failed = false;
    const results = await Promise.all(
      batches.map(async (batch) => {
        queued += batch.length;
        const release = await slots.acquire();
        queued -= batch.length;
        try {
          // Once one batch failed, the others of the call are not sent: their vectors would be thrown away.
          if (failed) return [];
          return await embedBatch(batch);
        } catch (error) {
          failed = true;
          throw error;
        } finally {
          release();
        }
      }),
    );
    return results.flat();
  }

  if (dims === undefined) await embed(['.']);
  const id = openAIEmbedderId(config.model, dims!);
  return {
    id,
    dims: dims!,
    model: config.model,
    roundTexts: config.batch_size * config.concurrency,
    get spend() {
      return { ...spend };
    },
    get queuedTexts() {
      return queued;
    },
    embed,
  };
}

/** At most `size` holders at once; the others wait in arrival order. */
function createSlots(size: number): { acquire(): Promise<() => void> } {
  let free = size;
  const waiting: (() => void)[] = [];
  const release = () => {
    const next = waiting.shift();
    if (next) next();
    else free++;
  };
  return {
    async acquire() {
      if (free > 0) free--;
      else await new Promise<void>((resolve) => waiting.push(resolve));
      return release;
    },
  };
}
