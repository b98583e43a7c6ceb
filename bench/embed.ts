/**
 * Embedding throughput of each way the USE-lite model runs, as ratios against a reference
 * measured in the same run: the native kernels on one thread, as the server runs them where
 * they were built (ADR 0007). Every variant is one embedding worker thread, as in the server.
 *
 *   - questions: the demo corpus's questions embedded one at a time, variants in turn per
 *     question (so a noisy neighbour slows them all alike): questions a second;
 *   - batches: its passages embedded in batches of 64, as a build does: passages a second.
 *
 * The WebAssembly graph on 2 threads (wasm-threads.cjs, removed by ADR 0012) was measured with
 * this benchmark at commit 2737d8a; ADR 0012 has the figures.
 *
 * `npx tsx bench/embed.ts [--rounds 3]`; also part of `npm run bench`.
 */
import path from 'node:path';
import { parseArgs } from 'node:util';
import { pathToFileURL } from 'node:url';
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

async function main() {
  const { values } = parseArgs({ options: { rounds: { type: 'string', default: '3' } } });
  const rounds = Math.max(1, Number(values.rounds));
  const { questions, passages } = demoTexts();
  const batches: string[][] = [];
  for (let start = 0; start + BATCH <= Math.min(passages.length, 4 * BATCH); start += BATCH) batches.push(passages.slice(start, start + BATCH));
  const variants: Variant[] = [
    { label: 'native kernels, 1 thread (reference)', options: { threads: 1, kernels: 'auto' }, questionTimes: [], batchTimes: [] },
    { label: 'native kernels, 2 threads', options: { threads: 2, kernels: 'auto' }, questionTimes: [], batchTimes: [] },
    { label: 'WebAssembly graph (the fallback)', options: { kernels: 'wasm' }, questionTimes: [], batchTimes: [] },
  ];
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
  console.log(
    `${questions.length} questions × ${rounds} rounds one at a time, ${batches.length} batches of ${BATCH} passages × ${rounds} rounds; one embedding worker each`,
  );
  for (const variant of variants) {
    const vq = summarize(variant.questionTimes);
    const vb = summarize(variant.batchTimes);
    console.log(
      `${variant.label} [${variant.embedder!.kernelsInUse} on ${variant.embedder!.threadsInUse} thread(s)]: ` +
        `question median ${ms(vq.median)}, p95 ${ms(vq.p95)} (${(1000 / vq.median).toFixed(0)}/s, ${ratio(q.median / vq.median, 1)} the reference's throughput); ` +
        `batch median ${ms(vb.median)} (${((BATCH * 1000) / vb.median).toFixed(0)} passages/s, ${ratio(b.median / vb.median, 1)} the reference's)`,
    );
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) void main();
