/** Small measurement helpers: percentiles and a table printer. */
export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const index = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[index]!;
}

export function summarize(values: readonly number[]) {
  return { n: values.length, median: percentile(values, 50), p95: percentile(values, 95), max: Math.max(...values) };
}

export function ms(value: number): string {
  return `${value.toFixed(value < 10 ? 2 : 1)} ms`;
}

export function ratio(value: number, reference: number): string {
  return `${(value / reference).toFixed(2)}×`;
}

export async function time<T>(work: () => Promise<T>): Promise<[T, number]> {
  const started = performance.now();
  const result = await work();
  return [result, performance.now() - started];
}
