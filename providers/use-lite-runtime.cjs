// @ts-check
/**
 * One USE-lite model in this thread, run synchronously, on one of two backends (ADR 0007,
 * ADR 0012):
 *
 * - 'native': the model's forward pass written out here (createForwardPass) on the AVX2 + FMA
 *   products and attention of native/gemm.cc (built at install where a compiler is present),
 *   on `threads` CPU threads (at most 2: the output's columns split between the caller and one
 *   helper thread, so the vectors do not depend on it);
 * - 'wasm': the model graph on TensorFlow.js's WebAssembly backend as shipped, on one thread.
 *   (Its multi-threaded build needed process-wide patches of `Worker` and `os.cpus`; ADR 0012
 *   dropped it and says what that costs.)
 *
 * The graph runs through TensorFlow.js's synchronous executor: its two `Where` nodes (the only
 * reason it needed the asynchronous one) read their condition with a synchronous read, which
 * this backend allows. Same vectors as the package's own `embed`, bit for bit; the forward
 * pass gives them to float32 rounding.
 *
 * CommonJS, not TypeScript: embedding workers are plain `eval` workers that `require` by path
 * (under vitest and plain Node as well as tsx). Type-checked all the same (tsconfig.cjs.json).
 */
'use strict';
const path = require('node:path');

const ADDON = path.join(__dirname, '..', 'native', 'build', 'Release', 'polyphony_gemm.node');

/**
 * What gemm does to C's values on their way out (in this order), and on which micro-kernel.
 * @typedef {object} GemmOptions
 * @property {Float32Array} [bias] [n], added to every row
 * @property {Float32Array} [residual] [m, n], added after the bias
 * @property {boolean} [relu] negative (and NaN) values become 0, last
 * @property {boolean} [wide] the AVX-512 micro-kernel (same numbers bit for bit; only where wide())
 */

/**
 * native/gemm.cc's exports (every view is checked against its buffer there).
 * @typedef {object} NativeAddon
 * @property {() => boolean} supported AVX2 + FMA on this CPU.
 * @property {() => boolean} wide AVX-512 on this CPU: gemm may take `wide`.
 * @property {(b: ArrayBufferLike, byteOffset: number, k: number, n: number) => ArrayBuffer} pack a [k, n] weight, packed for gemm.
 * @property {(a: ArrayBufferLike, aOffset: number, packed: ArrayBuffer, c: ArrayBufferLike, cOffset: number, m: number, k: number, n: number, threads: number, options?: GemmOptions) => void} gemm C = A · B, then the options' epilogue.
 * @property {() => boolean} int8 AVX-512 VNNI on this CPU: packInt8 and gemmInt8 run.
 * @property {(b: ArrayBufferLike, byteOffset: number, k: number, n: number) => ArrayBuffer} packInt8 a [k, n] weight, quantised per column for gemmInt8.
 * @property {(input: ArrayBufferLike, inputOffset: number, out: ArrayBufferLike, outOffset: number, rows: number, dims: number, scale: Float32Array, bias: Float32Array, epsilon: number) => void} layerNorm each row's layer norm, as the forward pass's JavaScript computed it.
 * @property {(a: ArrayBufferLike, aOffset: number, packed: ArrayBuffer, c: ArrayBufferLike, cOffset: number, m: number, k: number, n: number, threads: number, options?: GemmOptions) => void} gemmInt8 C ≈ A · B on int8 (A quantised per row), then the epilogue.
 * @property {(qkv: ArrayBufferLike, qkvOffset: number, out: ArrayBufferLike, outOffset: number, tokens: number, heads: number, headDims: number, scale: number) => void} attention one sequence's multi-head self-attention.
 */

/**
 * What the runtime reads of a loaded TensorFlow.js graph model (the package has no types).
 * @typedef {{ shape: number[], dataSync(): Float32Array, dispose(): void }} Tensor
 * @typedef {{ weights: Record<string, Tensor[] | undefined>, executor: { graph: { nodes: Record<string, { op: string, category: string }> } }, execute(inputs: Record<string, Tensor>): Tensor, dispose(): void }} GraphModel
 * @typedef {{ encode(text: string): number[] }} Tokenizer
 * @typedef {{ model: GraphModel, tokenizer: Tokenizer }} PackagedModel
 */

/** @typedef {(texts: string[]) => Float32Array[]} EmbedFunction raw vectors (l2-normalised by the model), one per text, in order */

/**
 * The native kernels, or why they are not there.
 * @returns {{ addon?: NativeAddon, error?: string }}
 */
function loadNativeAddon() {
  /** @type {NativeAddon} */
  let addon;
  try {
    addon = require(ADDON);
  } catch (error) {
    const code = error && typeof error === 'object' && 'code' in error ? error.code : error;
    return { error: `not built (${String(code).slice(0, 80)}): npm run build:native` };
  }
  if (!addon.supported()) return { error: 'this CPU has no AVX2 + FMA' };
  return { addon };
}

/**
 * The package's tokenizer (@energetic-ai/embeddings: a trie of the vocabulary's pieces, then
 * the best-scoring segmentation), as the runtime reads it.
 * @typedef {{ children: Record<string, TrieNode | undefined>, end: boolean, word: [string[], number, number] }} TrieNode
 * @typedef {{ vocabulary: [string, number][], trie: { root: TrieNode } }} TokenizerInternals
 */

/**
 * The package tokenizer's encode, the same ids for every text, without its quadratic cost: for
 * each position it searched the trie with a copy of the rest of the text (`symbols.slice(i)`),
 * so a passage of n characters copied n²/2 of them; a profile of a build's batch had it at
 * 12 % of the time. Here the trie is walked in place from each position. The best segmentation
 * is computed as the package does: scores added in the same order (for each end, starts in
 * increasing order; ties to the later start), the package's unknown piece (id 0, score 0, one
 * character) where no piece starts, the same walk back from the end and the same merging of
 * unknown runs. test/embedding-speed-paths.test.ts compares both on ArguAna passages and odd strings.
 * Falls back to the package's own encode if its internals are not as expected.
 * @param {Tokenizer} tokenizer
 * @returns {(text: string) => number[]}
 */
function createFastEncoder(tokenizer) {
  const internals = /** @type {Partial<TokenizerInternals>} */ (/** @type {unknown} */ (tokenizer));
  const root = internals.trie?.root;
  const vocabulary = internals.vocabulary;
  if (!root || typeof root.children !== 'object' || !Array.isArray(vocabulary)) return (text) => tokenizer.encode(text);
  const separator = '\u2581';
  return (text) => {
    const normalized = text.normalize('NFKC');
    const input = normalized.length > 0 ? separator + normalized.replace(/ /g, separator) : normalized;
    const symbols = Array.from(input);
    const length = symbols.length;
    const best = new Float64Array(length + 1);
    const words = new Int32Array(length + 1);
    for (let start = 0; start < length; start++) {
      const before = best[start];
      let node = root.children[symbols[start]];
      let matched = false;
      for (let end = start + 1; node; end++) {
        if (node.end) {
          matched = true;
          const score = node.word[1] + before;
          if (best[end] === 0 || score >= best[end]) {
            best[end] = score;
            words[end] = node.word[2];
          }
        }
        if (end >= length) break;
        node = node.children[symbols[end]];
      }
      if (!matched && (best[start + 1] === 0 || before >= best[start + 1])) {
        best[start + 1] = before;
        words[start + 1] = 0;
      }
    }
    /** @type {number[]} */
    const pieces = [];
    for (let position = length; position > 0; position -= vocabulary[words[position]][0].length) pieces.push(words[position]);
    /** @type {number[]} */
    const merged = [];
    let previousUnknown = false;
    for (const id of pieces) {
      if (!(previousUnknown && id === 0)) merged.push(id);
      previousUnknown = id === 0;
    }
    return merged.reverse();
  };
}

const KT = 'module_apply_default/Encoder_en/KonaTransformer/';
const STACK = `${KT}Encode/TransformerStack/`;
const KERNELS = 'module/Encoder_en/KonaTransformer/Encode/';

/**
 * USE-lite's forward pass written out (ADR 0007), for the native kernels: the products on
 * native/gemm.cc, attention per sequence there too, the rest (layer norms, biases, residuals,
 * pooling) in plain loops here. It follows the model graph node for node:
 *
 *   ids clipped to 128 → x = e + (e + timing) → per layer: LN → 1×1 qkv → 4-head attention
 *   (queries scaled first) → 1×1 output + residual (layer 0: dense(x); layer 1: x) → LN →
 *   conv1 → relu → conv2 + residual → mean over the tokens → tanh layer → l2 normalise.
 *
 * Padding is not computed at all: in the graph a padded token is masked out of every valid
 * token's attention (exp(-1e9) is 0 in float32) and out of the mean, and every other step
 * works row by row, so a batch's sequences are laid end to end and only attention looks at
 * one sequence at a time. Same vectors as the graph to within float32 rounding
 * (test/native-kernels.test.ts). Throws if the model's weights are not the expected ones.
 * Returns embed(texts): raw vectors (l2-normalised by the model), one per text, in order.
 *
 * Biases, residuals and relu are applied by gemm as each tile leaves the registers, and the
 * timing signal is a table: the same float32 operations in the same order as the loops here
 * did before (ADR 0021), so the same vectors bit for bit, with the JavaScript passes gone.
 * @param {GraphModel} graphModel
 * @param {Tokenizer} tokenizer
 * @param {NativeAddon} addon
 * @param {{ threads: number, wide: boolean, int8: boolean }} kernel CPU threads for the products, whether on the AVX-512 micro-kernel, whether quantised to int8 (other vectors: ADR 0021)
 * @returns {EmbedFunction}
 */
function createForwardPass(graphModel, tokenizer, addon, { threads, wide, int8 }) {
  const weights = graphModel.weights;
  /** @type {(name: string, shape: number[]) => Float32Array} */
  const take = (name, shape) => {
    const tensor = weights[name]?.[0];
    if (!tensor || tensor.shape.length !== shape.length || tensor.shape.some((d, i) => d !== shape[i])) {
      throw new Error(`USE-lite weight ${name} is not ${JSON.stringify(shape)}`);
    }
    return Float32Array.from(tensor.dataSync());
  };
  /** @type {(name: string) => number} */
  const scalar = (name) => weights[name]?.[0]?.dataSync()[0] ?? Number.NaN;
  const maxLength = scalar(`${KT}ClipToMaxLength/Less/y`);
  const epsilon = scalar(`${STACK}Layer_1/TransformerLayer/FFN/layer_prepostprocess/layer_norm/Cast/x`);
  const heads = scalar(`${STACK}Layer_1/TransformerLayer/MultiheadAttention/split_heads/split_last_dimension/Reshape/shape/2`);
  if (maxLength !== 128 || !(epsilon > 0) || heads !== 4) throw new Error('USE-lite constants are not the expected ones');
  const embeddings = take('module/Embeddings_en', [8002, 256]);
  const inverseTimescales = take(`${STACK}Layer_0/AddTimingSignal/TimingSignal/ExpandDims_1`, [1, 128]);
  /** @typedef {{ packed: ArrayBuffer, int8: boolean, bias: Float32Array, k: number, n: number }} Linear */
  // With `int8`, every product of the two transformer layers is quantised (ADR 0021); the tanh
  // layer, one row a text, stays float32: quantising it would save nothing measurable.
  /** @type {(weightName: string, biasName: string, k: number, n: number, shape?: number[], quantise?: boolean) => Linear} */
  const linear = (weightName, biasName, k, n, shape = [k, n], quantise = int8) => ({
    packed: quantise ? addon.packInt8(take(weightName, shape).buffer, 0, k, n) : addon.pack(take(weightName, shape).buffer, 0, k, n),
    int8: quantise,
    bias: take(biasName, [n]),
    k,
    n,
  });
  /** @typedef {{ scale: Float32Array, bias: Float32Array }} Norm */
  /** @type {(index: number, dIn: number) => { dIn: number, norm: Norm, residual: Linear | undefined, qkv: Linear, output: Linear, queryScale: number, ffnNorm: Norm, conv1: Linear, conv2: Linear }} */
  const layer = (index, dIn) => {
    const own = `${KT}Encode/Layer_${index}/TransformerLayer/`;
    const stack = `${STACK}Layer_${index}/TransformerLayer/`;
    const mha = `${KERNELS}Layer_${index}/TransformerLayer/MultiheadAttention/`;
    return {
      dIn,
      norm: {
        scale: take(`${own}layer_prepostprocess/layer_norm/layer_norm_scale/ConcatPartitions/concat`, [dIn]),
        bias: take(`${own}layer_prepostprocess/layer_norm/layer_norm_bias/ConcatPartitions/concat`, [dIn]),
      },
      residual: dIn === 512 ? undefined : linear(`${own}dense/kernel/ConcatPartitions/concat`, `${own}dense/bias/ConcatPartitions/concat`, dIn, 512),
      qkv: linear(`${mha}qkv_transform_single/kernel/part_0`, `${own}MultiheadAttention/qkv_transform_single/bias/ConcatPartitions/concat`, dIn, 3 * dIn, [
        1,
        1,
        dIn,
        3 * dIn,
      ]),
      output: linear(`${mha}output_transform_single/kernel/part_0`, `${own}MultiheadAttention/output_transform_single/bias/ConcatPartitions/concat`, dIn, 512, [
        1,
        1,
        dIn,
        512,
      ]),
      queryScale: scalar(`${stack}MultiheadAttention/mul/y`),
      ffnNorm: {
        scale: take(`${own}FFN/layer_prepostprocess/layer_norm/layer_norm_scale/ConcatPartitions/concat`, [512]),
        bias: take(`${own}FFN/layer_prepostprocess/layer_norm/layer_norm_bias/ConcatPartitions/concat`, [512]),
      },
      conv1: linear(`${stack}FFN/conv1/Tensordot/Reshape_1`, `${own}FFN/conv1/bias/ConcatPartitions/concat`, 512, 1536),
      conv2: linear(`${stack}FFN/conv2/Tensordot/Reshape_1`, `${own}FFN/conv2/bias/ConcatPartitions/concat`, 1536, 512),
    };
  };
  const layers = [layer(0, 256), layer(1, 512)];
  const hidden = linear(
    'module/Encoder_en/hidden_layers/tanh_layer_0/weights',
    'module/Encoder_en/hidden_layers/tanh_layer_0/bias',
    512,
    512,
    undefined,
    false,
  );

  // sin and cos of position × inverse timescale for every position a sequence can have, each
  // rounded to float32 as the graph does: computed once, not once per token.
  const timing = new Float32Array(maxLength * 256);
  for (let position = 0; position < maxLength; position++) {
    for (let i = 0; i < 128; i++) {
      const angle = Math.fround(position * inverseTimescales[i]);
      timing[position * 256 + i] = Math.sin(angle);
      timing[position * 256 + 128 + i] = Math.cos(angle);
    }
  }
  const encode = createFastEncoder(tokenizer);

  /**
   * The forward pass's activations, one buffer a role, kept from call to call and zeroed when
   * taken: a question's 1.2 MB of new buffers a call made the collector stop this thread every
   * few dozen questions (Mark-Compact on external memory, 3–12 ms), on the path of the question
   * being embedded. Each buffer its own, its view at offset 0 (the addon writes from there).
   * @type {Map<string, ArrayBuffer>}
   */
  const activations = new Map();
  /** @type {(role: string, length: number) => Float32Array} */
  const activation = (role, length) => {
    let buffer = activations.get(role);
    if (!buffer || buffer.byteLength < length * 4) activations.set(role, (buffer = new ArrayBuffer(Math.max(length, 1) * 4)));
    return new Float32Array(buffer, 0, length).fill(0);
  };

  /**
   * rows × k by the packed [k, n] weights, plus the bias, then (when given) plus the residual
   * [rows, n], then (when asked) relu.
   * @type {(role: string, input: Float32Array, rows: number, weights: Linear, residual?: Float32Array, relu?: boolean) => Float32Array}
   */
  const apply = (role, input, rows, { packed, int8: quantisedProduct, bias, k, n }, residual, relu = false) => {
    const out = activation(role, rows * n);
    const product = quantisedProduct ? addon.gemmInt8 : addon.gemm;
    product(input.buffer, input.byteOffset, packed, out.buffer, 0, rows, k, n, threads, { bias, residual, relu, wide });
    return out;
  };
  /**
   * Layer norm of each row: (x - mean) · scale / sqrt(var + ε) + bias, in native/gemm.cc with
   * the roundings of the JavaScript loop it replaced (ADR 0021; test/embedding-speed-paths.test.ts
   * compares the two bit for bit).
   * @type {(role: string, input: Float32Array, rows: number, dims: number, norm: Norm) => Float32Array}
   */
  const normalizeRows = (role, input, rows, dims, { scale, bias }) => {
    const out = activation(role, rows * dims);
    addon.layerNorm(input.buffer, input.byteOffset, out.buffer, 0, rows, dims, scale, bias, epsilon);
    return out;
  };

  /**
   * Sequences are embedded in groups of at most GROUP_ROWS tokens: every step but attention is
   * row by row, so grouping changes no number, and it keeps a product's activations in cache
   * (a build's batch of 64 passages is 8k rows, tens of MB, re-read for every weight panel).
   */
  const GROUP_ROWS = 256;
  /** @type {EmbedFunction} */
  return function embed(texts) {
    const all = texts.map((text) => encode(text).slice(0, maxLength));
    /** @type {Float32Array[]} */
    const out = [];
    for (let first = 0; first < all.length;) {
      let last = first + 1;
      let rows = all[first].length;
      while (last < all.length && rows + all[last].length <= GROUP_ROWS) rows += all[last++].length;
      out.push(...embedGroup(all.slice(first, last)));
      first = last;
    }
    return out;
  };

  /**
   * @param {number[][]} sequences token ids, at most maxLength each
   * @returns {Float32Array[]}
   */
  function embedGroup(sequences) {
    /** @type {number[]} */
    const starts = [];
    let rows = 0;
    for (const ids of sequences) {
      starts.push(rows);
      rows += ids.length;
    }
    // Token embeddings plus the timing signal, as the graph adds them: e + (e + signal).
    /** @type {Float32Array} */
    let x = activation('embedded', Math.max(1, rows) * 256);
    sequences.forEach((ids, s) => {
      ids.forEach((id, position) => {
        const row = (starts[s] + position) * 256;
        const source = id * 256;
        const signal = position * 256;
        for (let i = 0; i < 256; i++) {
          const value = embeddings[source + i];
          x[row + i] = value + Math.fround(value + timing[signal + i]);
        }
      });
    });
    for (const [index, step] of (rows > 0 ? layers : []).entries()) {
      const d = step.dIn;
      const normed = normalizeRows(`normed ${index}`, x, rows, d, step.norm);
      const residual = step.residual ? apply(`residual ${index}`, x, rows, step.residual) : x;
      const qkv = apply(`qkv ${index}`, normed, rows, step.qkv);
      const attended = activation(`attended ${index}`, Math.max(1, rows) * d);
      sequences.forEach((ids, s) => {
        if (ids.length > 0)
          addon.attention(qkv.buffer, starts[s] * 3 * d * 4, attended.buffer, starts[s] * d * 4, ids.length, heads, d / heads, step.queryScale);
      });
      const h = apply(`attention out ${index}`, attended, rows, step.output, residual);
      const inner = apply(`inner ${index}`, normalizeRows(`ffn normed ${index}`, h, rows, 512, step.ffnNorm), rows, step.conv1, undefined, true);
      x = apply(`out ${index}`, inner, rows, step.conv2, h);
    }
    // Mean over each sequence's tokens, the tanh layer, l2 normalisation.
    const pooled = activation('pooled', sequences.length * 512);
    sequences.forEach((ids, s) => {
      const base = s * 512;
      for (let t = 0; t < ids.length; t++) {
        const row = (starts[s] + t) * 512;
        for (let c = 0; c < 512; c++) pooled[base + c] += x[row + c];
      }
      const count = Math.max(1, ids.length);
      for (let c = 0; c < 512; c++) pooled[base + c] /= count;
    });
    const activated = apply('activated', pooled, sequences.length, hidden);
    return sequences.map((_, s) => {
      const vector = activated.slice(s * 512, (s + 1) * 512);
      let squares = 0;
      for (let c = 0; c < 512; c++) {
        vector[c] = Math.tanh(vector[c]);
        squares += vector[c] * vector[c];
      }
      const inverse = 1 / Math.sqrt(Math.max(squares, 1e-12));
      for (let c = 0; c < 512; c++) vector[c] *= inverse;
      return vector;
    });
  }
}

const SYNC_WHERE = 'PolyphonySyncWhere';

/**
 * Lets GraphModel.execute run the graph: `Where` as a custom op with a synchronous read.
 * @param {any} core the TensorFlow.js bundle of the energetic-ai core package (no types)
 * @param {GraphModel} graphModel
 */
function makeSynchronous(core, graphModel) {
  // (Registering again replaces the same function.)
  core.registerOp(SYNC_WHERE, (/** @type {{ inputs: Tensor[] }} */ node) => {
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
 * The graph's embed: the package's own steps, on the synchronous executor.
 * @param {any} core
 * @param {PackagedModel} model
 * @returns {EmbedFunction}
 */
function graphEmbed(core, model) {
  makeSynchronous(core, model.model);
  const dims = 512;
  return (texts) => {
    const encodings = texts.map((text) => model.tokenizer.encode(text));
    /** @type {number[]} */
    const pairs = [];
    encodings.forEach((ids, row) => ids.forEach((_, position) => pairs.push(row, position)));
    const indices = core.tensor2d(pairs, [pairs.length / 2, 2], 'int32');
    const values = core.tensor1d(encodings.flat(), 'int32');
    /** @type {Tensor} */
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
  };
}

/**
 * @typedef {object} RuntimeOptions what loadUseLite takes (api/providers/embedder.ts sends it to each worker)
 * @property {string} corePath the TensorFlow.js bundle (the energetic-ai core package), resolved
 * @property {string} embeddingsPath the energetic-ai embeddings package, resolved
 * @property {string} modelPath the energetic-ai model-embeddings-en package, resolved
 * @property {number} [threads] CPU threads for one embedding's products on the native kernels (default 1, at most 2)
 * @property {'auto' | 'avx2' | 'wasm'} [kernels] 'auto' (default): native where built and supported (its AVX-512 micro-kernel where the CPU has it), else WebAssembly; 'avx2': native on the AVX2 micro-kernel only
 * @property {'float32' | 'int8'} [precision] 'float32' (default): the model's vectors; 'int8': the transformer's products quantised on AVX-512 VNNI (other vectors, within ADR 0021's tolerance; loading fails where it cannot run)
 */

/**
 * @typedef {object} UseLiteRuntime one loaded model
 * @property {'native' | 'wasm'} kernels
 * @property {boolean} wide the native products on the AVX-512 micro-kernel (the same numbers as on AVX2)
 * @property {'float32' | 'int8'} precision
 * @property {number} threads
 * @property {string | undefined} nativeError why not native, when not ('auto' only)
 * @property {EmbedFunction} embed
 */

/**
 * Loads the model: on the native kernels where built and supported (unless `kernels` is
 * 'wasm'), on AVX-512 where the CPU has it (unless `kernels` is 'avx2'), else the graph on
 * WebAssembly, on one thread.
 * @param {RuntimeOptions} options
 * @returns {Promise<UseLiteRuntime>}
 */
async function loadUseLite({ corePath, embeddingsPath, modelPath, threads = 1, kernels = 'auto', precision = 'float32' }) {
  const core = require(corePath);
  core.enableProdMode(); // skips TensorFlow's debug checks (NaN scans of every result); same vectors
  // The WebAssembly backend initialises asynchronously; a model loaded before it is ready
  // fails with "Backend 'wasm' has not yet been initialized" (seen in a worker).
  await core.ready();
  /** @type {{ initModel(source: unknown): Promise<PackagedModel> }} */
  const { initModel } = require(embeddingsPath);
  const { modelSource } = require(modelPath);
  const native = kernels === 'wasm' ? { error: 'EMBED_KERNELS=wasm' } : loadNativeAddon();
  // int8 vectors carry their own embedder id: never silently float32 ones instead (or the reverse).
  if (precision === 'int8' && !(native.addon && native.addon.int8() && kernels === 'auto')) {
    throw new Error(
      `int8 embeddings need the native kernels on AVX-512 VNNI (${native.error ?? (kernels === 'auto' ? 'this CPU has no AVX-512 VNNI' : `EMBED_KERNELS=${kernels}`)})`,
    );
  }
  if (native.addon) {
    const model = await initModel(modelSource);
    // The native products split over at most 2 threads (the caller's and one helper).
    const threadsInUse = Math.max(1, Math.min(2, threads));
    const wide = kernels === 'auto' && native.addon.wide();
    const int8 = precision === 'int8';
    try {
      const embed = createForwardPass(model.model, model.tokenizer, native.addon, { threads: threadsInUse, wide, int8 });
      return { kernels: 'native', wide, precision, threads: threadsInUse, nativeError: undefined, embed };
    } catch (error) {
      native.error = `the forward pass could not take this model's weights (${String(error instanceof Error ? error.message : error)})`;
    } finally {
      // The forward pass holds its own (packed) copies; the graph's go.
      model.model.dispose();
    }
  }
  const model = await initModel(modelSource);
  if (precision === 'int8') throw new Error(`int8 embeddings need the native kernels (${native.error})`);
  return { kernels: 'wasm', wide: false, precision, threads: 1, nativeError: native.error, embed: graphEmbed(core, model) };
}

module.exports = { loadUseLite, loadNativeAddon, createFastEncoder };
