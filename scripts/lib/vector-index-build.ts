/**
 * The approximate vector index of the search (docs/decisions/0018-vector-index.md), built
 * beside vectors.f32 when the passages reach the threshold; below it the server scans them
 * all and no index is written.
 */
import { approximatePathApplies } from '../../core/search/chunk-scan.ts';
import { createVectorIndex } from '../../providers/vector-index.ts';

export async function writeVectorIndex(
  file: string,
  vectors: Float32Array,
  dims: number,
  approximateFrom: number,
  log: (line: string) => void,
): Promise<boolean> {
  const chunks = vectors.length / dims;
  if (!approximatePathApplies(chunks, approximateFrom)) return false;
  const started = Date.now();
  const index = await createVectorIndex(dims);
  index.add(vectors, 0);
  index.save(file);
  log(`indexed ${chunks} passage vectors for approximate search in ${Date.now() - started} ms`);
  return true;
}

/** SEARCH_APPROXIMATE_FROM: the threshold of the build's environment, when set (benchmarks force 0). */
export function approximateFromEnv(env: NodeJS.ProcessEnv): number | undefined {
  const value = env.SEARCH_APPROXIMATE_FROM;
  if (value === undefined || value === '') return undefined;
  const parsed = Number(value);
  if (!Number.isInteger(parsed) || parsed < 0) throw new Error(`SEARCH_APPROXIMATE_FROM must be a whole number of passages, not ${JSON.stringify(value)}`);
  return parsed;
}
