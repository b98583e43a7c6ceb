/**
 * Fusing the two sides of hybrid retrieval (search-index.ts) over a scope of records: the
 * allowed records' best cosines and BM25 scores, put on one scale (score-normalisation.ts)
 * and mixed. The scope is either every allowed record (dense) or, on a large corpus under
 * z-score fusion, only the records either side ranks (sparse): the approximate index's
 * shortlist and BM25's best k. The rest of the allowed records enter through their totals
 * alone, so the scale is the one the dense scope gives, and a bound says how high any of them
 * could rank: the caller keeps the sparse scope only when every record it needs is above it.
 *
 * Arrays are local to the scope (entry i is record members[i]); members ascend, so sums run in
 * the order the dense scope sums them and the dense scope's scores are the same numbers.
 */
import type { CosinePopulation } from './chunk-scan.ts';
import { gather, nthLargest, quickselect, SAMPLED_FROM, sampledThreshold, toUint32 } from './select.ts';
import { scaleToUnit, standardScores } from './score-normalisation.ts';

export interface FusionTuning {
  vectorWeight: number;
  fusion: 'max' | 'zscore';
}

export interface FusionScope {
  /** Record indices, ascending. */
  members: Uint32Array;
  /** Per member: its best cosine (-2: none, outside the approximate shortlist) and its BM25. */
  cosine: Float32Array;
  lexical: Float64Array;
  /**
   * The allowed records outside `members` (sparse scopes only): how many, every allowed
   * record's BM25 totals (summed in record order, members included), and the most BM25 any of
   * them has (they have no cosine).
   */
  rest?: RestOfAllowed;
}

export interface RestOfAllowed {
  count: number;
  allowedCount: number;
  lexicalSum: number;
  lexicalSquares: number;
  lexicalBound: number;
}

export interface Fused {
  /** Per member, in [0, 1] (z-scores), or on the fusion's own scale. */
  scores: Float64Array;
  /** The most any record outside the scope can score (sparse scopes; -Infinity when none is outside). */
  restBound: number;
}

/** The scope's values gathered from record-indexed arrays. */
export function gatherScope(members: Uint32Array, similarity: Float32Array, lexical: Float64Array, rest?: RestOfAllowed): FusionScope {
  const cosine = new Float32Array(members.length);
  const words = new Float64Array(members.length);
  members.forEach((record, at) => {
    cosine[at] = similarity[record]!;
    words[at] = lexical[record]!;
  });
  return rest ? { members, cosine, lexical: words, rest } : { members, cosine, lexical: words };
}

/** What the first ranking needs of the words' side over every allowed record, in one pass. */
export interface WordRanking {
  /** BM25 summed over the allowed records in record order, and its squares. */
  sum: number;
  squares: number;
  /** The allowed records of the `k` highest positive scores (ties at the cut included), ascending. */
  best: Uint32Array;
  /** The least of their scores: every other allowed record has less (0 when fewer than k are positive). */
  bound: number;
}

export function rankByWords(allowed: Uint32Array, lexical: Float64Array, k: number): WordRanking {
  // One pass: the sums, and the records at or above a threshold that about 2k of them reach
  // (select.ts), among which the best k are chosen, unless fewer than k reach it.
  const threshold = allowed.length >= SAMPLED_FROM && k * 8 <= allowed.length ? Math.max(sampledThreshold(lexical, k, allowed), 0) : 0;
  let sum = 0;
  let squares = 0;
  let positive = 0;
  const reaching: number[] = [];
  for (let at = 0; at < allowed.length; at++) {
    const score = lexical[allowed[at]!]!;
    sum += score;
    squares += score * score;
    if (score > 0) {
      positive++;
      if (score >= threshold) reaching.push(allowed[at]!);
    }
  }
  const among = reaching.length >= Math.min(k, positive) ? reaching : Array.from(allowed).filter((record) => lexical[record]! > 0);
  // More than k positive: the k-th largest is positive, and the records reaching it are the best.
  const cut = positive <= k ? 0 : quickselect(gather(lexical, among), k);
  const best: number[] = [];
  for (let i = 0; i < among.length; i++) if (lexical[among[i]!]! >= cut) best.push(among[i]!);
  return { sum, squares, best: toUint32(best), bound: cut };
}

/** The `count` records of `ranking.best` with the highest scores (ties at the cut included). */
export function bestOf(ranking: WordRanking, lexical: Float64Array, count: number): Uint32Array {
  if (ranking.best.length <= count) return ranking.best;
  const cut = nthLargest(gather(lexical, ranking.best), count);
  return ranking.best.filter((record) => lexical[record]! >= cut);
}

/**
 * The sparse scope of a first ranking: the allowed records with a cosine (`scored`: the
 * approximate shortlist and the best records by words) and the best by BM25 (`words`). Every
 * other allowed record has no cosine and less BM25 than each of those, so it ranks below all
 * of them under any mix with a positive weight on words.
 */
export function sparseScope(allowedCount: number, scored: Uint32Array, words: WordRanking, similarity: Float32Array, lexical: Float64Array): FusionScope {
  const members = union(scored, words.best);
  const rest = { count: allowedCount - members.length, allowedCount, lexicalSum: words.sum, lexicalSquares: words.squares, lexicalBound: words.bound };
  return gatherScope(members, similarity, lexical, rest);
}

/** The records of two ascending lists, each once, ascending (merged; sorted where a list does not ascend). */
export function union(a: Uint32Array, b: Uint32Array): Uint32Array {
  const out = new Uint32Array(a.length + b.length);
  let i = 0;
  let j = 0;
  let n = 0;
  while (i < a.length || j < b.length) {
    const next = j >= b.length || (i < a.length && a[i]! <= b[j]!) ? a[i++]! : b[j++]!;
    if (n > 0 && next < out[n - 1]!) return Uint32Array.from(new Set([...a, ...b])).sort(); // an input that does not ascend
    if (n === 0 || next !== out[n - 1]) out[n++] = next;
  }
  return out.slice(0, n);
}

/** The scope's fused scores; `population` as the vector side estimated it (approximate path). */
export function fuseScope(tuning: FusionTuning, scope: FusionScope, population?: CosinePopulation): Fused {
  const { cosine, lexical, rest } = scope;
  const w = tuning.vectorWeight;
  if (rest && rest.count > 0) {
    if (tuning.fusion !== 'zscore' || !population) throw new Error('a sparse scope is fused by z-scores on the approximate path only');
    return sparseStandardFusion(w, scope, rest, population);
  }
  const n = cosine.length;
  const fused = new Float64Array(n);
  const maxLexical = maxOf(lexical);
  if (tuning.fusion === 'zscore') {
    const every = new Uint32Array(n);
    for (let at = 0; at < n; at++) every[at] = at;
    const v = cosineStandardScores(cosine, population);
    const l = standardScores(lexical, every);
    for (let at = 0; at < n; at++) fused[at] = w * v[at]! + (1 - w) * l[at]!;
    return { scores: scaleToUnit(fused, every), restBound: -Infinity };
  }
  for (let at = 0; at < n; at++) fused[at] = w * Math.max(0, cosine[at]!) + (1 - w) * (maxLexical > 0 ? lexical[at]! / maxLexical : 0);
  return { scores: fused, restBound: -Infinity };
}

/**
 * Z-score fusion of a sparse scope: the cosines standardised on the population's estimate (a
 * record without one read as the population's mean or the lowest cosine found, whichever is
 * less), BM25 on every allowed record's totals, and the mix's mean over every allowed record
 * from the members' sum plus the rest's, which their totals give (their cosine is the imputed one).
 */
function sparseStandardFusion(w: number, scope: FusionScope, rest: RestOfAllowed, population: CosinePopulation): Fused {
  const { cosine, lexical } = scope;
  const n = cosine.length;
  const { mean, deviation } = population;
  const imputed = Math.min(mean, lowestKnown(cosine));
  const cosineZ = (value: number) => (deviation > 0 ? ((value > -2 ? value : imputed) - mean) / deviation : 0);
  const count = rest.allowedCount || 1;
  const lexicalMean = rest.lexicalSum / count;
  const lexicalDeviation = Math.sqrt(Math.max(0, rest.lexicalSquares / count - lexicalMean * lexicalMean));
  const lexicalZ = (value: number) => (lexicalDeviation > 0 ? (value - lexicalMean) / lexicalDeviation : 0);
  const fused = new Float64Array(n);
  let memberLexical = 0;
  for (let at = 0; at < n; at++) {
    fused[at] = w * cosineZ(cosine[at]!) + (1 - w) * lexicalZ(lexical[at]!);
    memberLexical += lexical[at]!;
  }
  const restLexicalZ = lexicalDeviation > 0 ? (rest.lexicalSum - memberLexical - rest.count * lexicalMean) / lexicalDeviation : 0;
  const total = sumOf(fused) + rest.count * w * cosineZ(-2) + (1 - w) * restLexicalZ;
  const mixMean = total / count;
  let best = -Infinity;
  for (let at = 0; at < n; at++) best = Math.max(best, fused[at]!);
  const restMix = w * cosineZ(-2) + (1 - w) * lexicalZ(rest.lexicalBound);
  best = Math.max(best, restMix);
  const span = best - mixMean;
  for (let at = 0; at < n; at++) fused[at] = span > 0 ? Math.max(0, fused[at]! - mixMean) / span : 1;
  return { scores: fused, restBound: span > 0 ? Math.max(0, restMix - mixMean) / span : 1 };
}

/**
 * Standard scores of the cosine side over the members that have one. On the approximate path
 * (chunk-scan.ts) a record outside the shortlist has none (-2): the mean and the spread are then
 * the population's as the shortlist's sample estimates them (`population`), which is the scale
 * the exact scan gives, and such a record is read as the population's mean cosine or the
 * lowest cosine found, whichever is less (it is not among the nearest). Without an estimate,
 * over the records that have one, and such a record as the worst of them. On the exact path
 * every allowed record has one.
 */
function cosineStandardScores(cosine: Float32Array, population?: CosinePopulation): Float64Array {
  const n = cosine.length;
  if (population && cosine.includes(-2)) {
    const standard = new Float64Array(n);
    const { mean, deviation } = population;
    const imputed = Math.min(mean, lowestKnown(cosine));
    for (let at = 0; at < n; at++) standard[at] = deviation > 0 ? ((cosine[at]! > -2 ? cosine[at]! : imputed) - mean) / deviation : 0;
    return standard;
  }
  const known: number[] = [];
  for (let at = 0; at < n; at++) if (cosine[at]! > -2) known.push(at);
  const standard = standardScores(cosine, toUint32(known));
  let worst = 0;
  for (let i = 0; i < known.length; i++) worst = Math.min(worst, standard[known[i]!]!);
  for (let at = 0; at < n; at++) if (cosine[at]! <= -2) standard[at] = worst;
  return standard;
}

function lowestKnown(cosine: Float32Array): number {
  let lowest = Infinity;
  for (const value of cosine) if (value > -2) lowest = Math.min(lowest, value);
  return lowest;
}

function sumOf(values: Float64Array): number {
  let sum = 0;
  for (const value of values) sum += value;
  return sum;
}

function maxOf(values: Float64Array): number {
  let max = 0;
  for (const value of values) if (value > max) max = value;
  return max;
}
