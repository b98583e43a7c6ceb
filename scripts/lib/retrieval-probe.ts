/**
 * The corpus's own questions ranked through the real search (core/search/probe-questions.ts):
 * each held-back sentence asked of an index where its passage no longer holds it, under each
 * candidate tuning (core/search/retrieval-choice.ts), and how often and how high its work comes
 * back (MRR@10, hits in the top 10). The build keeps the choice in data/search/retrieval.json.
 */
import { createHash } from 'node:crypto';
import { fnv1a } from '../../core/random.ts';
import { buildFullTextIndex, loadFullTextIndex } from '../../core/search/fulltext.ts';
import { probeQuestions, type ProbeQuestion } from '../../core/search/probe-questions.ts';
import {
  chooseRetrieval,
  choiceStillHolds,
  PROBE_MIN_QUESTIONS,
  PROBE_QUESTIONS,
  PROBE_VERSION,
  probeCandidates,
  type ProbeCandidate,
  type RetrievalChoice,
} from '../../core/search/retrieval-choice.ts';
import { createSearchIndex, DEFAULT_TUNING, type SearchTuning } from '../../core/search/search-index.ts';
import type { SearchChunk, SearchMeta, SearchRecord } from '../../core/search/types.ts';
import type { Embedder } from '../../core/ports/embedder.ts';
import type { RelevanceModel } from '../../core/search/relevance.ts';

/** A larger corpus is probed on a sample of its works of about this many passages (the exact path's size). */
export const PROBE_MAX_PASSAGES = 40_000;

export interface ProbeCorpus {
  records: readonly SearchRecord[];
  chunks: readonly SearchChunk[];
  /** The passages' vectors in chunk order. */
  vectors: Float32Array;
  embedder: Embedder;
}

export interface ProbeScore {
  label: string;
  tuning: Partial<SearchTuning>;
  ndcg10: number;
  mrr10: number;
  hits10: number;
  /** Per question, its reciprocal rank within the top 10 (0 outside), in question order. */
  perQuestion: number[];
  /** Per question, the calibrated relevance of the best record it found (0 when nothing was found). */
  topRelevance: number[];
}

export interface ProbeResult {
  questions: ProbeQuestion[];
  /** Passages the questions were asked of. */
  passages: number;
  scores: ProbeScore[];
}

/**
 * The works first in the probe's draw order (probe-questions.ts) up to about `maxPassages`
 * passages, with every other record kept out: the questions drawn from it are those the whole
 * corpus would give, asked of a smaller haystack.
 */
export function sampleCorpus(corpus: ProbeCorpus, maxPassages: number, seed = 0): ProbeCorpus {
  if (corpus.chunks.length <= maxPassages) return corpus;
  const passagesOf = new Uint32Array(corpus.records.length);
  for (const chunk of corpus.chunks) passagesOf[chunk.record]!++;
  const order = corpus.records.map((record, index) => ({ index, draw: fnv1a(`${seed}:${record.id}`) })).sort((a, b) => a.draw - b.draw || a.index - b.index);
  const kept = new Uint8Array(corpus.records.length);
  let passages = 0;
  for (const { index } of order) {
    if (passages >= maxPassages) break;
    kept[index] = 1;
    passages += passagesOf[index]!;
  }
  const renumber = new Int32Array(corpus.records.length).fill(-1);
  const records: SearchRecord[] = [];
  corpus.records.forEach((record, index) => {
    if (kept[index]) renumber[index] = records.push(record) - 1;
  });
  const dims = corpus.embedder.dims;
  const chunks: SearchChunk[] = [];
  const vectors = new Float32Array(passages * dims);
  corpus.chunks.forEach((chunk, at) => {
    const record = renumber[chunk.record]!;
    if (record < 0) return;
    vectors.set(corpus.vectors.subarray(at * dims, (at + 1) * dims), chunks.length * dims);
    chunks.push({ record, text: chunk.text });
  });
  return { records, chunks, vectors, embedder: corpus.embedder };
}

export async function runRetrievalProbe(
  corpus: ProbeCorpus,
  candidates: readonly { label: string; tuning: Partial<SearchTuning> }[],
  options: { count: number; seed?: number; maxPassages?: number; minQuestions?: number; relevance?: RelevanceModel },
): Promise<ProbeResult> {
  const seed = options.seed ?? 0;
  const sampled = sampleCorpus(corpus, options.maxPassages ?? PROBE_MAX_PASSAGES, seed);
  const { records, embedder, chunks: original } = sampled;
  const dims = embedder.dims;
  const questions = probeQuestions(records, original, { count: options.count, seed });
  if (questions.length < (options.minQuestions ?? 1)) return { questions, passages: original.length, scores: [] };
  const chunks = original.slice();
  for (const question of questions) chunks[question.chunk] = { record: question.record, text: question.rest };
  const vectors = sampled === corpus ? corpus.vectors.slice() : sampled.vectors;
  const rests = await embedder.embed(questions.map((question) => question.rest));
  rests.forEach((vector, at) => vectors.set(vector, questions[at]!.chunk * dims));
  const fullText = await loadFullTextIndex(await buildFullTextIndex(records, chunks));
  const meta: SearchMeta = { embedder: { id: embedder.id, dims }, records: [...records], chunk_records: chunks.map((chunk) => chunk.record), built_at: '' };
  // Every question embedded once, then served from memory to every tuning.
  const questionVectors = new Map<string, Float32Array>();
  const embedded = await embedder.embed(questions.map((question) => question.question));
  questions.forEach((question, at) => questionVectors.set(question.question, embedded[at]!));
  const remembered: Embedder = {
    id: embedder.id,
    dims,
    embed: async (texts) => Promise.all(texts.map(async (text) => questionVectors.get(text) ?? (await embedder.embed([text]))[0]!)),
  };
  const scores: ProbeScore[] = [];
  for (const candidate of candidates) {
    // The probe's corpus is below the approximate path's size: every candidate ranks by the exact scan.
    const search = createSearchIndex({
      meta,
      vectors,
      fullText,
      embedder: remembered,
      tuning: { ...candidate.tuning, floors: false },
      ...(options.relevance ? { relevance: options.relevance } : {}),
    });
    const perQuestion: number[] = [];
    const topRelevance: number[] = [];
    for (const question of questions) {
      const hits = await search.search(question.question, { limit: 10 });
      const at = hits.findIndex((hit) => hit.record === meta.records[question.record]);
      perQuestion.push(at >= 0 && at < 10 ? 1 / (at + 1) : 0);
      topRelevance.push(hits.reduce((best, hit) => Math.max(best, hit.calibrated), 0));
    }
    const count = perQuestion.length || 1;
    scores.push({
      label: candidate.label,
      tuning: candidate.tuning,
      // One relevant record: nDCG@10 is 1 / log2(rank + 1) within the top 10.
      ndcg10: perQuestion.reduce((sum, reciprocal) => sum + ndcgOfReciprocal(reciprocal), 0) / count,
      mrr10: perQuestion.reduce((sum, value) => sum + value, 0) / count,
      hits10: perQuestion.filter((value) => value > 0).length / count,
      perQuestion,
      topRelevance,
    });
  }
  return { questions, passages: chunks.length, scores };
}

/** nDCG@10 of a question with one relevant record, from its reciprocal rank within the top 10 (0 outside). */
function ndcgOfReciprocal(reciprocal: number): number {
  return reciprocal > 0 ? 1 / Math.log2(1 / reciprocal + 1) : 0;
}

/** What a choice is made under: the probe's version, the embedder and the calibration of relevance it reads (its floor). */
export function probeKey(embedderId: string, calibration = ''): string {
  return createHash('sha256').update(`${PROBE_VERSION}\n${embedderId}\n${calibration}`).digest('hex');
}

/**
 * The build's choice of retrieval settings for this corpus: the previous build's while it
 * still holds (choiceStillHolds: same key, about the same size), else probed now.
 */
export async function chooseForCorpus(
  corpus: ProbeCorpus,
  key: string,
  previous: RetrievalChoice | undefined,
  log: (line: string) => void,
  /**
   * The calibration of relevance the server will read (relevance.ts); `ownFit`: the content
   * brought its own, fitted on judged questions (then nothing is reported of it).
   */
  relevance: { model?: RelevanceModel; ownFit?: boolean } = {},
): Promise<{ choice: RetrievalChoice; reused: boolean; ms: number }> {
  if (choiceStillHolds(previous, key, corpus.chunks.length)) return { choice: previous, reused: true, ms: 0 };
  const started = performance.now();
  const candidates: ProbeCandidate[] = probeCandidates();
  const result = await runRetrievalProbe(corpus, candidates, {
    count: PROBE_QUESTIONS,
    minQuestions: PROBE_MIN_QUESTIONS,
    ...(relevance.model ? { relevance: relevance.model } : {}),
  });
  const choice = chooseRetrieval(
    result.scores.map((score, at) => ({
      vectorWeight: candidates[at]!.vectorWeight,
      feedback: candidates[at]!.feedback,
      ndcg10: score.ndcg10,
      perQuestion: score.perQuestion.map(ndcgOfReciprocal),
      ...(relevance.ownFit ? {} : { topRelevance: score.topRelevance }),
      mrr10: score.mrr10,
      hits10: score.hits10,
    })),
    { key, questions: result.questions.length, passages: result.passages, corpusPassages: corpus.chunks.length, embedder: corpus.embedder.id },
    DEFAULT_TUNING,
  );
  const ms = performance.now() - started;
  log(
    `retrieval settings for this corpus (${Math.round(ms / 100) / 10} s): ${choice.note}` +
      (choice.question_gate === null
        ? ''
        : `; questions whose best record is below calibrated relevance ${choice.question_gate} get no_context (98 % of its own questions reach it)`),
  );
  return { choice, reused: false, ms };
}
