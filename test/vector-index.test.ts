/**
 * The approximate vector index (docs/decisions/0018-vector-index.md): the adapter finds what
 * the exact scan finds on text-structured vectors, filters hold, a saved index reopens the
 * same, and the search answers the same through the approximate path as through the exact one.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { loadCorpus, type Corpus } from '../api/load-artifacts.ts';
import { artifactPaths } from '../core/artifacts.ts';
import { REPO_ROOT } from '../core/paths.ts';
import { APPROXIMATE_FROM, approximatePathApplies } from '../core/search/chunk-scan.ts';
import { createVectorScanner } from '../core/search/vector-scan.ts';
import { createHashedEmbedder, hashedVector } from '../devkit/hashed-embedder.ts';
import { tempDir } from '../devkit/app.ts';
import { createVectorIndex, viewVectorIndex } from '../providers/vector-index.ts';
import { buildArtifacts } from '../scripts/build.ts';
import { writeVectorIndex } from '../scripts/lib/vector-index-build.ts';

const DIMS = 128;

/** Sentences of the repository's own works: real English, so the vectors have neighbourhoods. */
function sentences(): string[] {
  const dir = path.join(REPO_ROOT, 'content', 'works');
  return readdirSync(dir)
    .filter((file) => file.endsWith('.md'))
    .flatMap((file) => readFileSync(path.join(dir, file), 'utf8').split(/(?<=[.!?])\s+/))
    .map((sentence) => sentence.trim())
    .filter((sentence) => sentence.split(/\s+/).length >= 6);
}

function matrix(texts: readonly string[]): Float32Array {
  const vectors = new Float32Array(texts.length * DIMS);
  texts.forEach((text, row) => vectors.set(hashedVector(text, DIMS), row * DIMS));
  return vectors;
}

/** Dot products of the given rows with the query, highest first, rounded: ties between equal sentences compare equal. */
function scoresOf(vectors: Float32Array, query: Float32Array, rows: Iterable<number>): number[] {
  const dots = createVectorScanner(vectors, DIMS, { kernel: 'js' }).dots(query);
  return [...rows].map((row) => Math.round(dots[row]! * 1e5) / 1e5).sort((a, b) => b - a);
}

/**
 * Of the exact top-k scores, the share the found rows reach (rounded scores, so equal
 * sentences count alike): an approximate index is held to its recall, not to every answer
 * (built here on one thread, so the same graph every run).
 */
function recall(found: number[], exact: number[]): number {
  const remaining = [...found];
  let hits = 0;
  for (const score of exact) {
    const at = remaining.indexOf(score);
    if (at >= 0) {
      hits++;
      remaining.splice(at, 1);
    }
  }
  return exact.length === 0 ? 1 : hits / exact.length;
}

/** The exact top `k` rows by dot product among the allowed ones. */
function exactTop(vectors: Float32Array, query: Float32Array, k: number, allowed?: Uint8Array): number[] {
  const dots = createVectorScanner(vectors, DIMS, { kernel: 'js' }).dots(query, allowed);
  return [...dots.keys()]
    .filter((row) => !allowed || allowed[row] === 1)
    .sort((a, b) => dots[b]! - dots[a]! || a - b)
    .slice(0, k);
}

describe('vector index adapter (USearch)', () => {
  const texts = sentences();
  const stored = texts.filter((_, index) => index % 5 !== 0);
  const questions = texts.filter((_, index) => index % 5 === 0).slice(0, 40);
  const vectors = matrix(stored);

  it('has a set of real sentences large enough for a graph to matter', () => {
    expect(stored.length).toBeGreaterThan(500);
    expect(questions.length).toBe(40);
  });

  it('finds the exact top 10 at a high ef_search, unquantised', async () => {
    const index = await createVectorIndex(DIMS, { quantization: 'f32', connectivity: 16, expansionAdd: 256, expansionSearch: 512, addThreads: 1 });
    index.add(vectors, 0);
    expect(index.size).toBe(stored.length);
    let total = 0;
    for (const question of questions) {
      const query = hashedVector(question, DIMS);
      total += recall(scoresOf(vectors, query, index.search(query, 10)), scoresOf(vectors, query, exactTop(vectors, query, 10)));
    }
    expect(total / questions.length).toBeGreaterThanOrEqual(0.99);
  });

  it('keeps only allowed keys, and finds the exact filtered top 10 by oversampling', async () => {
    const index = await createVectorIndex(DIMS, { quantization: 'f32', connectivity: 16, expansionAdd: 256, expansionSearch: 512, addThreads: 1 });
    index.add(vectors, 0);
    const allowed = new Uint8Array(stored.length).map((_, row) => (row % 3 === 0 ? 1 : 0));
    let total = 0;
    for (const question of questions.slice(0, 10)) {
      const query = hashedVector(question, DIMS);
      const found = [...index.search(query, 10, allowed)];
      expect(found.every((row) => allowed[row] === 1)).toBe(true);
      expect(found).toHaveLength(10);
      total += recall(scoresOf(vectors, query, found), scoresOf(vectors, query, exactTop(vectors, query, 10, allowed)));
    }
    expect(total / 10).toBeGreaterThanOrEqual(0.95);
    expect(index.search(hashedVector(questions[0]!, DIMS), 10, new Uint8Array(stored.length))).toHaveLength(0);
  });

  it('answers the same after save and a memory-mapped reopen, with inserts after the build counted', async () => {
    const parameters = { quantization: 'i8', connectivity: 16, expansionAdd: 128, expansionSearch: 128, addThreads: 1 } as const;
    const index = await createVectorIndex(DIMS, parameters);
    const built = stored.length - 50;
    index.add(vectors.subarray(0, built * DIMS), 0);
    index.add(vectors.subarray(built * DIMS), built);
    const file = path.join(tempDir('vector-index'), 'vectors.usearch');
    index.save(file);
    const viewed = await viewVectorIndex(file, DIMS, parameters);
    expect(viewed.size).toBe(stored.length);
    const query = hashedVector(stored[stored.length - 1]!, DIMS);
    expect([...viewed.search(query, 10)]).toEqual([...index.search(query, 10)]);
    expect(viewed.search(query, 1)[0]).toBe(stored.length - 1);
    await expect(viewVectorIndex(file, DIMS * 2, parameters)).rejects.toThrow(/dimension/);
  });
});

describe('approximate path threshold', () => {
  it('applies from the threshold on, never to an empty corpus', () => {
    expect(approximatePathApplies(APPROXIMATE_FROM - 1, APPROXIMATE_FROM)).toBe(false);
    expect(approximatePathApplies(APPROXIMATE_FROM, APPROXIMATE_FROM)).toBe(true);
    expect(approximatePathApplies(1, 0)).toBe(true);
    expect(approximatePathApplies(0, 0)).toBe(false);
  });

  it('writes an index only at or above the threshold', async () => {
    const dir = tempDir('vector-index-build');
    const vectors = matrix(sentences().slice(0, 100));
    expect(await writeVectorIndex(path.join(dir, 'below.usearch'), vectors, DIMS, 101, () => {})).toBe(false);
    expect(existsSync(path.join(dir, 'below.usearch'))).toBe(false);
    expect(await writeVectorIndex(path.join(dir, 'at.usearch'), vectors, DIMS, 100, () => {})).toBe(true);
    expect(existsSync(path.join(dir, 'at.usearch'))).toBe(true);
  });
});

describe('search through the approximate path', () => {
  let exact: Corpus;
  let approximate: Corpus;
  let chunks: number;
  // A shortlist well below the passage count, so the index really chooses.
  const shortlist = 32;

  beforeAll(async () => {
    const artifactsDir = tempDir('ann-artifacts');
    const embedder = createHashedEmbedder();
    const build = await buildArtifacts({
      contentDir: path.join(REPO_ROOT, 'content'),
      artifactsDir,
      cacheDir: tempDir('ann-cache'),
      embedder,
      approximateFrom: 0,
    });
    chunks = build.chunks;
    expect(existsSync(artifactPaths(artifactsDir).searchVectorIndex)).toBe(true);
    // The `max` fusion reads each record's own cosine, so the exact re-scoring of the shortlist
    // shows as equal scores; z-scores (the default) also read the spread of the records scored,
    // which the shortlist narrows by design (bench/README.md has ArguAna through both paths).
    exact = await loadCorpus(artifactsDir, embedder, { fusion: 'max' });
    approximate = await loadCorpus(artifactsDir, embedder, { fusion: 'max', approximateFrom: 0, approximateShortlist: shortlist });
  }, 120_000);

  it('takes the approximate path only when forced below the default threshold', () => {
    expect(chunks).toBeGreaterThan(shortlist * 4);
    expect(chunks).toBeLessThan(APPROXIMATE_FROM);
    expect(exact.search.approximate).toBe(false);
    expect(approximate.search.approximate).toBe(true);
  });

  const questions = [
    'what do models disagree about when asked about consciousness',
    'memory and forgetting across conversations',
    'is honesty more important than kindness',
    'the ethics of persuasion',
    'who decides what an assistant should refuse',
    'creativity and originality in generated text',
  ];

  it('ranks the same records with the same scores as the exact scan', async () => {
    for (const question of questions) {
      const expected = await exact.search.search(question, { limit: 5 });
      expect(expected.length).toBeGreaterThan(0);
      expect(await approximate.search.search(question, { limit: 5 })).toEqual(expected);
    }
  });

  it('respects filters, selective ones included', async () => {
    for (const filters of [
      { layers: ['divergence' as const] },
      { rings: ['core' as const] },
      { excludeIds: new Set(exact.search.records.slice(0, 20).map((record) => record.id)) },
    ]) {
      for (const question of questions.slice(0, 3)) {
        const expected = await exact.search.search(question, { limit: 5, filters });
        const found = await approximate.search.search(question, { limit: 5, filters });
        expect(found).toEqual(expected);
        for (const hit of found) {
          if (filters.layers) expect(filters.layers).toContain(hit.record.layer);
          if (filters.rings) expect(filters.rings).toContain(hit.record.ring);
          if (filters.excludeIds) expect(filters.excludeIds.has(hit.record.id)).toBe(false);
        }
      }
    }
  });

  it('serves the Atlas similarity search the same', async () => {
    const isAtlas = (record: { kind: string }) => record.kind === 'divergence';
    for (const question of questions.slice(0, 3)) {
      expect(await approximate.search.similar(question, isAtlas, 5)).toEqual(await exact.search.similar(question, isAtlas, 5));
    }
  });
});
