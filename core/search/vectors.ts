/**
 * Whether a search had the question's vector (issue 43, part 4). A remote embedder can be slow
 * or down: past its deadline (providers/question-embedder.ts), or on a failure, a search whose
 * caller asked for it (`SearchOptions.onVectorsUnavailable`) answers from the words alone
 * instead of failing — the vector side weighted 0, no feedback, no approximate shortlist, every
 * cosine unavailable (read as 0) — and says why here. Calibrated relevance (relevance.ts) reads
 * the cosine, so without it the relevance floors and the question gate are not applied
 * (retrieve.ts), as under the ∞ glyph's wider field.
 */
import { ProviderError } from '../ports/chat.ts';
import { EmbeddingDeadlineError } from '../ports/embedder.ts';

export interface VectorsUnavailable {
  /** `timeout`: no answer within the deadline (the question's own, or the request's); `error`: the embedder failed. */
  cause: 'timeout' | 'error';
  /** Why, in words safe to show a caller: never the provider's own message (it may quote a key or an address). */
  reason: string;
}

/**
 * What a caller is told of a failed question embedding. A provider's message can carry what a
 * caller must not see (a masked key, an internal address): only its kind and status are named.
 */
export function vectorsUnavailable(error: unknown): VectorsUnavailable {
  if (error instanceof EmbeddingDeadlineError) return { cause: 'timeout', reason: error.message };
  if (error instanceof ProviderError) {
    if (error.failure === 'timeout') return { cause: 'timeout', reason: 'the embedding model did not answer within its request deadline (timeout_ms)' };
    return { cause: 'error', reason: `the embedding model failed: ${error.failure}${error.status !== undefined ? ` (HTTP ${error.status})` : ''}` };
  }
  const code = (error as { code?: unknown } | undefined)?.code;
  if (typeof code === 'string' && /^[a-z_]+$/.test(code)) return { cause: 'error', reason: `the embedding model failed: ${code}` };
  return { cause: 'error', reason: `the embedding model failed: ${error instanceof Error ? error.name : 'unknown error'}` };
}

/** Collects, across the searches of one retrieval, whether any went without the question's vector (the first reason kept). */
export interface VectorsWatch {
  /** Pass as `onVectorsUnavailable`. */
  readonly report: (unavailable: VectorsUnavailable) => void;
  readonly unavailable: VectorsUnavailable | undefined;
}

export function watchVectors(): VectorsWatch {
  let first: VectorsUnavailable | undefined;
  return {
    report: (unavailable) => {
      first ??= unavailable;
    },
    get unavailable() {
      return first;
    },
  };
}
