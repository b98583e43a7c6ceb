/**
 * Two CPU cores for one query embedding: TensorFlow.js's WebAssembly backend ships a
 * multi-threaded build (XNNPACK on a pthread pool) that it never selects under Node, and its
 * BatchMatMul kernel runs single-threaded even there. This module, loaded by whichever thread
 * holds the model (an embedding worker or the calling thread), turns both on for the pinned
 * @energetic-ai/core 0.2.0 (TensorFlow.js 4.5.0). Vectors stay bit for bit the same
 * (test/embedder-threads.test.ts); ADR 0006 says why and what it leans on.
 *
 * CommonJS, not TypeScript: embedding workers are plain `eval` workers that `require` by path.
 */
'use strict';
const fs = require('node:fs');
const os = require('node:os');
const workerThreads = require('node:worker_threads');

/**
 * Runs first in each Emscripten pthread worker. The bundle hands the worker its script as a
 * Blob URL (which Node's Worker cannot open) and as a Blob inside the 'load' message (which
 * the worker reads with a synchronous file read). The prelude reads that Blob before the
 * worker's own handler sees the message, keeping messages in order, and supplies the few
 * bundle-scope names the pthread factory's source refers to.
 */
const PTHREAD_PRELUDE = `
var require$$0 = require('node:fs'), require$$1 = require('node:path'), require$$3 = require('node:perf_hooks'), require$$4 = require('node:os');
var commonjsGlobal = globalThis;
var __values = (o) => o[Symbol.iterator]();
var __read = (o, n) => { const out = []; for (const x of o) { if (n !== undefined && out.length >= n) break; out.push(x); } return out; };
var __spreadArray = (to, from) => to.concat(Array.prototype.slice.call(from));
{
  const port = require('node:worker_threads').parentPort;
  const on = port.on.bind(port);
  port.on = (event, listener) => {
    if (event !== 'message') return on(event, listener);
    let chain = Promise.resolve();
    return on('message', (data) => {
      chain = chain.then(async () => {
        if (data && data.cmd === 'load' && typeof data.urlOrBlob !== 'string') {
          (0, eval)(await data.urlOrBlob.text());
          data.urlOrBlob = '<preloaded>';
          const importScripts = globalThis.importScripts;
          globalThis.importScripts = (file) => (file === '<preloaded>' ? undefined : importScripts(file));
        }
        listener(data);
      });
    });
  };
}
`;

/** The pthread worker's source, as the bundle holds it (a string literal in dist/index.js). */
function pthreadWorkerSource(corePath) {
  const text = fs.readFileSync(corePath, 'utf8');
  const marker = "var wasmWorkerContents = '";
  const start = text.indexOf(marker);
  const end = text.indexOf("';\n", start);
  if (start < 0 || end < 0) throw new Error('no pthread worker source in the TensorFlow.js bundle');
  // The same unescaping the bundle applies before it makes its Blob.
  return (0, eval)(text.slice(start + marker.length - 1, end + 1)).replace(/\n/g, '\\n');
}

/** Starting takes well under a second; this is the wait before falling back to one thread. */
const START_TIMEOUT_MS = 20_000;

let patchedWorker = false;
/** Node's Worker, taught to open the bundle's Blob URL for the pthread script. */
function patchWorker(corePath) {
  if (patchedWorker) return;
  patchedWorker = true;
  let source;
  const NodeWorker = workerThreads.Worker;
  workerThreads.Worker = class extends NodeWorker {
    constructor(file, options) {
      if (typeof file === 'string' && file.startsWith('blob:')) {
        source ??= PTHREAD_PRELUDE + pthreadWorkerSource(corePath);
        super(source, { ...options, eval: true });
      } else {
        super(file, options);
      }
    }
  };
}

/**
 * Re-initialises the 'wasm' backend from its multi-threaded build with `threads` threads.
 * Resolves to the thread count in use; on any failure the single-threaded backend is
 * restored and 1 is returned, so a deployment never loses its embedder over this.
 */
async function enableWasmThreads(core, corePath, threads, { startTimeoutMs = START_TIMEOUT_MS } = {}) {
  if (!(threads > 1)) return 1;
  await core.ready();
  // Switching backends disposes every tensor of the old one: a model already loaded on this
  // thread would lose its weights. Only a thread with nothing loaded yet switches.
  if (core.memory().numTensors > 0) return 1;
  const factory = core.findBackendFactory('wasm');
  const restore = async () => {
    core.env().set('WASM_HAS_MULTITHREAD_SUPPORT', false);
    core.setThreadsCount(1);
    core.removeBackend('wasm');
    core.registerBackend('wasm', factory, 2);
    await core.setBackend('wasm');
  };
  try {
    patchWorker(corePath);
    core.env().set('WASM_HAS_MULTITHREAD_SUPPORT', true);
    core.setThreadsCount(threads);
    core.removeBackend('wasm');
    core.registerBackend('wasm', factory, 2);
    // The backend caps its pool at half the logical cores it sees (it assumes two
    // hyper-threads a core); show it enough for `threads`, only while it starts.
    const cpus = os.cpus;
    os.cpus = () => Array.from({ length: threads * 2 }, () => cpus()[0]);
    let timer;
    try {
      // A pthread worker that never reports loaded would leave the start pending for ever.
      const timeout = new Promise((_, reject) => {
        timer = setTimeout(() => reject(new Error('the multi-threaded backend did not start in time')), startTimeoutMs);
      });
      if (!(await Promise.race([core.setBackend('wasm'), timeout]))) throw new Error('the multi-threaded backend did not start');
    } finally {
      clearTimeout(timer);
      os.cpus = cpus;
    }
    const pthreads = core.backend().wasm.PThread;
    // Pool threads must not keep a process alive that has nothing else to do.
    for (const worker of pthreads?.runningWorkers ?? []) worker.unref?.();
    // The build pre-starts 8 pthread workers; the pool above took what it needs. The rest
    // would hold ~10 MB each for nothing (one is started again if a thread is ever asked for).
    if (pthreads && Array.isArray(pthreads.unusedWorkers)) {
      for (const worker of pthreads.unusedWorkers) void worker.terminate();
      pthreads.unusedWorkers = [];
    }
    routeMatMulThroughConv(core);
    return core.getThreadsCount();
  } catch {
    await restore();
    return 1;
  }
}

/**
 * BatchMatMul of activations by a weight matrix ([..., M, K] × [K, N], no transposes) as a
 * 1×1 convolution, which the backend runs on the thread pool; its own BatchMatMul passes no
 * pool to XNNPACK. Same products, same order of summation. Other shapes keep the original.
 */
function routeMatMulThroughConv(core) {
  const original = core.getKernel('BatchMatMul', 'wasm');
  const conv2d = core.getKernel('Conv2D', 'wasm')?.kernelFunc;
  const reshape = core.getKernel('Reshape', 'wasm')?.kernelFunc;
  if (!original || !conv2d || !reshape || original.routedThroughConv) return;
  core.unregisterKernel('BatchMatMul', 'wasm');
  core.registerKernel({
    ...original,
    routedThroughConv: true,
    kernelFunc(args) {
      const { a, b } = args.inputs;
      const { transposeA, transposeB } = args.attrs;
      const backend = args.backend;
      const product = (dims) => dims.reduce((x, y) => x * y, 1);
      if (transposeA || transposeB || a.dtype !== 'float32' || b.dtype !== 'float32' || product(b.shape.slice(0, -2)) !== 1) {
        return original.kernelFunc(args);
      }
      const k = a.shape[a.shape.length - 1];
      const m = product(a.shape.slice(0, -1));
      const n = b.shape[b.shape.length - 1];
      const x = reshape({ inputs: { x: a }, backend, attrs: { shape: [1, m, 1, k] } });
      const filter = reshape({ inputs: { x: b }, backend, attrs: { shape: [1, 1, k, n] } });
      const out = conv2d({ inputs: { x, filter }, backend, attrs: { strides: [1, 1], pad: 'valid', dataFormat: 'NHWC', dilations: [1, 1] } });
      backend.disposeData(x.dataId);
      backend.disposeData(filter.dataId);
      out.shape = [...a.shape.slice(0, -1), n];
      return out;
    },
  });
}

module.exports = { enableWasmThreads };
