/**
 * `npm run calibrate:relevance`: fits calibrated relevance (core/search/relevance.ts) on a
 * judged question set over a deployment's own content, and reports what the floors do to
 * every family on both halves of the set, through retrieve() (the code behind GET /api/query).
 *
 * The set (bench/relevance-set.json is the Omnarai one) has three families: questions the
 * corpus answers (`expect`: the works), questions it does not cover (`expect`: []), contested
 * questions (`expect`: the Atlas record). Only the `calibrate` half is fitted on; the
 * `holdout` half is reported beside it.
 */
import { readFileSync } from 'node:fs';
import { z } from 'zod';
import type { Corpus } from '../../core/corpus.ts';
import { parseQueryParameters } from '../../core/query-params.ts';
import { retrieve, type RetrieveOptions } from '../../core/retrieve.ts';
import { calibratedRelevance, RELEVANCE_MODEL_FORMAT, type RelevanceModel } from '../../core/search/relevance.ts';
import { fitFloors, fitLogistic, fitSignals, type Family, type JudgedCandidates, type JudgedPair } from '../../core/search/relevance-fit.ts';

export const FAMILIES = ['answers', 'off_corpus', 'contested'] as const;
export const SPLITS = ['calibrate', 'holdout'] as const;
export type Split = (typeof SPLITS)[number];

export const RelevanceSetSchema = z.object({
  about: z.string().min(1),
  questions: z
    .array(
      z.object({
        id: z.string().min(1),
        family: z.enum(FAMILIES),
        split: z.enum(SPLITS),
        question: z.string().min(1),
        expect: z.array(z.string().min(1)).default([]),
        note: z.string().optional(),
      }),
    )
    .min(1),
});
export type RelevanceSet = z.infer<typeof RelevanceSetSchema>;
export type RelevanceQuestion = RelevanceSet['questions'][number];

export function loadRelevanceSet(file: string): RelevanceSet {
  return RelevanceSetSchema.parse(JSON.parse(readFileSync(file, 'utf8')));
}

/** How many records the fit reads per question: the API's limit is at most 50, its default 8. */
const CANDIDATES = 24;
/** How many of the best matches of each question off the corpus are fitted on as negatives. */
const HARD_NEGATIVES = 5;

interface RawCandidate {
  id: string;
  atlas: boolean;
  cosine: number;
  coverage: number;
}

/** What plain retrieval finds for each question (the search's own similarity floors applied, no calibrated floor). */
export async function gatherCandidates(corpus: Corpus, questions: readonly RelevanceQuestion[]): Promise<Map<string, RawCandidate[]>> {
  const found = new Map<string, RawCandidate[]>();
  for (const question of questions) {
    const hits = await corpus.search.search(question.question, { limit: CANDIDATES });
    found.set(
      question.id,
      hits.map((hit) => ({ id: hit.record.id, atlas: hit.record.kind === 'divergence', cosine: hit.similarity, coverage: hit.coverage })),
    );
  }
  return found;
}

/** Pairs to fit on: the expected records of questions the corpus covers, everything found for questions it does not. */
export function judgedPairs(questions: readonly RelevanceQuestion[], found: ReadonlyMap<string, readonly RawCandidate[]>): JudgedPair[] {
  const pairs: JudgedPair[] = [];
  for (const question of questions) {
    for (const [rank, hit] of (found.get(question.id) ?? []).entries()) {
      // The decision is made on a question's best matches: those of questions off the corpus
      // are the negatives that matter (the rest lie far below any floor and would set the slope).
      if (question.family === 'off_corpus') {
        if (rank < HARD_NEGATIVES) pairs.push({ cosine: hit.cosine, coverage: hit.coverage, label: 0 });
      } else if (question.expect.includes(hit.id)) pairs.push({ cosine: hit.cosine, coverage: hit.coverage, label: 1 });
    }
  }
  return pairs;
}

export function fitRelevanceModel(
  questions: readonly RelevanceQuestion[],
  found: ReadonlyMap<string, readonly RawCandidate[]>,
  embedder: string,
  fittedOn: string,
): RelevanceModel {
  const pairs = judgedPairs(questions, found);
  const coefficients = fitLogistic(pairs);
  const rounded = {
    intercept: round(coefficients.intercept),
    cosine: round(coefficients.cosine),
    coverage: round(coefficients.coverage),
  };
  const provisional: RelevanceModel = {
    format: RELEVANCE_MODEL_FORMAT,
    embedder,
    ...rounded,
    floors: { relevant: 0.5, atlas: 0.5 },
    signals: fitSignals(pairs),
  };
  const judged: JudgedCandidates[] = questions.map((question) => ({
    family: question.family as Family,
    expect: question.expect,
    candidates: (found.get(question.id) ?? []).map((hit) => ({
      id: hit.id,
      atlas: hit.atlas,
      relevance: calibratedRelevance(provisional, hit.cosine, hit.coverage),
    })),
  }));
  const positives = pairs.filter((pair) => pair.label === 1).length;
  return {
    ...provisional,
    floors: fitFloors(judged),
    fitted_on: `${fittedOn}: ${questions.length} judged questions, ${positives} expected records and ${pairs.length - positives} records found for questions off the corpus`,
  };
}

/** One judged question asked of retrieve() with the corpus's calibration and floors. */
export interface QuestionOutcome {
  question: RelevanceQuestion;
  ids: string[];
  atlas: number;
  expectedShown: boolean;
  noContext: boolean;
  best: number | null;
}

export async function askAll(corpus: Corpus, questions: readonly RelevanceQuestion[], options: RetrieveOptions = {}): Promise<QuestionOutcome[]> {
  const outcomes: QuestionOutcome[] = [];
  for (const question of questions) {
    // A question embedding that failed must stop the calibration, not calibrate a words-only retrieval.
    const retrieval = await retrieve(corpus, parseQueryParameters({ q: question.question }), { ...options, vectors: 'required' });
    const ids = retrieval.hits.map((hit) => hit.record.id);
    outcomes.push({
      question,
      ids,
      atlas: retrieval.hits.filter((hit) => hit.record.kind === 'divergence').length,
      expectedShown: question.expect.some((id) => ids.includes(id)),
      noContext: ids.length === 0,
      best: retrieval.relevance.closest?.relevance ?? null,
    });
  }
  return outcomes;
}

/** The figures of one family on one half: counts of questions. */
export interface FamilyFigures {
  family: Family;
  split: Split;
  total: number;
  /** answers and contested: the expected record in the top 8. */
  expectedShown: number;
  noContext: number;
  /** Questions with at least one Atlas record in the top 8. */
  withAtlas: number;
}

export function familyFigures(outcomes: readonly QuestionOutcome[]): FamilyFigures[] {
  const figures: FamilyFigures[] = [];
  for (const family of FAMILIES) {
    for (const split of SPLITS) {
      const members = outcomes.filter((outcome) => outcome.question.family === family && outcome.question.split === split);
      figures.push({
        family,
        split,
        total: members.length,
        expectedShown: members.filter((outcome) => outcome.expectedShown).length,
        noContext: members.filter((outcome) => outcome.noContext).length,
        withAtlas: members.filter((outcome) => outcome.atlas > 0).length,
      });
    }
  }
  return figures;
}

/** One table, a column group per configuration (e.g. before / after), a row per family and half. */
export function renderFigures(configurations: readonly { label: string; figures: readonly FamilyFigures[] }[]): string {
  const head = ['family', 'half', 'questions'];
  for (const { label } of configurations) head.push(`${label}: expected in top 8`, `${label}: no_context`, `${label}: with an Atlas record`);
  const lines = [`| ${head.join(' | ')} |`, `|${head.map(() => '---').join('|')}|`];
  configurations[0]?.figures.forEach((first, row) => {
    const cells = [first.family, first.split, String(first.total)];
    for (const { figures } of configurations) {
      const figure = figures[row]!;
      cells.push(
        figure.family === 'off_corpus' ? '—' : `${figure.expectedShown}/${figure.total}`,
        `${figure.noContext}/${figure.total}`,
        `${figure.withAtlas}/${figure.total}`,
      );
    }
    lines.push(`| ${cells.join(' | ')} |`);
  });
  return lines.join('\n');
}

function round(value: number): number {
  return Math.round(value * 10000) / 10000;
}
