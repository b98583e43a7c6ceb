/**
 * The server's approximate vector index, in a worker thread of its own: the saved index is
 * memory-mapped there (and only there: a second mapping would add its pages to the server's
 * memory again), and a search runs there while the server's own thread scores the question's
 * words (core/search/search-index.ts; bench/README.md, "The index beside the words"). The
 * search's plan (oversampling under filters) is the in-process index's (vector-index.ts),
 * one native search a message.
 */
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import type { ApproximateVectorIndex } from '../core/ports/vector-index.ts';
import { checkIndexFile, DEFAULT_INDEX_PARAMETERS, nativeConfig, oversampled, type VectorIndexParameters } from './vector-index.ts';

export interface VectorIndexWorker extends ApproximateVectorIndex {
  search(query: Float32Array, k: number, allowed?: Uint8Array): Promise<Uint32Array>;
  /** Ends the worker (and its mapping); searches asked after this fail. */
  close(): Promise<void>;
}

/** Runs inside the worker: usearch required by absolute path, the file viewed, one search a message. */
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
let index;
try {
  const { Index } = require(workerData.usearch);
  index = new Index(workerData.config);
  index.view(workerData.file);
  parentPort.postMessage({ ready: { size: Number(index.size()), dims: index.dimensions() } });
} catch (error) {
  parentPort.postMessage({ fatal: String((error && error.message) || error) });
}
parentPort.on('message', ({ id, query, k }) => {
  try {
    const keys = Uint32Array.from(index.search(query, k, 1).keys, Number);
    parentPort.postMessage({ id, keys }, [keys.buffer]);
  } catch (error) {
    parentPort.postMessage({ id, error: String((error && error.message) || error) });
  }
});
`;

interface Pending {
  resolve(keys: Uint32Array): void;
  reject(error: Error): void;
}

type Reply = { ready: { size: number; dims: number } } | { fatal: string } | { id: number; keys: Uint32Array } | { id: number; error: string };

/** Opens the index saved at `file` in a new worker thread; rejects when the worker cannot map it or its dimension is not `dims`. */
export async function openVectorIndexWorker(
  file: string,
  dims: number,
  parameters: VectorIndexParameters = DEFAULT_INDEX_PARAMETERS,
): Promise<VectorIndexWorker> {
  checkIndexFile(file);
  const workerData = { usearch: createRequire(import.meta.url).resolve('usearch'), config: await nativeConfig(dims, parameters), file };
  const worker = new Worker(WORKER_SOURCE, { eval: true, workerData });
  const pending = new Map<number, Pending>();
  let nextId = 0;
  let failed: Error | undefined;
  let started: { resolve(ready: { size: number; dims: number }): void; reject(error: Error): void } | undefined;
  const ready = new Promise<{ size: number; dims: number }>((resolve, reject) => (started = { resolve, reject }));
  const fail = (error: Error) => {
    failed ??= error;
    started?.reject(error);
    for (const job of pending.values()) job.reject(failed);
    pending.clear();
  };
  worker.on('message', (reply: Reply) => {
    if ('ready' in reply) return started?.resolve(reply.ready);
    if ('fatal' in reply) return fail(new Error(`the vector index worker could not open ${file}: ${reply.fatal}`));
    const job = pending.get(reply.id);
    pending.delete(reply.id);
    if (pending.size === 0) worker.unref(); // an idle worker never keeps the process alive
    if ('error' in reply) job?.reject(new Error(`the vector index worker's search failed: ${reply.error}`));
    else job?.resolve(reply.keys);
  });
  worker.on('error', (error) => fail(new Error(`the vector index worker failed: ${error.message}`)));
  worker.on('exit', (code) => fail(new Error(`the vector index worker exited with code ${code}`)));
  const { size, dims: held } = await ready.catch(async (error: Error) => {
    await worker.terminate();
    throw error;
  });
  worker.unref();
  if (held !== dims) {
    await worker.terminate();
    throw new Error(`${file} holds ${held}-dimension vectors, the search ${dims}: rebuild`);
  }

  /** The nearest `k` keys by one native search in the worker. */
  function nearest(query: Float32Array, k: number): Promise<Uint32Array> {
    if (failed) return Promise.reject(failed);
    return new Promise((resolve, reject) => {
      const id = nextId++;
      pending.set(id, { resolve, reject });
      worker.ref(); // keep the process alive while a search is in flight
      worker.postMessage({ id, query, k });
    });
  }

  return {
    size,
    dims,
    async search(query, k, allowed) {
      if (query.length !== dims) throw new Error(`query has ${query.length} dimensions, the index ${dims}`);
      const steps = oversampled(size, k, allowed);
      let step = steps.next();
      while (!step.done) step = steps.next(await nearest(query, step.value));
      return step.value;
    },
    async close() {
      fail(new Error('the vector index worker was closed'));
      await worker.terminate();
    },
  };
}
