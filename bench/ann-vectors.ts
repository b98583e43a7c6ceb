/**
 * Vectors with the structure of real USE-lite embeddings, for the approximate-search
 * benchmark (bench/ann.ts). Uniform random unit vectors say nothing about an approximate
 * index: in 512 dimensions every pair is nearly orthogonal, so there are no neighbourhoods
 * to find. Real embeddings sit in a narrow cone with clusters of topics.
 *
 * The recipe (seeded): each synthetic vector is
 *   normalise(a + mix·b + noise·g)
 * where a and b are two real passage embeddings drawn at random, mix is drawn uniformly in
 * [0, maxMix], noise uniformly in [minNoise, maxNoise], and g is a standard gaussian vector. `a` keeps the vector on the real cone
 * and near a real topic, `b` moves it between topics as real passages do, and g keeps the
 * many vectors derived from one `a` from being near-duplicates; a noise level drawn per
 * vector spreads the nearest-neighbour distances as the real ones are spread (one level for
 * all gives every vector the same distance to its nearest sibling). bench/ann.ts prints the
 * nearest-neighbour cosine distribution of the real passages beside that of the synthetic
 * set, so the recipe's fit is measured in every run, not assumed.
 */
import { readFileSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { seededRandom } from '../core/random.ts';

export interface RealEmbeddings {
  dims: number;
  /** Real passage vectors, row after row. */
  passages: Float32Array;
  count: number;
}

export interface DerivationRecipe {
  maxMix: number;
  /** Range of the gaussian's standard deviation per dimension (before normalising), drawn per vector. */
  minNoise: number;
  maxNoise: number;
  seed: number;
}

export const DEFAULT_RECIPE: DerivationRecipe = { maxMix: 0.35, minNoise: 0.008, maxNoise: 0.04, seed: 30 };

/**
 * The vectors of an embedding cache file (scripts/lib/embedding-cache.ts: [32-byte key]
 * [dims × float32] per entry), leaving out the entries whose key is in `excludedKeys`
 * (the questions' own embeddings, which are the queries and must not be passages too).
 */
export function readCacheVectors(file: string, dims: number, excludedKeys: ReadonlySet<string>): RealEmbeddings {
  const buffer = readFileSync(file);
  const entryBytes = 32 + dims * 4;
  const entries = Math.floor(buffer.length / entryBytes);
  const passages = new Float32Array(entries * dims);
  let count = 0;
  for (let entry = 0; entry < entries; entry++) {
    const offset = entry * entryBytes;
    if (excludedKeys.has(buffer.subarray(offset, offset + 32).toString('hex'))) continue;
    new Uint8Array(passages.buffer, count * dims * 4, dims * 4).set(buffer.subarray(offset + 32, offset + entryBytes));
    count++;
  }
  return { dims, passages: passages.subarray(0, count * dims), count };
}

/** The cache key of a text (the same as scripts/lib/embedding-cache.ts computes). */
export function cacheKey(embedderId: string, text: string): string {
  return createHash('sha256').update(embedderId).update('\u0000').update(text).digest('hex');
}

/** Writes `count` derived unit vectors into `target` (count × dims floats). */
export function deriveVectors(real: RealEmbeddings, count: number, target: Float32Array, recipe: DerivationRecipe = DEFAULT_RECIPE): void {
  const { dims, passages } = real;
  const next = seededRandom(recipe.seed);
  let spare: number | undefined;
  const gaussian = () => {
    if (spare !== undefined) {
      const value = spare;
      spare = undefined;
      return value;
    }
    const radius = Math.sqrt(-2 * Math.log(1 - next()));
    const angle = 2 * Math.PI * next();
    spare = radius * Math.sin(angle);
    return radius * Math.cos(angle);
  };
  for (let row = 0; row < count; row++) {
    const a = Math.floor(next() * real.count) * dims;
    const b = Math.floor(next() * real.count) * dims;
    const mix = next() * recipe.maxMix;
    const noise = recipe.minNoise + next() * (recipe.maxNoise - recipe.minNoise);
    const offset = row * dims;
    let norm = 0;
    for (let d = 0; d < dims; d++) {
      const value = passages[a + d]! + mix * passages[b + d]! + noise * gaussian();
      target[offset + d] = value;
      norm += value * value;
    }
    const scale = 1 / Math.sqrt(norm);
    for (let d = 0; d < dims; d++) target[offset + d] = target[offset + d]! * scale;
  }
}

/**
 * Cosine of each of `probes` rows (taken evenly from the set) to its nearest other row in
 * the set: the distribution an approximate index has to resolve.
 */
export function nearestNeighbourCosines(vectors: Float32Array, dims: number, probes: number): number[] {
  const count = vectors.length / dims;
  const step = Math.max(1, Math.floor(count / probes));
  const cosines: number[] = [];
  for (let probe = 0; probe < count && cosines.length < probes; probe += step) {
    let best = -2;
    const p = probe * dims;
    for (let row = 0, offset = 0; row < count; row++, offset += dims) {
      if (row === probe) continue;
      let dot = 0;
      for (let d = 0; d < dims; d++) dot += vectors[p + d]! * vectors[offset + d]!;
      if (dot > best) best = dot;
    }
    cosines.push(best);
  }
  return cosines.sort((x, y) => x - y);
}
