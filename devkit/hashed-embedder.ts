/**
 * A deterministic stand-in for the sentence embedder, for the fast test lane: no model, no
 * threads, no disk. Each text becomes hashed features — lower-cased words, adjacent word pairs
 * and the character trigrams of each word — signed into a fixed-size vector (the hashing
 * trick), then L2-normalised. Texts that share words or word stems land close together; texts
 * that share none land near orthogonal. It knows nothing of meaning (synonyms, paraphrase), so
 * tests whose assertions depend on the real model's rankings stay in the full lane
 * (vitest.fast.config.ts lists them).
 */
import type { Embedder } from '../core/ports/embedder.ts';

/** Frequent English words: kept as features but light, so they do not make every text alike. */
const STOPWORDS = new Set(
  'a an and are as at be but by can did do does for from had has have how i if in into is it its me my no not of on or our so than that the their them then there these they this to was we were what when where which who why will with would you your'.split(
    ' ',
  ),
);

const WORD_WEIGHT = 1;
const STOPWORD_WEIGHT = 0.15;
const PAIR_WEIGHT = 0.5;
const TRIGRAM_WEIGHT = 0.35;

/** FNV-1a over UTF-16 code units, 32 bits: deterministic and the same on every platform. */
function fnv1a(text: string, seed = 0x811c9dc5): number {
  let hash = seed >>> 0;
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash;
}

/** The words of a text: letters and digits, case and compatibility forms folded. */
export function words(text: string): string[] {
  return (
    text
      .normalize('NFKC')
      .toLowerCase()
      .match(/[\p{L}\p{N}]+/gu) ?? []
  );
}

/** The weighted features of one text (a feature may repeat: its weights add up). */
export function features(text: string): Array<[feature: string, weight: number]> {
  const tokens = words(text);
  if (tokens.length === 0) return [['<empty>', 1]];
  const out: Array<[string, number]> = [];
  tokens.forEach((token, index) => {
    const stop = STOPWORDS.has(token);
    out.push([`w:${token}`, stop ? STOPWORD_WEIGHT : WORD_WEIGHT]);
    const next = tokens[index + 1];
    if (next !== undefined && !(stop && STOPWORDS.has(next))) out.push([`p:${token} ${next}`, PAIR_WEIGHT]);
    if (stop) return;
    const padded = `^${token}$`;
    for (let i = 0; i + 3 <= padded.length; i++) out.push([`c:${padded.slice(i, i + 3)}`, TRIGRAM_WEIGHT]);
  });
  return out;
}

export function hashedVector(text: string, dims: number): Float32Array {
  const vector = new Float32Array(dims);
  for (const [feature, weight] of features(text)) {
    const hash = fnv1a(feature);
    const sign = fnv1a(feature, 0x9747b28c) & 1 ? 1 : -1;
    vector[hash % dims]! += sign * weight;
  }
  let sum = 0;
  for (let i = 0; i < dims; i++) sum += vector[i]! * vector[i]!;
  const norm = Math.sqrt(sum);
  // Signed features can cancel out entirely; fall back to the first axis, still unit length.
  if (norm === 0) vector[0] = 1;
  else for (let i = 0; i < dims; i++) vector[i] = vector[i]! / norm;
  return vector;
}

export const HASHED_EMBEDDER_ID = 'devkit-hashed-ngrams-v1';

/** The stand-in embedder; 512 dimensions by default, as USE-lite, so the scan kernel's SIMD path runs. */
export function createHashedEmbedder(dims = 512): Embedder {
  if (!Number.isInteger(dims) || dims <= 0) throw new Error(`dims must be a positive integer, got ${dims}`);
  return {
    id: `${HASHED_EMBEDDER_ID}-${dims}`,
    dims,
    async embed(texts) {
      return texts.map((text) => hashedVector(text, dims));
    },
  };
}
