/**
 * One USE-lite model in this thread, run synchronously, on the fastest matrix kernels this
 * machine offers (ADR 0007):
 *
 * - 'native': the AVX2 + FMA products of native/gemm.cc (built at install where a compiler is
 *   present) replace the WebAssembly backend's BatchMatMul and 1×1 Conv2D, on `threads` CPU
 *   threads (the output's columns split between them, so the vectors do not depend on it);
 * - 'wasm-threads': the backend's own XNNPACK kernels on a pthread pool (wasm-threads.cjs);
 * - 'wasm': the backend as shipped.
 *
 * The model graph runs through the synchronous executor: its two `Where` nodes (the only
 * reason the graph needed the asynchronous one) read their condition with a synchronous
 * read, which this backend allows. Same vectors as the package's own `embed`, bit for bit,
 * on the same kernels.
 *
 * CommonJS, not TypeScript: embedding workers are plain `eval` workers that `require` by path.
 */
'use strict';
const path = require('node:path');

const ADDON = path.join(__dirname, '..', '..', 'native', 'build', 'Release', 'polyphony_gemm.node');

/** The native kernels, or why they are not there. */
function loadNativeAddon() {
  let addon;
  try {
    addon = require(ADDON);
  } catch (error) {
    return { error: `not built (${String(error && error.code ? error.code : error).slice(0, 80)}): npm run build:native` };
  }
  if (!addon.supported()) return { error: 'this CPU has no AVX2 + FMA' };
  return { addon };
}

const product = (dims) => dims.reduce((x, y) => x * y, 1);

/**
 * Registers native BatchMatMul and 1×1 Conv2D kernels for the 'wasm' backend of `core`.
 * Shapes they do not cover (transposed A, broadcast batches, other dtypes, strided or wider
 * convolutions) keep the backend's own kernels. Returns the threads the products use: those of
 * the first registration in this thread (kernels are registered per thread, not per model).
 */
function registerNativeKernels(core, addon, threads) {
  const originalMatMul = core.getKernel('BatchMatMul', 'wasm');
  const originalConv = core.getKernel('Conv2D', 'wasm');
  if (!originalMatMul || !originalConv) throw new Error('the wasm backend has no BatchMatMul/Conv2D kernel');
  if (originalMatMul.kernelFunc.native) return originalMatMul.kernelFunc.threads;
  /** Packed weights by the tensor's data id (weights keep theirs; freed with the tensor). */
  const packedById = new WeakMap();
  const offsetOf = (backend, info) => backend.dataIdMap.get(info.dataId).memoryOffset;
  const packed = (backend, b, k, n) => {
    let entry = packedById.get(b.dataId);
    if (!entry) {
      entry = addon.pack(backend.wasm.HEAPU8.buffer, offsetOf(backend, b), k, n);
      packedById.set(b.dataId, entry);
    }
    return entry;
  };
  /** [rows, k] × [k, n] with b a weight: the packed product. */
  const gemm = (backend, a, b, rows, k, n, outShape) => {
    const weights = packed(backend, b, k, n);
    const out = backend.makeOutput(outShape, 'float32');
    // makeOutput may grow the heap (a new buffer): read it after.
    const heap = backend.wasm.HEAPU8.buffer;
    addon.gemm(heap, offsetOf(backend, a), weights, heap, offsetOf(backend, out), rows, k, n, threads);
    return out;
  };

  const matMul = (args) => {
    const { a, b } = args.inputs;
    const { transposeA, transposeB } = args.attrs;
    const backend = args.backend;
    if (transposeA || a.dtype !== 'float32' || b.dtype !== 'float32' || a.shape.length < 2 || b.shape.length < 2) return originalMatMul.kernelFunc(args);
    const k = a.shape[a.shape.length - 1];
    const m = a.shape[a.shape.length - 2];
    const n = transposeB ? b.shape[b.shape.length - 2] : b.shape[b.shape.length - 1];
    if ((transposeB ? b.shape[b.shape.length - 1] : b.shape[b.shape.length - 2]) !== k) return originalMatMul.kernelFunc(args);
    const batchA = a.shape.slice(0, -2);
    const batchB = b.shape.slice(0, -2);
    if (!transposeB && product(batchB) === 1 && batchB.length <= batchA.length) {
      return gemm(backend, a, b, product(batchA) * m, k, n, [...batchA, m, n]);
    }
    if (batchA.length === batchB.length && batchA.every((d, i) => d === batchB[i])) {
      const out = backend.makeOutput([...batchA, m, n], 'float32');
      const heap = backend.wasm.HEAPU8.buffer;
      addon.bmm(heap, offsetOf(backend, a), heap, offsetOf(backend, b), heap, offsetOf(backend, out), product(batchA), m, k, n, Boolean(transposeB));
      return out;
    }
    return originalMatMul.kernelFunc(args);
  };
  matMul.native = true;
  matMul.threads = threads;

  const conv2d = (args) => {
    const { x, filter } = args.inputs;
    const { strides, pad, dataFormat, dilations } = args.attrs;
    const ones = (v) => v === undefined || v === 1 || (Array.isArray(v) && v.every((d) => d === 1));
    const [fh, fw, cin, cout] = filter.shape;
    if (x.dtype !== 'float32' || filter.dtype !== 'float32' || x.shape.length !== 4 || fh !== 1 || fw !== 1 || x.shape[3] !== cin ||
        !ones(strides) || !ones(dilations) || (dataFormat && dataFormat !== 'NHWC') || typeof pad !== 'string') {
      return originalConv.kernelFunc(args);
    }
    // A 1×1 convolution with stride 1 is a product of every pixel by the [cin, cout] filter.
    return gemm(args.backend, x, filter, x.shape[0] * x.shape[1] * x.shape[2], cin, cout, [x.shape[0], x.shape[1], x.shape[2], cout]);
  };

  core.unregisterKernel('BatchMatMul', 'wasm');
  core.registerKernel({ ...originalMatMul, kernelFunc: matMul });
  core.unregisterKernel('Conv2D', 'wasm');
  core.registerKernel({ ...originalConv, kernelFunc: conv2d });
  return threads;
}

const SYNC_WHERE = 'PolyphonySyncWhere';

/** Lets GraphModel.execute run the graph: `Where` as a custom op with a synchronous read. */
function makeSynchronous(core, graphModel) {
  // (Registering again replaces the same function.)
  core.registerOp(SYNC_WHERE, (node) => {
    const condition = node.inputs[0];
    return core.kernel_impls.whereImpl(condition.shape, condition.dataSync());
  });
  for (const node of Object.values(graphModel.executor.graph.nodes)) {
    if (node.op === 'Where') {
      node.op = SYNC_WHERE;
      node.category = 'custom';
    }
  }
}

/**
 * Loads the model. `kernels`: 'auto' (native where built and supported, else WebAssembly) or
 * 'wasm'. `threads`: CPU threads for one embedding's matrix products.
 */
async function loadUseLite({ corePath, embeddingsPath, modelPath, threadsModule, threads = 1, kernels = 'auto' }) {
  const core = require(corePath);
  core.enableProdMode(); // skips TensorFlow's debug checks (NaN scans of every result); same vectors
  // The WebAssembly backend initialises asynchronously; a model loaded before it is ready
  // fails with "Backend 'wasm' has not yet been initialized" (seen in a worker).
  await core.ready();
  let kind = 'wasm';
  let threadsInUse = 1;
  let nativeError;
  const registered = core.getKernel('BatchMatMul', 'wasm')?.kernelFunc;
  const native = registered?.native ? { addon: true } : kernels === 'wasm' ? { error: 'EMBED_KERNELS=wasm' } : loadNativeAddon();
  if (native.addon) {
    // Kernels are registered per thread: a model loaded after another in the same thread
    // runs on what the first registered. The native products split over at most 2 threads
    // (the caller's and one helper).
    threadsInUse = registered?.native ? registered.threads : registerNativeKernels(core, native.addon, Math.max(1, Math.min(2, threads)));
    kind = 'native';
  } else {
    nativeError = native.error;
    if (threads > 1) {
      threadsInUse = await require(threadsModule).enableWasmThreads(core, corePath, threads);
      if (threadsInUse > 1) kind = 'wasm-threads';
    }
  }
  const { initModel } = require(embeddingsPath);
  const { modelSource } = require(modelPath);
  const model = await initModel(modelSource);
  makeSynchronous(core, model.model);
  const dims = 512;
  return {
    kernels: kind,
    threads: threadsInUse,
    /** Why the native kernels are not in use ('auto' only). */
    nativeError,
    /** Raw (not normalised) vectors, one per text, in order. */
    embed(texts) {
      const encodings = texts.map((text) => model.tokenizer.encode(text));
      const pairs = [];
      encodings.forEach((ids, row) => ids.forEach((_, position) => pairs.push(row, position)));
      const indices = core.tensor2d(pairs, [pairs.length / 2, 2], 'int32');
      const values = core.tensor1d(encodings.flat(), 'int32');
      let output;
      try {
        output = model.model.execute({ indices, values });
      } finally {
        indices.dispose();
        values.dispose();
      }
      const data = output.dataSync();
      output.dispose();
      return texts.map((_, row) => data.slice(row * dims, (row + 1) * dims));
    },
  };
}

module.exports = { loadUseLite, loadNativeAddon };
