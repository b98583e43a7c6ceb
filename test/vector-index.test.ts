/**
 * The approximate vector index (docs/decisions/0018-vector-index.md): the adapter finds what
 * the exact scan finds on text-structured vectors, filters hold, a saved index reopens the
 * same, and the search answers the same through the approximate path as through the exact one.
 */
import { existsSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { loadCorpus, type Corpus } from '../api/load-artifacts.ts';
import { artifactPaths } from '../core/artifacts.ts';
import { REPO_ROOT } from '../core/paths.ts';
import { APPROXIMATE_FROM, approximatePathApplies, createChunkScan, POPULATION_SAMPLE } from '../core/search/chunk-scan.ts';
import { createVectorScanner } from '../core/search/vector-scan.ts';
import { createHashedEmbedder, hashedVector } from '../devkit/hashed-embedder.ts';
import { tempDir } from '../devkit/app.ts';
import { createVectorIndex, viewVectorIndex } from '../providers/vector-index.ts';
import { buildArtifacts } from '../scripts/build.ts';
import { planKeys, writeQuantizedVectors, writeVectorIndex } from '../scripts/lib/vector-index-build.ts';
import { repeatedBuilds } from './helpers/build-twice.ts';
import { expectCloseResults } from './helpers/search-record.ts';

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

describe('the approximate chunk scan (chunk-scan.ts)', () => {
  const texts = sentences();
  const vectors = matrix(texts);
  // Two chunks a record, the second of a record far from the first in the list.
  const half = Math.floor(texts.length / 2);
  const chunkRecords = Uint32Array.from(texts.keys(), (chunk) => chunk % half);
  const recordCount = half;

  async function scans(shortlist: number) {
    const index = await createVectorIndex(DIMS, { quantization: 'f32', connectivity: 16, expansionAdd: 256, expansionSearch: 512, addThreads: 1 });
    index.add(vectors.subarray(0, chunkRecords.length * DIMS), 0);
    const scanner = createVectorScanner(vectors.subarray(0, chunkRecords.length * DIMS), DIMS, { kernel: 'js' });
    // The graph's own shortlist (the binary codes' is tested in binary-scan.test.ts).
    const common = { scanner, chunkRecords, recordCount, approximateFrom: 0, shortlist, wordRecords: 8, codesBelow: 0 };
    return { approximate: createChunkScan({ ...common, approximate: index }), exact: createChunkScan(common) };
  }

  it("estimates the mean and spread of every allowed record's cosine from its sample, as the exact scan has them", async () => {
    const { approximate, exact } = await scans(32);
    expect(approximate.approximate).toBe(true);
    for (const question of texts.filter((_, index) => index % 97 === 0).slice(0, 8)) {
      const query = hashedVector(`${question} again`, DIMS);
      for (const mask of [new Uint8Array(recordCount).fill(1), new Uint8Array(recordCount).map((_, record) => (record % 2 === 0 ? 1 : 0))]) {
        const found = await approximate.scan(query, mask);
        const all = await exact.scan(query, mask);
        expect(all.population).toBeUndefined(); // every allowed record has its cosine
        const cosines = [...all.best].filter((_, record) => mask[record] === 1);
        const mean = cosines.reduce((sum, value) => sum + value, 0) / cosines.length;
        const deviation = Math.sqrt(cosines.reduce((sum, value) => sum + (value - mean) ** 2, 0) / cosines.length);
        // The sample is every record here (fewer than POPULATION_SAMPLE): the estimate is the population itself.
        expect(recordCount).toBeLessThan(POPULATION_SAMPLE);
        expect(found.population!.mean).toBeCloseTo(mean, 5);
        expect(found.population!.deviation).toBeCloseTo(deviation, 5);
        // The shortlist's records carry their exact cosine; the others none.
        let known = 0;
        found.best.forEach((value, record) => {
          if (value > -2) {
            known++;
            expect(value).toBeCloseTo(all.best[record]!, 5);
          }
        });
        expect(known).toBeLessThan(cosines.length);
        // `scored` lists exactly those records, ascending (the first ranking's sparse scope reads it).
        expect([...found.scored!]).toEqual([...found.best.keys()].filter((record) => found.best[record]! > -2));
      }
    }
  });

  it('estimates the population from an even stride when the allowed records outnumber the sample, and scores the records words bring', async () => {
    const count = 20_000; // one chunk a record, several times POPULATION_SAMPLE
    const many = new Float32Array(count * DIMS);
    for (let record = 0; record < count; record++) many.set(hashedVector(`${texts[record % texts.length]} ${record % 7}`, DIMS), record * DIMS);
    const index = await createVectorIndex(DIMS, { quantization: 'f32', connectivity: 16, expansionAdd: 128, expansionSearch: 128, addThreads: 1 });
    index.add(many, 0);
    const scanner = createVectorScanner(many, DIMS, { kernel: 'js' });
    const common = {
      scanner,
      chunkRecords: Uint32Array.from({ length: count }, (_, record) => record),
      recordCount: count,
      approximateFrom: 0,
      shortlist: 64,
      wordRecords: 8,
      codesBelow: 0,
    };
    const approximate = createChunkScan({ ...common, approximate: index });
    const exact = createChunkScan(common);
    const mask = new Uint8Array(count).fill(1);
    for (const question of texts.slice(0, 5)) {
      const query = hashedVector(question, DIMS);
      const all = [...(await exact.scan(query, mask)).best];
      const mean = all.reduce((sum, value) => sum + value, 0) / count;
      const deviation = Math.sqrt(all.reduce((sum, value) => sum + (value - mean) ** 2, 0) / count);
      const words = [count - 1, count - 2, 3]; // records the words rank best, wherever their vectors are
      const found = await approximate.scan(query, mask, words);
      // About 1.6 % of a deviation for the mean from 4,096 of 20,000; the bounds leave room.
      expect(Math.abs(found.population!.mean - mean)).toBeLessThan(0.15 * deviation);
      // Exactly the stride's records' exact cosines: every fourth record here (20,000 / 4,096).
      const stride = all.filter((_, record) => record % Math.floor(count / POPULATION_SAMPLE) === 0);
      const strideMean = stride.reduce((sum, value) => sum + value, 0) / stride.length;
      expect(found.population!.mean).toBeCloseTo(strideMean, 6);
      expect(found.population!.deviation).toBeCloseTo(Math.sqrt(stride.reduce((sum, value) => sum + value * value, 0) / stride.length - strideMean ** 2), 6);
      // Under a filter the same estimate is made from the allowed records' stride, the scored ones read as they are.
      const half = Uint8Array.from({ length: count }, (_, record) => (record % 2 === 0 ? 1 : 0));
      const filtered = await approximate.scan(query, half, [0, 2]);
      const allowedAll = all.filter((_, record) => record % 2 === 0);
      const allowedStride = allowedAll.filter((_, at) => at % Math.floor(allowedAll.length / POPULATION_SAMPLE) === 0);
      const allowedMean = allowedStride.reduce((sum, value) => sum + value, 0) / allowedStride.length;
      expect(filtered.population!.mean).toBeCloseTo(allowedMean, 6);
      expect(found.population!.deviation / deviation).toBeGreaterThan(0.85);
      expect(found.population!.deviation / deviation).toBeLessThan(1.15);
      for (const record of words) {
        expect(found.best[record]).toBeCloseTo(all[record]!, 5);
        expect(found.scored).toContain(record);
      }
      expect(found.scored!.length).toBeLessThan(count / 10);
    }
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
    expect(await writeVectorIndex(path.join(dir, 'below.usearch'), vectors, DIMS, 101, () => {})).toBeUndefined();
    expect(existsSync(path.join(dir, 'below.usearch'))).toBe(false);
    expect(await writeVectorIndex(path.join(dir, 'at.usearch'), vectors, DIMS, 100, () => {})).toEqual({});
    expect(existsSync(path.join(dir, 'at.usearch'))).toBe(true);
  });
});

describe('search through the approximate path', () => {
  let exact: Corpus;
  let approximate: Corpus;
  /** The same path with the shortlist from a scan of binary codes rather than the graph (binary-scan.ts). */
  let viaCodes: Corpus;
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
    approximate = await loadCorpus(artifactsDir, embedder, { fusion: 'max', approximateFrom: 0, approximateShortlist: shortlist, approximateCodesBelow: 0 });
    viaCodes = await loadCorpus(artifactsDir, embedder, { fusion: 'max', approximateFrom: 0, approximateShortlist: shortlist });
  }, 120_000);
  const both = () => [approximate, viaCodes];

  it('takes the approximate path only when forced below the default threshold', () => {
    expect(chunks).toBeGreaterThan(shortlist * 4);
    expect(chunks).toBeLessThan(APPROXIMATE_FROM);
    expect(exact.search.approximate).toBe(false);
    expect(approximate.search.approximate).toBe(true);
    expect(approximate.search.shortlistFrom).toBe('index');
    expect(viaCodes.search.approximate).toBe(true);
    expect(viaCodes.search.shortlistFrom).toBe('codes');
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
      for (const corpus of both()) expect(await corpus.search.search(question, { limit: 5 })).toEqual(expected);
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
        for (const corpus of both()) {
          const found = await corpus.search.search(question, { limit: 5, filters });
          expect(found).toEqual(expected);
          for (const hit of found) {
            if (filters.layers) expect(filters.layers).toContain(hit.record.layer);
            if (filters.rings) expect(filters.rings).toContain(hit.record.ring);
            if (filters.excludeIds) expect(filters.excludeIds.has(hit.record.id)).toBe(false);
          }
        }
      }
    }
  });

  it('fuses only the records either side ranks, under z-scores, and ranks the same as fusing every record', async () => {
    // A pool and candidate count well below the records, so the first ranking's scope is sparse.
    const dir = approximate.publicDir.replace(/[/\\]public$/, '');
    for (const codesBelow of [0, Number.POSITIVE_INFINITY]) {
      const tuning = {
        approximateFrom: 0,
        approximateShortlist: 16,
        feedbackPool: 12,
        candidates: 6,
        approximateWordRecords: 4,
        approximateCodesBelow: codesBelow,
      };
      const sparse = await loadCorpus(dir, approximate.search.embedder, tuning);
      const dense = await loadCorpus(dir, approximate.search.embedder, { ...tuning, sparseFusion: false });
      expect(sparse.search.records.length).toBeGreaterThan(tuning.feedbackPool * 4);
      for (const filters of [undefined, { rings: ['core' as const] }, { excludeIds: new Set(exact.search.records.slice(0, 20).map((record) => record.id)) }]) {
        for (const question of questions) {
          for (const limit of [3, 6]) {
            const expected = await dense.search.search(question, { limit, ...(filters ? { filters } : {}) });
            expect(await sparse.search.search(question, { limit, ...(filters ? { filters } : {}) })).toEqual(expected);
          }
        }
      }
    }
  });

  it('holds the rows as int8 from quantizeFrom on: the records float32 rows give, each figure within a few thousandths', async () => {
    const dir = approximate.publicDir.replace(/[/\\]public$/, '');
    // Floors off: a record whose cosine sits on a floor may fall either side of it.
    const options = { fusion: 'max' as const, floors: false, approximateFrom: 0, approximateShortlist: shortlist };
    const int8 = await loadCorpus(dir, approximate.search.embedder, { ...options, quantizeFrom: 0 });
    const float32 = await loadCorpus(dir, approximate.search.embedder, options);
    for (const question of questions) {
      expectCloseResults(await int8.search.search(question, { limit: 5 }), await float32.search.search(question, { limit: 5 }));
      expectCloseResults(await int8.search.similar(question, () => true, 5), await float32.search.similar(question, () => true, 5));
    }
  });

  it("reads the build's int8 rows (vectors.i8) where it holds int8: the rows it would have quantized itself", async () => {
    const dir = approximate.publicDir.replace(/[/\\]public$/, '');
    const paths = artifactPaths(dir);
    const options = { fusion: 'max' as const, approximateFrom: 0, approximateShortlist: shortlist, quantizeFrom: 0 };
    const quantizedHere = await loadCorpus(dir, approximate.search.embedder, options);
    const floats = new Float32Array(new Uint8Array(readFileSync(paths.searchVectors)).buffer);
    const dims = approximate.search.embedder.dims;
    writeQuantizedVectors(paths.searchQuantized, floats, dims);
    try {
      expect(statSync(paths.searchQuantized).size).toBe((floats.length / dims) * (4 + dims));
      const fromFile = await loadCorpus(dir, approximate.search.embedder, options);
      for (const question of questions.slice(0, 3)) {
        expect(await fromFile.search.search(question, { limit: 5 })).toEqual(await quantizedHere.search.search(question, { limit: 5 }));
      }
      // It is the file that is read: rows of zeros there give every cosine 0.
      writeFileSync(paths.searchQuantized, new Uint8Array(statSync(paths.searchQuantized).size));
      const zeros = await loadCorpus(dir, approximate.search.embedder, { ...options, floors: false });
      expect((await zeros.search.similar(questions[0]!, () => true, 3)).map((hit) => hit.score)).toEqual([0, 0, 0]);
      // A file of another size (another build's) is not read: the floats are quantized instead.
      writeFileSync(paths.searchQuantized, new Uint8Array(10));
      const resized = await loadCorpus(dir, approximate.search.embedder, options);
      expect(await resized.search.search(questions[0]!, { limit: 5 })).toEqual(await quantizedHere.search.search(questions[0]!, { limit: 5 }));
    } finally {
      rmSync(paths.searchQuantized, { force: true });
    }
  });

  it('serves the Atlas similarity search the same', async () => {
    const isAtlas = (record: { kind: string }) => record.kind === 'divergence';
    for (const question of questions.slice(0, 3)) {
      for (const corpus of both()) expect(await corpus.search.similar(question, isAtlas, 5)).toEqual(await exact.search.similar(question, isAtlas, 5));
    }
  });
});

describe('passages read in place', () => {
  it("feeds back the same words from the passages file as from the postings' forward index: the same results", async () => {
    const artifactsDir = tempDir('passages-artifacts');
    const embedder = createHashedEmbedder();
    await buildArtifacts({ contentDir: path.join(REPO_ROOT, 'content'), artifactsDir, cacheDir: tempDir('passages-cache'), embedder });
    const file = artifactPaths(artifactsDir).searchPassages;
    expect(existsSync(file)).toBe(true);
    const inPlace = await loadCorpus(artifactsDir, embedder);
    // Without the file (artifacts of an older build) the terms come from the forward index.
    renameSync(file, `${file}.away`);
    const forward = await loadCorpus(artifactsDir, embedder);
    const questions = ['memory and forgetting across conversations', 'is honesty more important than kindness', 'the ethics of persuasion'];
    for (const question of questions) {
      const expected = await forward.search.search(question, { limit: 8 });
      expect(expected.length).toBeGreaterThan(0);
      expect(await inPlace.search.search(question, { limit: 8 })).toEqual(expected);
    }
  }, 120_000);
});

describe('an index that grows with the corpus (incremental builds)', () => {
  it('tokenises every passage again over a full-text index of an older format, and writes the current one', async () => {
    const { artifactsDir, lines, build } = repeatedBuilds('older-fulltext');
    await build();
    const file = artifactPaths(artifactsDir).searchFullText;
    const current = readFileSync(file);
    // Version 1 of the file (a title field beside the passages) as an older build left it.
    const older = Buffer.from(current);
    older[7] = 1;
    writeFileSync(file, older);
    lines.length = 0;
    await build();
    expect(
      lines.some((line) => /^the previous build's full-text index cannot be reused \(.*not in the current format.*\): tokenising every passage$/.test(line)),
    ).toBe(true);
    expect(lines.some((line) => /carried over from the previous build's full-text index/.test(line))).toBe(false);
    expect(readFileSync(file).equals(current)).toBe(true);
  }, 120_000);

  it('keeps the passages a build already had, adds the new, removes the changed: the same results as a new index', async () => {
    const { contentDir, artifactsDir, cacheDir, embedder, lines, build } = repeatedBuilds('grow', { approximateFrom: 0 });
    await build();
    expect(lines.some((line) => line.startsWith('indexed '))).toBe(true);
    const before = JSON.parse(readFileSync(artifactPaths(artifactsDir).searchMeta, 'utf8')) as { chunk_records: number[]; chunk_keys?: number[] };
    expect(before.chunk_keys).toBeUndefined(); // a new index numbers keys as chunks

    // One work edited (its passages change), one added with an id that sorts among the others.
    const edited = path.join(contentDir, 'works', 'PLY-10.md');
    writeFileSync(edited, `${readFileSync(edited, 'utf8').trimEnd()}\n\nA closing paragraph about lighthouses, tides and the keepers who logged them.\n`);
    const [, frontmatter] = readFileSync(path.join(contentDir, 'works', 'PLY-1.md'), 'utf8').split('---\n');
    const added = frontmatter!.replace('id: PLY-1\n', 'id: PLY-5000\n').replace(/title: .*\n/, 'title: "Orchards, Grafting and Patience"\n');
    writeFileSync(
      path.join(contentDir, 'works', 'PLY-5000.md'),
      `---\n${added}---\nGrafting joins a scion to a rootstock. The orchard keeps what the grafter chose, for decades.\n`,
    );
    lines.length = 0;
    const rebuilt = await build();
    const grew = lines.find((line) => line.startsWith('grew the approximate index'));
    expect(grew).toMatch(/: [1-9]\d* added, [1-9]\d* removed/);
    const meta = JSON.parse(readFileSync(artifactPaths(artifactsDir).searchMeta, 'utf8')) as { chunk_records: number[]; chunk_keys?: number[] };
    expect(meta.chunk_records).toHaveLength(rebuilt.chunks);
    expect(meta.chunk_keys).toHaveLength(rebuilt.chunks);
    expect(new Set(meta.chunk_keys).size).toBe(rebuilt.chunks);

    // Searched through the grown index with a shortlist of every passage (the keys mapped back
    // to chunks, nothing left to the graph), and exactly through a new build of the same passages.
    // (The graph's shortlist, approximateCodesBelow 0: a scan of binary codes reads no keys.)
    const everything = await loadCorpus(artifactsDir, embedder, {
      fusion: 'max',
      approximateFrom: 0,
      approximateShortlist: rebuilt.chunks,
      approximateCodesBelow: 0,
    });
    const freshDir = tempDir('grow-fresh');
    await buildArtifacts({ contentDir, artifactsDir: freshDir, cacheDir, embedder, approximateFrom: 0 });
    const exact = await loadCorpus(freshDir, embedder, { fusion: 'max' });
    expect(everything.search.approximate).toBe(true);
    // The full-text index carried the unchanged passages over: byte for byte the new build's.
    expect(lines.some((line) => /^\d+ of them carried over from the previous build's full-text index, [1-9]\d* tokenised$/.test(line))).toBe(true);
    expect(readFileSync(artifactPaths(artifactsDir).searchFullText).equals(readFileSync(artifactPaths(freshDir).searchFullText))).toBe(true);
    expect(readFileSync(artifactPaths(artifactsDir).searchPassages).equals(readFileSync(artifactPaths(freshDir).searchPassages))).toBe(true);
    const research = { layers: ['research' as const] };
    for (const question of ['grafting a scion onto rootstock in the orchard', 'lighthouse keepers and tides', 'memory and forgetting across conversations']) {
      expect(await everything.search.search(question, { limit: 5 })).toEqual(await exact.search.search(question, { limit: 5 }));
      expect(await everything.search.search(question, { limit: 5, filters: research })).toEqual(
        await exact.search.search(question, { limit: 5, filters: research }),
      );
    }
    // With a short shortlist the graph chooses, filtered through the keys too: the new and the
    // edited passages are found by their own words, and a filter keeps to its records.
    const grown = await loadCorpus(artifactsDir, embedder, { fusion: 'max', approximateFrom: 0, approximateShortlist: 16, approximateCodesBelow: 0 });
    const nearest = async (text: string, predicate: (record: { layer: string }) => boolean = () => true) =>
      (await grown.search.similar(text, predicate, 1))[0]?.record.id;
    expect(await nearest('Grafting joins a scion to a rootstock. The orchard keeps what the grafter chose, for decades.')).toBe('PLY-5000');
    expect(await nearest('A closing paragraph about lighthouses, tides and the keepers who logged them.', (record) => record.layer === 'research')).toBe(
      'PLY-10',
    );
    const atlas = await grown.search.similar('lighthouse keepers', (record) => record.layer === 'divergence', 5);
    expect(atlas).toHaveLength(5);
    expect(atlas.every((hit) => hit.record.layer === 'divergence')).toBe(true);
  }, 180_000);

  it('builds the index again when too much changed, or the embedder did', async () => {
    const previous = { identities: ['a', 'b', 'c', 'd', 'e'], keys: Uint32Array.from([0, 1, 2, 3, 4]) };
    const plan = planKeys(previous, ['b', 'x', 'a', 'e', 'e']);
    expect(Array.from(plan.keys)).toEqual([1, 5, 0, 4, 6]);
    expect(plan.added).toEqual([1, 4]);
    expect(plan.removed.sort()).toEqual([2, 3]);
    const dir = tempDir('grow-share');
    const vectors = matrix(sentences().slice(0, 50));
    const lines: string[] = [];
    const file = path.join(dir, 'first.usearch');
    await writeVectorIndex(file, vectors, DIMS, 0, () => {});
    const identities = Array.from({ length: 50 }, (_, chunk) => `p${chunk}`);
    const prior = { file, embedderId: 'e1', dims: DIMS, identities, keys: Uint32Array.from(identities.keys()) };
    // Eleven of fifty passages new (22 %): built again.
    const changed = identities.map((identity, chunk) => (chunk < 11 ? `new${chunk}` : identity));
    expect(
      await writeVectorIndex(path.join(dir, 'second.usearch'), vectors, DIMS, 0, (line) => lines.push(line), {
        previous: prior,
        embedderId: 'e1',
        identities: changed,
      }),
    ).toEqual({});
    expect(lines.at(-1)).toMatch(/^indexed 50 /);
    // Another embedder: built again whatever changed.
    expect(
      await writeVectorIndex(path.join(dir, 'third.usearch'), vectors, DIMS, 0, (line) => lines.push(line), { previous: prior, embedderId: 'e2', identities }),
    ).toEqual({});
    // One new passage: grown, in place of the one it replaced.
    const one = identities.map((identity, chunk) => (chunk === 7 ? 'seven again' : identity));
    const grown = await writeVectorIndex(path.join(dir, 'fourth.usearch'), vectors, DIMS, 0, (line) => lines.push(line), {
      previous: prior,
      embedderId: 'e1',
      identities: one,
    });
    expect(grown?.grown).toEqual({ added: 1, removed: 1 });
    expect(Array.from(grown!.chunkKeys!)).toEqual(identities.map((_, chunk) => (chunk === 7 ? 50 : chunk)));
    const reopened = await viewVectorIndex(path.join(dir, 'fourth.usearch'), DIMS);
    expect(reopened.size).toBe(50);
    expect(reopened.search(vectors.subarray(7 * DIMS, 8 * DIMS), 1)[0]).toBe(50);
  });
});
