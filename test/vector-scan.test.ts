/**
 * The vector scan kernels (core/search/vector-scan.ts): same numbers whichever kernel computes
 * them. The embedder's worker pool is tested in embedder-runtime.test.ts (full lane: real model).
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { nthLargest } from '../core/search/search-index.ts';
import { createVectorScanner, quantizeQuery, quantizeRow, type VectorSource } from '../core/search/vector-scan.ts';
import { seededRandom as random } from '../core/random.ts';
import { compileDotWat, renderDotWasmModule, WASM_TS_PATH } from '../scripts/gen-wasm.ts';

function vectors(count: number, dims: number, seed: number): Float32Array {
  const next = random(seed);
  const out = new Float32Array(count * dims);
  for (let row = 0; row < count; row++) {
    let norm = 0;
    for (let d = 0; d < dims; d++) {
      const value = next() - 0.5;
      out[row * dims + d] = value;
      norm += value * value;
    }
    norm = Math.sqrt(norm);
    for (let d = 0; d < dims; d++) out[row * dims + d] = out[row * dims + d]! / norm;
  }
  return out;
}

function naiveDots(data: Float32Array, dims: number, query: Float32Array): number[] {
  const out: number[] = [];
  for (let offset = 0; offset < data.length; offset += dims) {
    let dot = 0;
    for (let d = 0; d < dims; d++) dot += data[offset + d]! * query[d]!;
    out.push(dot);
  }
  return out;
}

describe('vector scan', () => {
  it('the committed WebAssembly bytes are the compilation of dot.wat', async () => {
    expect(readFileSync(WASM_TS_PATH, 'utf8')).toBe(renderDotWasmModule(await compileDotWat()));
  });

  it('runs the WebAssembly SIMD kernel on Node 20 and agrees with a plain loop', () => {
    const dims = 512;
    const data = vectors(300, dims, 1);
    const query = vectors(1, dims, 2);
    const scanner = createVectorScanner(data, dims);
    expect(scanner.kernel).toBe('wasm-simd');
    expect(Array.from(scanner.rowsOf([0, 299, 7]))).toEqual([0, 299, 7].flatMap((row) => Array.from(data.subarray(row * dims, (row + 1) * dims))));
    const dots = scanner.dots(query);
    const expected = naiveDots(data, dims, query);
    expect(dots).toHaveLength(300);
    expected.forEach((value, index) => expect(dots[index]).toBeCloseTo(value, 5));
    // a vector with itself is 1
    expect(scanner.dots(data.subarray(7 * dims, 8 * dims))[7]).toBeCloseTo(1, 5);
  });

  it('masks chunks with -2 and both kernels agree, masked or not', () => {
    const dims = 64;
    const data = vectors(50, dims, 3);
    const query = vectors(1, dims, 4);
    const mask = Uint8Array.from({ length: 50 }, (_, index) => (index % 3 === 0 ? 0 : 1));
    const simd = createVectorScanner(data, dims);
    const js = createVectorScanner(data, dims, { kernel: 'js' });
    expect(js.kernel).toBe('js');
    const a = simd.dots(query, mask).slice();
    const b = js.dots(query, mask);
    for (let index = 0; index < 50; index++) {
      if (index % 3 === 0) {
        expect(a[index]).toBe(-2);
        expect(b[index]).toBe(-2);
      } else expect(a[index]).toBeCloseTo(b[index]!, 5);
    }
    // the mask of one call does not leak into the next
    expect(simd.dots(query)[0]).toBeCloseTo(naiveDots(data, dims, query)[0]!, 5);
  });

  it('scores listed rows only (dotsOf) as the full scan scores them, bit for bit, on either kernel', () => {
    const dims = 512;
    const stored = vectors(300, dims, 11);
    const query = vectors(1, dims, 12);
    const rows = Uint32Array.from([299, 0, 7, 7, 150, 42]);
    for (const kernel of ['wasm-simd', 'js'] as const) {
      const scanner = createVectorScanner(stored, dims, { kernel });
      const all = Float32Array.from(scanner.dots(query));
      expect(Array.from(scanner.dotsOf(query, rows))).toEqual(Array.from(rows, (row) => all[row]!));
      expect(scanner.dotsOf(query, new Uint32Array(0))).toHaveLength(0);
      expect(() => scanner.dotsOf(query, Uint32Array.of(300))).toThrow(/no row 300/);
    }
  });

  it('falls back to JavaScript when the dimension is not a multiple of 16', () => {
    const data = vectors(10, 20, 5);
    const query = vectors(1, 20, 6);
    const scanner = createVectorScanner(data, 20);
    expect(scanner.kernel).toBe('js');
    naiveDots(data, 20, query).forEach((value, index) => expect(scanner.dots(query)[index]).toBeCloseTo(value, 5));
  });

  it('refuses data that is not whole rows and queries of another dimension', () => {
    expect(() => createVectorScanner(new Float32Array(33), 16)).toThrow(/whole number/);
    expect(() => createVectorScanner(vectors(2, 16, 7), 16).dots(new Float32Array(8))).toThrow(/dimensions/);
  });
});

describe('nthLargest (the feedback pool threshold)', () => {
  it('holds int8 rows (a scale each) whose products stay within a few thousandths of the exact ones, dotsOf and dots bit for bit', () => {
    const dims = 512;
    const data = vectors(1200, dims, 3);
    const query = vectors(1, dims, 4);
    const exact = naiveDots(data, dims, query);
    const scanner = createVectorScanner(data, dims, { precision: 'i8' });
    expect(scanner.precision).toBe('i8');
    expect(scanner.kernel).toBe('wasm-simd');
    const dots = Array.from(scanner.dots(query));
    let worst = 0;
    dots.forEach((value, row) => (worst = Math.max(worst, Math.abs(value - exact[row]!))));
    expect(worst).toBeLessThan(0.003);
    expect(worst).toBeGreaterThan(0); // quantized, not the float32 rows
    // A row with itself is still about 1; masked rows -2; the listed rows as the whole scan gives them.
    expect(scanner.dots(data.subarray(7 * dims, 8 * dims))[7]).toBeCloseTo(1, 2);
    const mask = new Uint8Array(1200).fill(1);
    mask[5] = 0;
    expect(scanner.dots(query, mask)[5]).toBe(-2);
    const rows = Uint32Array.of(0, 17, 5, 1199);
    const whole = scanner.dots(query).slice();
    expect(Array.from(scanner.dotsOf(query, rows))).toEqual(Array.from(rows, (row) => whole[row]));
    // Rows read back are the codes times their scale; a subset scores as the whole does.
    const back = scanner.rowsOf([17]);
    back.forEach((value, d) => expect(Math.abs(value - data[17 * dims + d]!)).toBeLessThan(0.01));
    expect(Array.from(scanner.subset(rows).dots(query))).toEqual(Array.from(rows, (row) => whole[row]));
    // The JavaScript kernel holds float32 whatever is asked.
    expect(createVectorScanner(data, dims, { kernel: 'js', precision: 'i8' }).precision).toBe('f32');
  });

  it('quantizes from a file in blocks as from the floats in memory, zero rows and questions included', () => {
    const dims = 16;
    const count = 9000; // more than two of the loader's blocks
    const data = vectors(count, dims, 5);
    data.fill(0, 4096 * dims, 4097 * dims);
    const bytes = new Uint8Array(data.buffer);
    const reads: number[] = [];
    const source: VectorSource = {
      floats: data.length,
      readInto(target, fromByte = 0) {
        reads.push(fromByte);
        target.set(bytes.subarray(fromByte, fromByte + target.length));
      },
    };
    const query = vectors(1, dims, 6);
    const fromFile = createVectorScanner(source, dims, { precision: 'i8' });
    const fromMemory = createVectorScanner(data, dims, { precision: 'i8' });
    expect(reads.length).toBeGreaterThan(2);
    expect(Array.from(fromFile.dots(query))).toEqual(Array.from(fromMemory.dots(query)));
    expect(fromFile.dots(query)[4096]).toBe(0);
    expect(Array.from(fromFile.dots(new Float32Array(dims))).every((value) => value === 0)).toBe(true);
    const codes = new Int8Array(dims);
    expect(quantizeRow(data, 1, dims, codes, 0)).toBeGreaterThan(0);
    expect(Math.max(...Array.from(codes, Math.abs))).toBe(127);
    const quantized = new Int16Array(dims);
    expect(quantizeQuery(query, quantized)).toBeGreaterThan(0);
    expect(Math.max(...Array.from(quantized, Math.abs))).toBe(16383);
  });

  it('agrees with sorting, ties and all', () => {
    const next = random(11);
    for (let round = 0; round < 200; round++) {
      const length = 1 + Math.floor(next() * 60);
      const values = Float64Array.from({ length }, () => Math.floor(next() * 10) / 10);
      const sorted = [...values].sort((a, b) => b - a);
      const n = 1 + Math.floor(next() * length);
      expect(nthLargest(Float64Array.from(values), n)).toBe(sorted[n - 1]);
    }
  });

  it('agrees with sorting on many values, where it keeps those above a sampled threshold first, whatever their order', () => {
    const next = random(12);
    const shapes: Record<string, (length: number) => Float64Array> = {
      uniform: (length) => Float64Array.from({ length }, () => next()),
      'mostly zero, a long tail': (length) => Float64Array.from({ length }, () => (next() < 0.7 ? 0 : -Math.log(next()))),
      'few distinct values': (length) => Float64Array.from({ length }, () => Math.floor(next() * 5)),
      // Ascending, then the largest placed where an even sample never looks: the sample misleads.
      ascending: (length) => Float64Array.from({ length }, (_, i) => i),
      'hidden between the sample': (length) => Float64Array.from({ length }, (_, i) => (i % Math.floor(length / 1024) === 1 ? 1000 + i : 1)),
      // Large only where the sample looks: fewer than n reach its threshold, and every value is selected from.
      'only where the sample looks': (length) => Float64Array.from({ length }, (_, i) => (i % Math.floor(length / 1024) === 0 ? 1000 + i : next())),
    };
    for (const [shape, make] of Object.entries(shapes)) {
      for (const length of [32_768, 100_003, 250_000]) {
        const values = make(length);
        const sorted = Float64Array.from(values).sort().reverse();
        for (const n of [1, 100, 2_000, Math.floor(length / 8)]) {
          expect(nthLargest(Float64Array.from(values), n), `${shape}, ${length} values, n = ${n}`).toBe(sorted[n - 1]);
        }
      }
    }
  });
});
