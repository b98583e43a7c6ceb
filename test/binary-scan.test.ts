/**
 * The approximate path's shortlist from a whole scan of binary codes (binary-scan.ts): the
 * nearest codes by Hamming distance, exactly as a plain reference finds them, filtered or not,
 * ties at the cut in chunk order; and the chunk scan over it (chunk-scan.ts), whose cosines are
 * the exact scan's for every chunk it shortlists.
 */
import { describe, expect, it } from 'vitest';
import { binaryScanSupported, createBinaryScan, signCode } from '../core/search/binary-scan.ts';
import { createChunkScan } from '../core/search/chunk-scan.ts';
import { seededRandom } from '../core/random.ts';
import { createVectorScanner } from '../core/search/vector-scan.ts';
import type { ApproximateVectorIndex } from '../core/ports/vector-index.ts';

const DIMS = 128;

function unitRows(count: number, dims: number, seed: number): Float32Array {
  const next = seededRandom(seed);
  const vectors = new Float32Array(count * dims);
  // Rows around a few centres, as embeddings cluster: many near ties in Hamming distance.
  const centres = Array.from({ length: 5 }, () => Float32Array.from({ length: dims }, () => next() - 0.5));
  for (let row = 0; row < count; row++) {
    const centre = centres[row % centres.length]!;
    let norm = 0;
    for (let d = 0; d < dims; d++) {
      const value = centre[d]! + (next() - 0.5) * 0.8;
      vectors[row * dims + d] = value;
      norm += value * value;
    }
    for (let d = 0; d < dims; d++) vectors[row * dims + d]! /= Math.sqrt(norm);
  }
  return vectors;
}

/** Hamming distance by bits, then the k nearest by (distance, chunk): the plain reference. */
function referenceNearest(vectors: Float32Array, query: Float32Array, k: number, mask?: Uint8Array): number[] {
  const count = vectors.length / DIMS;
  const distance = (row: number) => {
    let bits = 0;
    for (let d = 0; d < DIMS; d++) if (vectors[row * DIMS + d]! > 0 !== query[d]! > 0) bits++;
    return bits;
  };
  const rows = Array.from({ length: count }, (_, row) => row).filter((row) => !mask || mask[row] === 1);
  const ranked = rows.map((row) => ({ row, distance: distance(row) })).sort((a, b) => a.distance - b.distance || a.row - b.row);
  return ranked
    .slice(0, k)
    .map((entry) => entry.row)
    .sort((a, b) => a - b);
}

describe('the nearest binary codes (binary-scan.ts)', () => {
  it('runs where the kernel does and a code is whole 64-bit words', () => {
    expect(binaryScanSupported(DIMS)).toBe(true);
    expect(binaryScanSupported(512)).toBe(true);
    expect(binaryScanSupported(96)).toBe(false);
    expect(() => createBinaryScan(createVectorScanner(new Float32Array(96 * 3), 96))).toThrow(/96 dimensions/);
  });

  it('packs one sign bit a dimension, the first dimension the lowest bit', () => {
    const vector = Float32Array.from({ length: 64 }, (_, d) => (d === 0 || d === 9 ? 0.5 : d === 10 ? 0 : -0.1));
    const code = new Uint8Array(8);
    signCode(vector, 0, 64, code, 0);
    expect([...code]).toEqual([1, 2, 0, 0, 0, 0, 0, 0]);
  });

  it('finds the k nearest codes as the reference does, filtered or not, ties at the cut in chunk order', () => {
    const count = 1500;
    const vectors = unitRows(count, DIMS, 5);
    const scan = createBinaryScan(createVectorScanner(vectors, DIMS));
    expect(scan.count).toBe(count);
    const next = seededRandom(9);
    const sparse = Uint8Array.from({ length: count }, () => (next() < 0.1 ? 1 : 0));
    const allowedSparse = sparse.reduce((sum, bit) => sum + bit, 0);
    for (let q = 0; q < 12; q++) {
      const query = unitRows(1, DIMS, 100 + q);
      for (const k of [1, 10, 37, 400]) {
        expect([...scan.nearest(query, k)]).toEqual(referenceNearest(vectors, query, k));
        expect([...scan.nearest(query, k, sparse)]).toEqual(referenceNearest(vectors, query, k, sparse));
      }
      // More asked than allowed: every allowed chunk; nothing asked: nothing.
      expect(scan.nearest(query, allowedSparse + 50, sparse)).toHaveLength(allowedSparse);
      expect(scan.nearest(query, count * 2)).toHaveLength(count);
      expect(scan.nearest(query, 0)).toHaveLength(0);
      expect(scan.nearest(query, 5, new Uint8Array(count))).toHaveLength(0);
    }
    // A stored row's own code is at distance 0: it comes first whatever the ties.
    expect([...scan.nearest(vectors.slice(7 * DIMS, 8 * DIMS), 1)]).toEqual([7]);
    expect(() => scan.nearest(new Float32Array(DIMS + 1), 3)).toThrow(/dimensions/);
    expect(() => scan.nearest(new Float32Array(DIMS), 3, new Uint8Array(count - 1))).toThrow(/mask/);
  });
});

describe('the approximate chunk scan over binary codes (chunk-scan.ts)', () => {
  // Two chunks a record, the second far from the first in the list.
  const count = 2400;
  const vectors = unitRows(count, DIMS, 21);
  const recordCount = count / 2;
  const chunkRecords = Uint32Array.from({ length: count }, (_, chunk) => chunk % recordCount);
  const scanner = createVectorScanner(vectors, DIMS);
  // The graph is never asked below codesBelow: this one counts its questions, and fails them.
  let graphAsked = 0;
  const graph: ApproximateVectorIndex = {
    size: count,
    dims: DIMS,
    search: () => {
      graphAsked++;
      throw new Error('the graph was asked');
    },
  };
  const common = { scanner, chunkRecords, recordCount, approximateFrom: 0, wordRecords: 4, approximate: graph };

  it('re-scores the nearest codes exactly: each shortlisted record has its shortlisted chunks’ best cosine', async () => {
    const shortlist = 120;
    const codes = createChunkScan({ ...common, shortlist });
    const exact = createChunkScan({ ...common, approximate: undefined, shortlist });
    const reference = createBinaryScan(createVectorScanner(vectors, DIMS));
    expect(codes.approximate).toBe(true);
    expect(codes.shortlistFrom).toBe('codes');
    const filter = Uint8Array.from({ length: recordCount }, (_, record) => (record % 3 === 0 ? 0 : 1));
    for (let q = 0; q < 6; q++) {
      const query = unitRows(1, DIMS, 300 + q);
      for (const mask of [new Uint8Array(recordCount).fill(1), filter]) {
        const found = await codes.scan(query, mask);
        const all = await exact.scan(query, mask);
        const chunkMask = Uint8Array.from(chunkRecords, (record) => mask[record]!);
        const near = reference.nearest(query, shortlist, chunkMask);
        const dots = scanner.dotsOf(query, near).slice();
        const expected = new Map<number, number>();
        near.forEach((chunk, at) => expected.set(chunkRecords[chunk]!, Math.max(expected.get(chunkRecords[chunk]!) ?? -2, dots[at]!)));
        found.best.forEach((cosine, record) => {
          if (mask[record] === 0) expect(cosine).toBe(-2);
          else if (expected.has(record)) expect(cosine).toBe(expected.get(record));
          else expect(cosine).toBe(-2);
          if (cosine > -2) expect(cosine).toBeLessThanOrEqual(all.best[record]!);
        });
        expect([...found.scored!]).toEqual([...expected.keys()].sort((a, b) => a - b));
      }
    }
    expect(graphAsked).toBe(0);
  });

  it('with a shortlist of every chunk, gives the exact scan’s cosines; the other thread’s products the same as this one’s', async () => {
    let asked = 0;
    const remote = createChunkScan({
      ...common,
      shortlist: count,
      remoteDots: async (query, rows) => {
        asked++;
        return scanner.dotsOf(query, rows).slice();
      },
    });
    const failing = createChunkScan({ ...common, shortlist: count, remoteDots: () => Promise.reject(new Error('the thread is gone')) });
    const exact = createChunkScan({ ...common, approximate: undefined, shortlist: count });
    const mask = new Uint8Array(recordCount).fill(1);
    for (let q = 0; q < 3; q++) {
      const query = unitRows(1, DIMS, 500 + q);
      const expected = await exact.scan(query, mask);
      for (const scan of [remote, failing]) {
        const found = await scan.scan(query, mask, [], scan.shortlist(query, mask));
        expect([...found.best]).toEqual([...expected.best]);
        expect([...found.bestChunk]).toEqual([...expected.bestChunk]);
      }
    }
    expect(asked).toBe(3);
  });

  it('the other thread’s codes and products give the same cosines as this thread’s; where it cannot answer, this thread scans them', async () => {
    const shortlist = 150;
    const here = createChunkScan({ ...common, shortlist });
    let asked = 0;
    // A stand-in for the index's thread: the same kernel over the same shared memories.
    const away = createChunkScan({
      ...common,
      shortlist,
      shareCodes: (shared) => {
        return async (query, code, k, chunkMask) => {
          asked++;
          expect(shared.count).toBe(count);
          const own = new Uint8Array(DIMS / 8);
          signCode(query, 0, DIMS, own, 0);
          expect([...code]).toEqual([...own]);
          const near = createBinaryScan(createVectorScanner(vectors, DIMS)).nearest(query, k, chunkMask);
          return { near, dots: scanner.dotsOf(query, near).slice() };
        };
      },
    });
    const failing = createChunkScan({ ...common, shortlist, shareCodes: () => () => Promise.reject(new Error('the thread is gone')) });
    const filter = Uint8Array.from({ length: recordCount }, (_, record) => (record % 4 === 1 ? 0 : 1));
    for (let q = 0; q < 4; q++) {
      const query = unitRows(1, DIMS, 700 + q);
      for (const mask of [new Uint8Array(recordCount).fill(1), filter]) {
        const expected = await here.scan(query, mask, [3, 9], here.shortlist(query, mask));
        for (const scan of [away, failing]) {
          const found = await scan.scan(query, mask, [3, 9], scan.shortlist(query, mask));
          expect([...found.best]).toEqual([...expected.best]);
          expect([...found.bestChunk]).toEqual([...expected.bestChunk]);
          expect([...found.scored!]).toEqual([...expected.scored!]);
          expect(found.population).toEqual(expected.population);
        }
      }
    }
    expect(asked).toBe(8);
    expect(graphAsked).toBe(0);
  });

  it('asks the graph from codesBelow chunks on, and scans exactly where the graph fails', async () => {
    const scan = createChunkScan({ ...common, shortlist: 10, codesBelow: count });
    const exact = createChunkScan({ ...common, approximate: undefined, shortlist: 10 });
    expect(scan.shortlistFrom).toBe('index');
    const asked = graphAsked;
    const query = unitRows(1, DIMS, 1);
    const mask = new Uint8Array(recordCount).fill(1);
    const found = await scan.scan(query, mask);
    expect(graphAsked).toBe(asked + 1);
    expect([...found.best]).toEqual([...(await exact.scan(query, mask)).best]);
    expect(found.population).toBeUndefined(); // every record has its cosine, as on the exact path
  });
});
