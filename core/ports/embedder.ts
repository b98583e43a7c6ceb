/** The embedding port: implemented by providers/embedder.ts (USE-lite) and by test stand-ins. */
export interface Embedder {
  /** Stable identifier of the model; part of the embedding cache key. */
  readonly id: string;
  readonly dims: number;
  /** Returns one L2-normalised vector per text, in order. */
  embed(texts: readonly string[]): Promise<Float32Array[]>;
}
