/**
 * Percentile bootstrap over queries (Efron): how far a mean over these queries could move on
 * another draw of queries like them. Seeded, so a report is the same on every run.
 */
import { seededRandom } from '../../core/random.ts';

export interface Interval {
  mean: number;
  low: number;
  high: number;
}

/** The mean of `values` with its 95 % percentile interval from `resamples` draws with replacement. */
export function bootstrapMean(values: readonly number[], options: { resamples?: number; seed?: number } = {}): Interval {
  const n = values.length;
  if (n === 0) return { mean: 0, low: 0, high: 0 };
  const mean = values.reduce((sum, value) => sum + value, 0) / n;
  const resamples = options.resamples ?? 2000;
  const random = seededRandom(options.seed ?? 1);
  const means = new Float64Array(resamples);
  for (let r = 0; r < resamples; r++) {
    let sum = 0;
    for (let i = 0; i < n; i++) sum += values[Math.floor(random() * n)]!;
    means[r] = sum / n;
  }
  means.sort();
  return { mean, low: means[Math.floor(0.025 * (resamples - 1))]!, high: means[Math.ceil(0.975 * (resamples - 1))]! };
}

/** The mean difference a − b over the same queries (paired), with its 95 % interval. */
export function bootstrapDifference(a: readonly number[], b: readonly number[], options: { resamples?: number; seed?: number } = {}): Interval {
  if (a.length !== b.length) throw new Error(`paired values differ in length: ${a.length} and ${b.length}`);
  return bootstrapMean(
    a.map((value, at) => value - b[at]!),
    options,
  );
}
