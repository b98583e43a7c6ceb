/** The embedding port: implemented by providers/embedder.ts (USE-lite) and by test stand-ins. */
export interface Embedder {
  /** Stable identifier of the model; part of the embedding cache key. */
  readonly id: string;
  readonly dims: number;
  /** Returns one L2-normalised vector per text, in order. */
  embed(texts: readonly string[]): Promise<Float32Array[]>;
  /**
   * How many texts to hand it at once when what it returns is kept between calls (the build's
   * embedding cache): a remote model's one round of requests, so a build stopped mid-way has paid
   * for at most that round without keeping it. Unset: the cache's own batch.
   */
  readonly roundTexts?: number;
}

/**
 * A question's embedding did not come within its deadline (providers/question-embedder.ts):
 * the search answers from the words alone (core/search/vectors.ts). The request itself goes on,
 * and its answer, when it comes, is kept for the next ask of the same question.
 */
export class EmbeddingDeadlineError extends Error {
  readonly code = 'embedding_deadline';
  constructor(readonly deadlineMs: number) {
    super(`the embedding model did not answer within ${deadlineMs} ms`);
    this.name = 'EmbeddingDeadlineError';
  }
}
