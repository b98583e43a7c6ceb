/**
 * The server's approximate vector index, in a worker thread of its own: the saved index is
 * memory-mapped there (and only there: a second mapping would add its pages to the server's
 * memory again), and a search runs there while the server's own thread scores the question's
 * words (core/search/search-index.ts; bench/README.md, "The index beside the words"). The
 * search's plan (oversampling under filters) is the in-process index's (vector-index.ts),
 * one native search a message. The same thread takes the feedback's exact products over the
 * scan kernel's shared memory (shareScan), while the server's thread scores the feedback's words,
 * and, below the size where the graph pays, the shortlist itself: the nearest binary codes
 * (shareCodes, binary-scan.ts's kernel) and their exact products in one message, while the
 * server's thread reads the words' records and the population's sample.
 */
import { statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import type { ApproximateVectorIndex, NearestCodes, RemoteCodes, RemoteNear } from '../core/ports/vector-index.ts';
import type { SharedCodes } from '../core/search/binary-scan.ts';
import { checkQuery, checkRows, quantizeQuery, type SharedScan } from '../core/search/vector-scan.ts';
import { checkIndexFile, DEFAULT_INDEX_PARAMETERS, nativeConfig, oversampled, type VectorIndexParameters } from './vector-index.ts';

export interface VectorIndexWorker extends ApproximateVectorIndex {
  search(query: Float32Array, k: number, allowed?: Uint8Array): Promise<Uint32Array>;
  shareScan(shared: SharedScan): (query: Float32Array, rows: Uint32Array) => Promise<Float32Array>;
  shareCodes(codes: SharedCodes, shared: SharedScan): RemoteCodes;
  shareNear(shared: SharedScan): RemoteNear;
  /** Ends the worker (and its mapping); searches asked after this fail. */
  close(): Promise<void>;
}

/**
 * Runs inside the worker: usearch required by absolute path, the file viewed, one search a
 * message; given a SharedScan, the scan kernel instantiated over its memory, and the products
 * of listed rows (its dotsOf, as vector-scan.ts's scanner calls it, into the second thread's regions).
 */
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
// Each shared scan's products by its number, or why it could not be shared.
const scans = new Map();
// int8 rows take the question already quantized (an Int16Array) and its scale.
function shareScan(shared) {
  const kernel = new WebAssembly.Instance(shared.module, { env: { memory: shared.memory } }).exports;
  const int8 = shared.precision === 'i8';
  const query = new (int8 ? Int16Array : Float32Array)(shared.memory.buffer, shared.queryAt, shared.dims);
  const rowList = new Uint32Array(shared.memory.buffer, shared.rowsAt, shared.count);
  const out = new Float32Array(shared.memory.buffer, shared.outAt, shared.count);
  return (vector, rows, qscale) => {
    query.set(vector);
    rowList.set(rows);
    if (int8) kernel.dotsOf8(shared.vectorsAt, shared.scalesAt, shared.dims, shared.queryAt, qscale, shared.rowsAt, rows.length, shared.outAt);
    else kernel.dotsOf(shared.vectorsAt, shared.dims, shared.queryAt, shared.rowsAt, rows.length, shared.outAt);
    return out.slice(0, rows.length);
  };
}
// Each shared code scan by its number: the nearest codes' rows for a question's code (binary-scan.ts's kernel).
const codeScans = new Map();
function shareCodes(codes) {
  const kernel = new WebAssembly.Instance(codes.module, { env: { memory: codes.memory } }).exports;
  const query = new Uint8Array(codes.memory.buffer, codes.queryAt, codes.words * 8);
  const mask = new Uint8Array(codes.memory.buffer, codes.maskAt, codes.count);
  const nearest = new Uint32Array(codes.memory.buffer, codes.nearestAt, codes.count);
  return (code, k, chunkMask) => {
    query.set(code);
    if (chunkMask) mask.set(chunkMask);
    else mask.fill(1);
    kernel.hamming(codes.codesAt, codes.count, codes.words, codes.queryAt, codes.maskAt, codes.outAt, codes.histogramAt);
    return nearest.slice(0, kernel.nearestRows(codes.outAt, codes.count, codes.histogramAt, codes.words * 64, k, codes.nearestAt));
  };
}
// A shared memory's function by its number, or why it could not be made (said when it is asked).
function keep(map, key, make) {
  try {
    map.set(key, make());
  } catch (error) {
    map.set(key, String((error && error.message) || error));
  }
}
// The file read through once into the page cache, not into this process: a search then finds the
// graph's pages there, where from a cold cache the first questions each waited on the disk for
// the pages they reached (at 1M passages, p95 56 ms over HTTP against 46 warm; bench/README.md).
function warm(file) {
  const fs = require('node:fs');
  const fd = fs.openSync(file, 'r');
  try {
    const chunk = Buffer.allocUnsafe(1 << 22);
    for (let at = 0, read; (read = fs.readSync(fd, chunk, 0, chunk.length, at)) > 0; at += read);
  } finally {
    fs.closeSync(fd);
  }
}
let index;
try {
  const { Index } = require(workerData.usearch);
  index = new Index(workerData.config);
  warm(workerData.file);
  index.view(workerData.file);
  parentPort.postMessage({ ready: { size: Number(index.size()), dims: index.dimensions() } });
} catch (error) {
  parentPort.postMessage({ fatal: String((error && error.message) || error) });
}
parentPort.on('message', ({ id, query, scanned, qscale, k, shared, scan, rows, sharedCodes, codes, code, mask, near: graphNear }) => {
  if (shared) return keep(scans, scan, () => shareScan(shared));
  if (sharedCodes) return keep(codeScans, codes, () => shareCodes(sharedCodes));
  try {
    if (code) {
      const nearestOf = codeScans.get(codes);
      if (typeof nearestOf !== 'function') throw new Error('the codes could not be shared: ' + nearestOf);
      const products = scans.get(scan);
      if (typeof products !== 'function') throw new Error('the scan kernel could not be shared: ' + products);
      const near = nearestOf(code, k, mask);
      const dots = products(query, near, qscale);
      parentPort.postMessage({ id, near, dots }, [near.buffer, dots.buffer]);
      return;
    }
    if (graphNear) {
      // The graph's nearest (keys are rows here) and their products, in one answer.
      const products = scans.get(scan);
      if (typeof products !== 'function') throw new Error('the scan kernel could not be shared: ' + products);
      const near = Uint32Array.from(index.search(query, k, 1).keys, Number).sort();
      const dots = products(scanned, near, qscale);
      parentPort.postMessage({ id, near, dots }, [near.buffer, dots.buffer]);
      return;
    }
    if (rows) {
      const products = scans.get(scan);
      if (typeof products !== 'function') throw new Error('the scan kernel could not be shared: ' + products);
      const dots = products(query, rows, qscale);
      parentPort.postMessage({ id, dots }, [dots.buffer]);
      return;
    }
    const keys = Uint32Array.from(index.search(query, k, 1).keys, Number);
    parentPort.postMessage({ id, keys }, [keys.buffer]);
  } catch (error) {
    parentPort.postMessage({ id, error: String((error && error.message) || error) });
  }
});
`;

interface Pending {
  resolve(answer: Uint32Array | Float32Array | NearestCodes): void;
  reject(error: Error): void;
}

type Reply =
  | { ready: { size: number; dims: number } }
  | { fatal: string }
  | { id: number; keys: Uint32Array }
  | { id: number; dots: Float32Array }
  | ({ id: number } & NearestCodes)
  | { id: number; error: string };

export interface VectorIndexWorkerOptions {
  /**
   * Told each time the worker thread fails or exits after it opened the index (not on close()):
   * searches fail from then on (the server's fall back to the exact scan) until a new thread
   * has opened the index again, so the server reports itself not ready meanwhile (api/server.ts).
   */
  onFailure?: (error: Error) => void;
  /** Told when a new thread has opened the index after a failure: searches are answered again. */
  onRecovery?: () => void;
  /** Milliseconds before each attempt at a new thread after a failure; the last repeats. */
  restartDelays?: readonly number[];
}

/** A thread that dies is replaced after 1 s, then 5 s, then every 30 s while the new ones fail too. */
export const RESTART_DELAYS = [1_000, 5_000, 30_000] as const;

interface ThreadEvents {
  reply(thread: Worker, reply: Exclude<Reply, { ready: unknown } | { fatal: string }>): void;
  died(thread: Worker, error: Error): void;
}

/** A new thread with the index open, once it says so; rejects (and ends it) where it cannot open it. */
function startThread(file: string, workerData: object, events: ThreadEvents): Promise<{ thread: Worker; size: number; dims: number }> {
  const thread = new Worker(WORKER_SOURCE, { eval: true, workerData });
  let ready = false;
  return new Promise((resolve, reject) => {
    const died = (error: Error) => {
      if (ready) return events.died(thread, error);
      reject(error);
      void thread.terminate();
    };
    thread.on('message', (reply: Reply) => {
      if ('ready' in reply) {
        ready = true;
        thread.unref();
        return resolve({ thread, ...reply.ready });
      }
      if ('fatal' in reply) return died(new Error(`the vector index worker could not open ${file}: ${reply.fatal}`));
      events.reply(thread, reply);
    });
    thread.on('error', (error) => died(new Error(`the vector index worker failed: ${error.message}`)));
    thread.on('exit', (code) => died(new Error(`the vector index worker exited with code ${code}`)));
  });
}

/** The question an answer is for, answered (and forgotten). */
function settle(pending: Map<number, Pending>, reply: Exclude<Reply, { ready: unknown } | { fatal: string }>): void {
  const job = pending.get(reply.id);
  pending.delete(reply.id);
  if ('error' in reply) job?.reject(new Error(`the vector index worker failed to answer: ${reply.error}`));
  else job?.resolve('keys' in reply ? reply.keys : 'near' in reply ? { near: reply.near, dots: reply.dots } : reply.dots);
}

/** The question as the shared scan's rows take it: as it is for float32, quantized with its scale for int8 (vector-scan.ts). */
function scanQuery(shared: SharedScan, query: Float32Array): { query: Float32Array | Int16Array; qscale?: number } {
  if (shared.precision !== 'i8') return { query };
  const quantized = new Int16Array(query.length);
  return { query: quantized, qscale: quantizeQuery(query, quantized) };
}

/** The file as opened: a new thread opens it again only if it is still the same file. */
function identity(file: string): string {
  const stat = statSync(file);
  return `${stat.dev}:${stat.ino}:${stat.size}:${stat.mtimeMs}`;
}

/**
 * Opens the index saved at `file` in a new worker thread; rejects when the worker cannot map it
 * or its dimension is not `dims`. A thread that dies later is replaced (RESTART_DELAYS), with
 * every scan and code memory shared with the old one shared again, unless the file changed
 * under it (a new build: the process must restart to read the artifacts together).
 */
export async function openVectorIndexWorker(
  file: string,
  dims: number,
  parameters: VectorIndexParameters = DEFAULT_INDEX_PARAMETERS,
  options: VectorIndexWorkerOptions = {},
): Promise<VectorIndexWorker> {
  checkIndexFile(file);
  const workerData = { usearch: createRequire(import.meta.url).resolve('usearch'), config: await nativeConfig(dims, parameters), file };
  const opened = identity(file);
  const pending = new Map<number, Pending>();
  /** What each new thread is told before any question: the memories shared with the threads before it. */
  const registrations: object[] = [];
  let nextId = 0;
  let failed: Error | undefined;
  let closing = false;
  let attempts = 0;
  let restartTimer: ReturnType<typeof setTimeout> | undefined;

  /** The thread serving (set once the first is up; replaced after a failure). */
  let worker: Worker | undefined;
  const events: ThreadEvents = {
    reply(thread, reply) {
      if (thread !== worker) return; // a thread already replaced
      settle(pending, reply);
      if (pending.size === 0) thread.unref(); // an idle worker never keeps the process alive
    },
    died: (thread, error) => thread === worker && lost(error),
  };
  const start = () => startThread(file, workerData, events);

  /** The serving thread is gone: its questions fail (their searches take the exact scan), and a new one is started. */
  function lost(error: Error): void {
    if (failed) return;
    failed = error;
    for (const job of pending.values()) job.reject(error);
    pending.clear();
    if (closing) return;
    options.onFailure?.(error);
    scheduleRestart();
  }

  function scheduleRestart(): void {
    const delays = options.restartDelays ?? RESTART_DELAYS;
    restartTimer = setTimeout(() => void restart(), delays[Math.min(attempts++, delays.length - 1)]);
    restartTimer.unref();
  }

  async function restart(): Promise<void> {
    restartTimer = undefined;
    if (closing) return;
    if (identity(file) !== opened) return; // a new build's file: only a restarted process reads the artifacts together
    try {
      const started = await start();
      if (closing || started.size !== size || started.dims !== dims) {
        await started.thread.terminate();
        return;
      }
      worker = started.thread;
      for (const message of registrations) worker.postMessage(message);
      failed = undefined;
      attempts = 0;
      options.onRecovery?.();
    } catch {
      scheduleRestart();
    }
  }

  const first = await start();
  worker = first.thread;
  const serving = (): Worker => worker ?? first.thread;
  const { size } = first;
  if (first.dims !== dims) {
    closing = true;
    await first.thread.terminate();
    throw new Error(`${file} holds ${first.dims}-dimension vectors, the search ${dims}: rebuild`);
  }

  /** Tells the serving thread, and every thread after it, of a memory shared with it. */
  function register(message: object): void {
    registrations.push(message);
    if (!failed) serving().postMessage(message);
  }

  /** Sends a question to the worker; its answer resolves the promise. */
  function ask<T extends Answer>(message: Question): Promise<T> {
    if (failed) return Promise.reject(failed);
    return new Promise<T>((resolve, reject) => {
      const id = nextId++;
      pending.set(id, { resolve: resolve as Pending['resolve'], reject });
      serving().ref(); // keep the process alive while a question is in flight
      serving().postMessage({ id, ...message });
    });
  }
  /** The nearest `k` keys by one native search in the worker. */
  const nearest = (query: Float32Array, k: number) => ask<Uint32Array>({ query, k });

  return {
    size,
    dims,
    async search(query, k, allowed) {
      checkQuery(query, dims);
      const steps = oversampled(size, k, allowed);
      let step = steps.next();
      while (!step.done) step = steps.next(await nearest(query, step.value));
      return step.value;
    },
    ...sharing(register, ask, size, dims),
    async close() {
      closing = true;
      clearTimeout(restartTimer);
      const closed = new Error('the vector index worker was closed');
      lost(closed); // its questions in flight fail (no failure is told: it was closed on purpose)
      failed = closed; // and so does every later one, even where a thread was already down
      await serving().terminate();
    },
  };
}

/** A question to the worker's thread (see WORKER_SOURCE), and what it answers. */
interface Question {
  query: Float32Array | Int16Array;
  scanned?: Float32Array | Int16Array;
  near?: boolean;
  qscale?: number;
  k?: number;
  scan?: number;
  rows?: Uint32Array;
  codes?: number;
  code?: Uint8Array;
  mask?: Uint8Array;
}
type Answer = Uint32Array | Float32Array | NearestCodes;

/**
 * What the worker's thread answers over memories shared with it: each memory told to it (and to
 * every thread after it) under a number, then asked by that number.
 */
function sharing(
  register: (message: object) => void,
  ask: <T extends Answer>(message: Question) => Promise<T>,
  size: number,
  dims: number,
): Pick<VectorIndexWorker, 'shareScan' | 'shareNear' | 'shareCodes'> {
  let nextScan = 0;
  return {
    shareScan(shared) {
      const scan = nextScan++;
      register({ shared, scan });
      return async (query, rows) => {
        checkQuery(query, shared.dims);
        checkRows(rows, shared.count);
        return ask<Float32Array>({ ...scanQuery(shared, query), scan, rows });
      };
    },
    shareNear(shared) {
      const scan = nextScan++;
      register({ shared, scan });
      return async (query, k) => {
        checkQuery(query, dims);
        if (size === 0 || k <= 0) return { near: new Uint32Array(0), dots: new Float32Array(0) };
        const { query: scanned, qscale } = scanQuery(shared, query);
        return ask<NearestCodes>({ query, scanned, ...(qscale === undefined ? {} : { qscale }), k: Math.min(k, size), scan, near: true });
      };
    },
    shareCodes(codes, shared) {
      const scan = nextScan++;
      register({ shared, scan });
      const codeScan = nextScan++;
      register({ sharedCodes: codes, codes: codeScan });
      return async (query, code, k, chunkMask) => {
        checkQuery(query, shared.dims);
        if (code.length !== codes.words * 8) throw new Error(`a code of ${code.length} bytes for codes of ${codes.words * 8}`);
        if (chunkMask && chunkMask.length !== codes.count) throw new Error(`a mask of ${chunkMask.length} chunks for ${codes.count}`);
        return ask<NearestCodes>({ ...scanQuery(shared, query), code, k, codes: codeScan, scan, ...(chunkMask ? { mask: chunkMask } : {}) });
      };
    },
  };
}
