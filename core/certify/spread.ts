/**
 * Spreads in embedding space. Vectors are L2-normalised sentence embeddings; the distance
 * between two answers is the cosine distance 1 - cos, in [0, 2].
 */
import { MIN_WITHIN_SPREAD, type Thresholds } from './protocol.ts';

export type Vector = ArrayLike<number>;

export function cosineDistance(a: Vector, b: Vector): number {
  let dot = 0;
  let normA = 0;
  let normB = 0;
  for (let i = 0; i < a.length; i++) {
    const x = a[i] ?? 0;
    const y = b[i] ?? 0;
    dot += x * y;
    normA += x * x;
    normB += y * y;
  }
  const denominator = Math.sqrt(normA) * Math.sqrt(normB);
  const cos = denominator > 0 ? dot / denominator : Number.NaN;
  // A zero (or underflowing) vector has no direction: count it as unrelated to anything.
  if (!Number.isFinite(cos)) return 1;
  return Math.min(2, Math.max(0, 1 - cos));
}

/** Mean distance over all unordered pairs; 0 for fewer than two vectors. */
export function meanPairwiseDistance(vectors: readonly Vector[]): number {
  let sum = 0;
  let pairs = 0;
  for (let i = 0; i < vectors.length; i++) {
    for (let j = i + 1; j < vectors.length; j++) {
      sum += cosineDistance(vectors[i]!, vectors[j]!);
      pairs++;
    }
  }
  return pairs === 0 ? 0 : sum / pairs;
}

export function centroid(vectors: readonly Vector[]): number[] {
  const dims = vectors[0]?.length ?? 0;
  const out = new Array<number>(dims).fill(0);
  for (const vector of vectors) for (let i = 0; i < dims; i++) out[i]! += (vector[i] ?? 0) / vectors.length;
  return out;
}

export interface ControlSpread {
  /** Mean over models of each model's mean pairwise distance between its own re-rolls. */
  within: number;
  /** Mean pairwise distance between the models' centroids. */
  between: number;
  /** between / within, with within floored at MIN_WITHIN_SPREAD. */
  dri: number;
  /** Each model's own re-roll spread, by model name. */
  withinByModel: Record<string, number>;
  centroids: Record<string, number[]>;
}

/** Spreads from the control re-rolls: `rerolls[model]` holds that model's T answer vectors. */
export function controlSpread(rerolls: Record<string, readonly Vector[]>): ControlSpread {
  const models = Object.keys(rerolls).sort();
  const withinByModel: Record<string, number> = {};
  const centroids: Record<string, number[]> = {};
  for (const model of models) {
    withinByModel[model] = meanPairwiseDistance(rerolls[model]!);
    centroids[model] = centroid(rerolls[model]!);
  }
  const within = models.length === 0 ? 0 : models.reduce((sum, model) => sum + withinByModel[model]!, 0) / models.length;
  const between = meanPairwiseDistance(models.map((model) => centroids[model]!));
  return { within, between, dri: driOf(between, within), withinByModel, centroids };
}

export function driOf(between: number, within: number): number {
  return between / Math.max(within, MIN_WITHIN_SPREAD);
}

/** A spread counts as a split when it clears both the absolute floor and DRI against the noise floor. */
export function isSplit(between: number, within: number, thresholds: Thresholds): boolean {
  return between >= thresholds.betweenFloor && driOf(between, within) >= thresholds.driMin;
}

/**
 * The models party to the split: those in at least one pair whose centroids stand apart
 * by a split. Empty when the panel converges.
 */
export function splitParties(spread: ControlSpread, thresholds: Thresholds): string[] {
  const models = Object.keys(spread.centroids).sort();
  const parties = new Set<string>();
  for (let i = 0; i < models.length; i++) {
    for (let j = i + 1; j < models.length; j++) {
      const distance = cosineDistance(spread.centroids[models[i]!]!, spread.centroids[models[j]!]!);
      if (isSplit(distance, spread.within, thresholds)) {
        parties.add(models[i]!);
        parties.add(models[j]!);
      }
    }
  }
  return [...parties];
}

/** For each model, the peer whose centroid is farthest from its own (ties: first by name). */
export function mostOpposedPeers(centroids: Record<string, Vector>): Record<string, string> {
  const models = Object.keys(centroids).sort();
  const out: Record<string, string> = {};
  for (const model of models) {
    let best: string | undefined;
    let bestDistance = -1;
    for (const peer of models) {
      if (peer === model) continue;
      const distance = cosineDistance(centroids[model]!, centroids[peer]!);
      if (distance > bestDistance) {
        best = peer;
        bestDistance = distance;
      }
    }
    if (best !== undefined) out[model] = best;
  }
  return out;
}

/**
 * Share of paraphrases in which the split persists: `answers[j][model]` is model's answer
 * vector to paraphrase j. A paraphrase keeps the split when the models' answers to it are
 * spread by a split against the control noise floor.
 */
export function splitPersistence(answers: readonly Record<string, Vector>[], within: number, thresholds: Thresholds): number {
  if (answers.length === 0) return 0;
  let kept = 0;
  for (const byModel of answers) {
    const vectors = Object.keys(byModel)
      .sort()
      .map((model) => byModel[model]!);
    if (isSplit(meanPairwiseDistance(vectors), within, thresholds)) kept++;
  }
  return kept / answers.length;
}

/** Per model: mean distance of its paraphrase answers from its control centroid (lower is steadier). */
export function paraphraseDrift(answers: readonly Record<string, Vector>[], centroids: Record<string, Vector>): Record<string, number> {
  const out: Record<string, number> = {};
  for (const model of Object.keys(centroids).sort()) {
    const distances = answers
      .map((byModel) => byModel[model])
      .filter((v): v is Vector => v !== undefined)
      .map((v) => cosineDistance(v, centroids[model]!));
    out[model] = distances.length === 0 ? 0 : distances.reduce((a, b) => a + b, 0) / distances.length;
  }
  return out;
}
