/**
 * The vector scan kernels (core/search/vector-scan.ts) and the embedder's worker pool
 * (providers/embedder.ts): same numbers whichever kernel or thread computes them.
 */
import { readFileSync } from 'node:fs';
import module from 'node:module';
import { describe, expect, it } from 'vitest';
import { nthLargest } from '../core/search/search-index.ts';
import { createVectorScanner } from '../core/search/vector-scan.ts';
import { createUseLiteEmbedder } from '../providers/embedder.ts';
import { seededRandom as random } from '../scripts/lib/random.ts';
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
    expect(Array.from(scanner.vectors)).toEqual(Array.from(data));
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
});

describe('embedder off the event loop', () => {
  it('gives the same vectors on worker threads, one call or many at once, in order', async () => {
    const onThread = await createUseLiteEmbedder({ workers: 0 });
    const offThread = await createUseLiteEmbedder({ workers: 1, offThread: true });
    const questions = [
      'What do the models disagree about when asked about memory?',
      'Who wrote the first synthesis?',
      '',
      'How is a tension between two voices named?',
      'What is an epistemic ring?',
    ];
    const expected = await onThread.embed(questions);
    // All at once: the pool merges questions queued behind a busy worker into one batch.
    const separately = await Promise.all(questions.map(async (question) => (await offThread.embed([question]))[0]!));
    const together = await offThread.embed(questions);
    for (const got of [separately, together]) {
      expect(got).toHaveLength(questions.length);
      got.forEach((vector, index) => {
        let dot = 0;
        for (let d = 0; d < vector.length; d++) dot += vector[d]! * expected[index]![d]!;
        expect(dot).toBeGreaterThan(0.99999);
      });
    }
    // different questions, different vectors: the merge did not shuffle them
    let cross = 0;
    for (let d = 0; d < 512; d++) cross += separately[0]![d]! * separately[1]![d]!;
    expect(cross).toBeLessThan(0.99);
  });

  it('runs one model on two threads on the native kernels, one on WebAssembly, with the same vectors, bit for bit', async () => {
    const texts = [
      'Sexual abstinence is the only truly safe method of birth control, and young people should be taught that it is the best choice.',
      'Who wrote the first synthesis?',
      'What is an epistemic ring?',
    ];
    const single = await createUseLiteEmbedder({ workers: 1, offThread: true, threads: 1, kernels: 'auto' });
    const threaded = await createUseLiteEmbedder({ workers: 1, offThread: true, threads: 2, kernels: 'auto' });
    const wasm = await createUseLiteEmbedder({ workers: 1, offThread: true, threads: 2, kernels: 'wasm' });
    await Promise.all([single.embed(['.']), threaded.embed(['.']), wasm.embed(['.'])]);
    expect(single.threadsInUse).toBe(1);
    // The native products' helper thread really runs where the kernels are built; the
    // WebAssembly graph is never threaded (ADR 0012), whatever was asked.
    expect(threaded.threadsInUse).toBe(threaded.kernelsInUse === 'native' ? 2 : 1);
    expect(wasm.kernelsInUse).toBe('wasm');
    expect(wasm.threadsInUse).toBe(1);
    for (const batch of [texts, [texts[0]!], [texts[1]!]]) {
      const [a, b] = await Promise.all([single.embed(batch), threaded.embed(batch)]);
      b.forEach((vector, index) => expect(Array.from(vector)).toEqual(Array.from(a[index]!)));
    }
  });
});

describe('the embedding runtime patches nothing process-wide', () => {
  it('leaves worker_threads.Worker, os.cpus and the global Worker as they were, on either backend, in this thread', async () => {
    const require = module.createRequire(import.meta.url);
    // The CommonJS exports, which a patch would replace (an ESM namespace would not show it).
    const workerThreads = require('node:worker_threads') as { Worker: unknown };
    const os = require('node:os') as { cpus: unknown };
    const before = { Worker: workerThreads.Worker, cpus: os.cpus, globalWorker: (globalThis as { Worker?: unknown }).Worker };
    // On this thread (workers: 0), asking for threads: the model loads here, not in a worker.
    for (const kernels of ['wasm', 'auto'] as const) {
      const embedder = await createUseLiteEmbedder({ workers: 0, threads: 2, kernels });
      expect((await embedder.embed(['What is an epistemic ring?']))[0]).toHaveLength(512);
    }
    expect(workerThreads.Worker).toBe(before.Worker);
    expect(os.cpus).toBe(before.cpus);
    expect((globalThis as { Worker?: unknown }).Worker).toBe(before.globalWorker);
  });
});
