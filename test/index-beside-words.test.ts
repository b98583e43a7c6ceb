/**
 * The server's approximate index answers from a worker thread of its own while the question's
 * words are scored on the server's thread (search-index.ts): the index is asked as soon as the
 * question's vector comes, which needs the scoring to pause now and then (bm25.ts
 * `scoresPausing`); the worker adapter (providers/vector-index-worker.ts) answers as the index
 * in this thread does, and fails loudly rather than silently.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { buildBm25Data, loadBm25Index, PAUSE_PASSAGES, type FullTextIndex, type FullTextQueryOptions } from '../core/search/bm25.ts';
import { createSearchIndex } from '../core/search/search-index.ts';
import type { Embedder } from '../core/ports/embedder.ts';
import type { ApproximateVectorIndex } from '../core/ports/vector-index.ts';
import { seededRandom } from '../core/random.ts';
import { createVectorScanner } from '../core/search/vector-scan.ts';
import { createBinaryScan, signCode } from '../core/search/binary-scan.ts';
import { createHashedEmbedder } from '../devkit/hashed-embedder.ts';
import { searchRecord } from './helpers/search-record.ts';
import { createVectorIndex } from '../providers/vector-index.ts';
import { openVectorIndexWorker } from '../providers/vector-index-worker.ts';

const OPTIONS: FullTextQueryOptions = { text: { k1: 1.5, b: 1 } };
const dirs: string[] = [];
afterAll(() => dirs.forEach((dir) => rmSync(dir, { recursive: true, force: true })));

describe('the index beside the words', () => {
  it('scores every passage with pauses between blocks, to the same scores bit for bit, filtered or not', async () => {
    const next = seededRandom(17);
    const vocabulary = Array.from({ length: 200 }, (_, i) => `w${i.toString(36)}q`);
    const word = () => vocabulary[Math.floor(vocabulary.length * next() ** 3)]!;
    const records = 24_000;
    const chunks = Array.from({ length: 3 * records }, (_, i) => ({ record: i % records, text: Array.from({ length: 2 + (i % 7) }, word).join(' ') }));
    expect(chunks.length).toBeGreaterThan(PAUSE_PASSAGES);
    const index = await loadBm25Index(await buildBm25Data({ recordCount: records, chunks }));
    const allowed = Uint8Array.from({ length: records }, () => (next() < 0.4 ? 1 : 0));
    for (const question of ['w0q w1q w7q', 'w2q w2q wzq nothing', 'absent words only', '']) {
      for (const mask of [undefined, allowed]) {
        let pauses = 0;
        const paused = await index.scoresPausing(question, OPTIONS, mask, async () => {
          pauses++;
          await new Promise((resolve) => setImmediate(resolve));
        });
        expect([...paused]).toEqual([...index.scores(question, OPTIONS, mask)]);
        // No word in the question: nothing to score, nothing to pause for.
        expect(pauses).toBe(question === '' ? 0 : Math.floor(chunks.length / PAUSE_PASSAGES));
      }
    }
  });

  it('asks the index for the question as soon as its vector comes, while the words are still being scored, and ranks as with an index that answers at once', async () => {
    const events: string[] = [];
    const dims = 32;
    const hashed = createHashedEmbedder(dims);
    // As a worker thread: the vector comes back in a message, a turn of the event loop later.
    const embedder: Embedder = {
      id: hashed.id,
      dims,
      embed: async (texts) => {
        const vectors = await hashed.embed(texts);
        await new Promise((resolve) => setImmediate(resolve));
        events.push('vector came');
        return vectors;
      },
    };
    const titles = ['memory and models', 'bread and rivers', 'voices in dissent', 'models that remember', 'rivers of bread'];
    const records = titles.map((title, i) => searchRecord({ id: `r${i}`, title, contributors: [`voice ${i % 5}`] }));
    const chunks = records.flatMap((item, i) => [0, 1].map((j) => ({ record: i, text: `${item.title}: passage ${j} about ${item.title}` })));
    const vectors = new Float32Array(chunks.length * dims);
    (await hashed.embed(chunks.map((chunk) => chunk.text))).forEach((vector, i) => vectors.set(vector, i * dims));
    const index = await loadBm25Index(await buildBm25Data({ recordCount: titles.length, chunks }));
    const fullText: FullTextIndex = {
      ...index,
      passages: index.passages,
      async scoresPausing(query, options, allowed, pause) {
        events.push('words started');
        for (let i = 0; i < 3; i++) await pause();
        events.push('words scored');
        return index.scores(query, options, allowed);
      },
    };
    // Every chunk, nearest first, by exact dot products: answering now, or later as a worker does.
    const nearest = (query: Float32Array, k: number) => {
      const dots = Array.from({ length: chunks.length }, (_, chunk) => {
        let dot = 0;
        for (let d = 0; d < dims; d++) dot += query[d]! * vectors[chunk * dims + d]!;
        return dot;
      });
      return Uint32Array.from([...dots.keys()].sort((a, b) => dots[b]! - dots[a]!).slice(0, k));
    };
    // Its thread takes the feedback's products too: here a scanner of its own over the same vectors.
    const products = createVectorScanner(vectors, dims);
    let productsAsked = 0;
    const later: ApproximateVectorIndex = {
      size: chunks.length,
      dims,
      search: (query, k) => {
        events.push('index asked');
        return new Promise((resolve) => setTimeout(() => resolve(nearest(query, k)), 5));
      },
      shareScan: (shared) => {
        expect(shared.count).toBe(chunks.length);
        return (query, rows) => {
          productsAsked++;
          const dots = products.dotsOf(query, rows).slice();
          return new Promise((resolve) => setTimeout(() => resolve(dots), 5));
        };
      },
    };
    const now: ApproximateVectorIndex = { size: chunks.length, dims, search: nearest };
    const meta = { embedder: { id: hashed.id, dims }, records, chunk_records: chunks.map((chunk) => chunk.record), built_at: '' };
    const tuning = { floors: false, approximateFrom: 0, approximateShortlist: 6, approximateWordRecords: 1, approximateCodesBelow: 0 };
    const beside = createSearchIndex({ meta, vectors, fullText, embedder, tuning, approximate: later });
    const inTurn = createSearchIndex({ meta, vectors, fullText: index, embedder: hashed, tuning, approximate: now });
    expect(beside.approximate).toBe(true);
    for (const question of ['models that remember memory', 'bread rivers']) {
      events.length = 0;
      const found = await beside.search(question, { limit: 5 });
      expect(events).toEqual(['words started', 'vector came', 'index asked', 'words scored']);
      expect(found).toEqual(await inTurn.search(question, { limit: 5 }));
    }
    expect(productsAsked).toBe(4); // the shortlist's and the feedback's vectors, twice a question
    // Where the other thread cannot give the feedback's products, this one scores them: the same results.
    const failing = createSearchIndex({
      meta,
      vectors,
      fullText,
      embedder,
      tuning,
      approximate: { ...later, shareScan: () => () => Promise.reject(new Error('the thread is gone')) },
    });
    for (const question of ['models that remember memory', 'bread rivers']) {
      expect(await failing.search(question, { limit: 5 })).toEqual(await inTurn.search(question, { limit: 5 }));
    }
    // Where the index itself cannot answer (its thread gone), the exact scan serves: the exact path's results.
    const gone: ApproximateVectorIndex = { ...later, search: () => Promise.reject(new Error('the vector index worker exited with code 1')) };
    const withoutIndex = createSearchIndex({ meta, vectors, fullText, embedder, tuning, approximate: gone });
    const exact = createSearchIndex({ meta, vectors, fullText: index, embedder: hashed, tuning: { ...tuning, approximateFrom: Number.POSITIVE_INFINITY } });
    expect(withoutIndex.approximate).toBe(true);
    expect(exact.approximate).toBe(false);
    for (const question of ['models that remember memory', 'bread rivers']) {
      expect(await withoutIndex.search(question, { limit: 5 })).toEqual(await exact.search(question, { limit: 5 }));
      const isEven = (record: { id: string }) => Number(record.id.slice(1)) % 2 === 0;
      expect(await withoutIndex.similar(question, isEven, 3)).toEqual(await exact.similar(question, isEven, 3));
    }
  });
});

describe('the vector index in a worker thread', () => {
  const DIMS = 16;
  async function saved(dims = DIMS) {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'index-worker-'));
    dirs.push(dir);
    const next = seededRandom(3);
    const count = 600;
    const vectors = Float32Array.from({ length: count * dims }, () => next() - 0.5);
    for (let row = 0; row < count; row++) {
      const v = vectors.subarray(row * dims, (row + 1) * dims);
      const norm = Math.hypot(...v);
      v.forEach((x, d) => (v[d] = x / norm));
    }
    const parameters = { quantization: 'f32' as const, connectivity: 16, expansionAdd: 128, expansionSearch: 128, addThreads: 1 };
    const index = await createVectorIndex(dims, parameters);
    index.add(vectors, 0);
    const file = path.join(dir, 'vectors.usearch');
    index.save(file);
    return { file, vectors, count, index, parameters };
  }

  it('answers as the index in this thread does, with and without a filter', async () => {
    const { file, vectors, count, index, parameters } = await saved();
    const worker = await openVectorIndexWorker(file, DIMS, parameters);
    try {
      expect(worker.size).toBe(count);
      expect(worker.dims).toBe(DIMS);
      const rare = Uint8Array.from({ length: count }, (_, key) => (key % 50 === 0 ? 1 : 0));
      for (let row = 0; row < 20; row++) {
        const query = vectors.slice(row * DIMS, (row + 1) * DIMS);
        expect([...(await worker.search(query, 10))]).toEqual([...index.search(query, 10)]);
        expect([...(await worker.search(query, 5, rare))]).toEqual([...index.search(query, 5, rare)]);
      }
      // Searches asked together are answered each its own.
      const queries = [0, 1, 2, 3].map((row) => vectors.slice(row * DIMS, (row + 1) * DIMS));
      const together = await Promise.all(queries.map((query) => worker.search(query, 3)));
      together.forEach((keys, row) => expect(keys[0]).toBe(row));
      await expect(worker.search(new Float32Array(DIMS + 1), 3)).rejects.toThrow(/dimensions/);
    } finally {
      await worker.close();
    }
    await expect(worker.search(vectors.slice(0, DIMS), 3)).rejects.toThrow(/closed/);
  });

  it.each(['f32', 'i8'] as const)(
    "takes the products of listed rows over the scan kernel's shared memory, the scanner's own values bit for bit (%s rows)",
    async (precision) => {
      const { file, vectors, count, parameters } = await saved();
      const scanner = createVectorScanner(vectors, DIMS, { precision });
      expect(scanner.precision).toBe(precision);
      expect(scanner.kernel).toBe('wasm-simd');
      const worker = await openVectorIndexWorker(file, DIMS, parameters);
      try {
        const products = worker.shareScan(scanner.shared!);
        const next = seededRandom(9);
        const questions = Array.from({ length: 6 }, (_, q) => {
          const query = vectors.slice(q * DIMS, (q + 1) * DIMS);
          const rows = Uint32Array.from({ length: 1 + Math.floor(next() * count) }, () => Math.floor(next() * count)).sort();
          return { query, rows };
        });
        // Asked together, and while this thread uses the scanner itself: each answer its own.
        const answers = await Promise.all(questions.map(({ query, rows }) => products(query, rows)));
        answers.forEach((dots, q) => expect([...dots]).toEqual([...scanner.dotsOf(questions[q]!.query, questions[q]!.rows)]));
        await expect(products(vectors.slice(0, DIMS), Uint32Array.of(count))).rejects.toThrow(/no row/);
        await expect(products(new Float32Array(DIMS + 1), Uint32Array.of(0))).rejects.toThrow(/dimensions/);
        // A second scanner shared with the same worker: each gets its own memory's products.
        const other = createVectorScanner(
          vectors.map((value) => -value),
          DIMS,
          { precision },
        );
        const otherProducts = worker.shareScan(other.shared!);
        const { query, rows } = questions[0]!;
        expect([...(await otherProducts(query, rows))]).toEqual([...other.dotsOf(query, rows)]);
        expect([...(await products(query, rows))]).toEqual([...scanner.dotsOf(query, rows)]);
        // One that cannot be shared says so when asked, and the others still answer.
        const broken = worker.shareScan({ ...scanner.shared!, module: {} as WebAssembly.Module });
        await expect(broken(query, rows)).rejects.toThrow(/could not be shared/);
        expect([...(await products(query, rows))]).toEqual([...scanner.dotsOf(query, rows)]);
      } finally {
        await worker.close();
      }
    },
  );

  it.each(['f32', 'i8'] as const)(
    "searches the graph and takes the nearest rows' products in one answer, as a search then the products would (%s rows)",
    async (precision) => {
      const { file, vectors, count, index, parameters } = await saved();
      const scanner = createVectorScanner(vectors, DIMS, { precision });
      const worker = await openVectorIndexWorker(file, DIMS, parameters);
      try {
        const near = worker.shareNear(scanner.shared!);
        const questions = [0, 3, 7, 11].map((row, q) => ({ query: vectors.slice(row * DIMS, (row + 1) * DIMS), k: [1, 10, 60, count + 5][q]! }));
        // Asked together, and while this thread uses the scanner itself: each answer its own.
        const answers = await Promise.all(questions.map(({ query, k }) => near(query, k)));
        answers.forEach((answer, q) => {
          const { query, k } = questions[q]!;
          const expected = Uint32Array.from(index.search(query, k)).sort();
          expect(answer.near.length).toBe(Math.min(k, count));
          expect([...answer.near]).toEqual([...expected]);
          expect([...answer.dots]).toEqual([...scanner.dotsOf(query, expected)]);
        });
        expect((await near(questions[0]!.query, 0)).near.length).toBe(0);
        await expect(near(new Float32Array(DIMS + 1), 3)).rejects.toThrow(/dimensions/);
        const broken = worker.shareNear({ ...scanner.shared!, module: {} as WebAssembly.Module });
        await expect(broken(questions[0]!.query, 3)).rejects.toThrow(/could not be shared/);
      } finally {
        await worker.close();
      }
    },
  );

  it('scans the binary codes and takes their products in one answer, the rows and values of this thread’s scan bit for bit', async () => {
    const dims = 64;
    const { file, vectors, count, parameters } = await saved(dims);
    const scanner = createVectorScanner(vectors, dims);
    const codes = createBinaryScan(scanner);
    const worker = await openVectorIndexWorker(file, dims, parameters);
    try {
      const remote = worker.shareCodes(codes.shared, scanner.shared!);
      const codeOf = (query: Float32Array) => {
        const code = new Uint8Array(dims / 8);
        signCode(query, 0, dims, code, 0);
        return code;
      };
      const rare = Uint8Array.from({ length: count }, (_, chunk) => (chunk % 7 === 0 ? 1 : 0));
      const questions = [0, 1, 2, 3, 4, 5].map((row) => ({
        query: vectors.slice(row * dims, (row + 1) * dims),
        k: 5 + 40 * row,
        mask: row % 2 ? rare : undefined,
      }));
      // Asked together, and while this thread scans the same codes itself: each answer its own.
      const answers = await Promise.all(questions.map(({ query, k, mask }) => remote(query, codeOf(query), k, mask)));
      answers.forEach(({ near, dots }, q) => {
        const { query, k, mask } = questions[q]!;
        const expected = codes.nearest(query, k, mask);
        expect([...near]).toEqual([...expected]);
        expect([...dots]).toEqual([...scanner.dotsOf(query, expected)]);
      });
      const query = questions[0]!.query;
      await expect(remote(query, new Uint8Array(3), 5)).rejects.toThrow(/a code of 3 bytes/);
      await expect(remote(query, codeOf(query), 5, new Uint8Array(count + 1))).rejects.toThrow(/a mask of/);
      const broken = worker.shareCodes({ ...codes.shared, module: {} as WebAssembly.Module }, scanner.shared!);
      await expect(broken(query, codeOf(query), 5)).rejects.toThrow(/could not be shared/);
      expect([...(await remote(query, codeOf(query), 5)).near]).toEqual([...codes.nearest(query, 5)]);
    } finally {
      await worker.close();
    }
  });

  it('refuses a file it cannot open, or of another dimension, saying which', async () => {
    const { file, parameters } = await saved();
    await expect(openVectorIndexWorker(`${file}.missing`, DIMS, parameters)).rejects.toThrow(/no vector index at .*missing: rebuild/);
    await expect(openVectorIndexWorker(file, DIMS * 2, parameters)).rejects.toThrow(/16-dimension vectors, the search 32: rebuild/);
  });
});
