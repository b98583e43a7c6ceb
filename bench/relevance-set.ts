/**
 * The judged relevance set (bench/relevance-set.json) on the imported Omnarai data: its shape,
 * its split rule and its loader, shared by the test that keeps it honest
 * (test/relevance-set.test.ts) and any benchmark that reads it, so both agree on what a
 * question expects.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { REPO_ROOT } from '../core/paths.ts';

export const RELEVANCE_SET_FILE = path.join(REPO_ROOT, 'bench', 'relevance-set.json');

export const RELEVANCE_FAMILIES = ['answers', 'off_corpus', 'contested'] as const;
export type RelevanceFamily = (typeof RELEVANCE_FAMILIES)[number];

/** Ids of imported Atlas records (scripts/lib/omnarai.ts names them OMN-D<source id>). */
export const ATLAS_ID = /^OMN-D\d+$/;

/** The id prefix of each family; the number after it is the order the question was written in. */
export const ID_PREFIX: Record<RelevanceFamily, string> = {
  answers: 'answers',
  off_corpus: 'off-corpus',
  contested: 'contested',
};

export const RelevanceQuestionSchema = z
  .object({
    id: z.string().regex(/^[a-z-]+-\d{2,}$/),
    family: z.enum(RELEVANCE_FAMILIES),
    split: z.enum(['calibrate', 'holdout']),
    question: z.string().trim().min(3),
    /** Every id that answers it (answers), the one Atlas record it restates (contested), none (off_corpus). */
    expect: z.array(z.string().min(1)),
    note: z.string().min(1).optional(),
  })
  .strict()
  .superRefine((item, context) => {
    const fail = (message: string) => context.addIssue({ code: 'custom', path: ['expect'], message });
    if (!item.id.startsWith(`${ID_PREFIX[item.family]}-`)) {
      context.addIssue({ code: 'custom', path: ['id'], message: `a ${item.family} id starts with ${ID_PREFIX[item.family]}-` });
    }
    if (item.family === 'off_corpus' && item.expect.length > 0) fail('an off-corpus question expects nothing');
    if (item.family === 'contested' && (item.expect.length !== 1 || !ATLAS_ID.test(item.expect[0]!))) {
      fail('a contested question expects exactly one Atlas record');
    }
    if (item.family === 'answers' && (item.expect.length === 0 || item.expect.some((id) => ATLAS_ID.test(id)))) {
      fail('an answers question expects one or more works and no Atlas record');
    }
  });
export type RelevanceQuestion = z.infer<typeof RelevanceQuestionSchema>;

export const RelevanceSetSchema = z
  .object({
    about: z.string().min(200),
    questions: z.array(RelevanceQuestionSchema).min(1),
  })
  .strict();
export type RelevanceSet = z.infer<typeof RelevanceSetSchema>;

/**
 * The split rule `about` states: within a family, odd numbers calibrate and even numbers are
 * held out. It reads the number alone, so no outcome of retrieval can have chosen a half.
 */
export function splitFor(id: string): 'calibrate' | 'holdout' {
  return questionNumber(id) % 2 === 1 ? 'calibrate' : 'holdout';
}

/** The order a question was written in within its family: the number its id ends with. */
export function questionNumber(id: string): number {
  const digits = /(\d+)$/.exec(id)?.[1];
  if (digits === undefined) throw new Error(`${id}: no number at the end of the id`);
  return Number(digits);
}

export function loadRelevanceSet(file: string = RELEVANCE_SET_FILE): RelevanceSet {
  return RelevanceSetSchema.parse(JSON.parse(readFileSync(file, 'utf8')));
}

/** The places a caller sees by default (GET /api/query limit). */
export const TOP = 8;

/** One returned record, as much as the judgement needs. */
export interface ShownRecord {
  id: string;
  atlas: boolean;
  /** Cosine similarity of the record to the question, before fusion. */
  similarity: number;
}

export interface RelevanceOutcome {
  item: RelevanceQuestion;
  /** The top places, in rank order. */
  shown: ShownRecord[];
}

export async function judgeRelevance(items: readonly RelevanceQuestion[], ask: (question: string) => Promise<ShownRecord[]>): Promise<RelevanceOutcome[]> {
  const outcomes: RelevanceOutcome[] = [];
  for (const item of items) outcomes.push({ item, shown: (await ask(item.question)).slice(0, TOP) });
  return outcomes;
}

/** 1-based place of the first expected id in the top places, or undefined. */
export function firstExpectedPlace(outcome: RelevanceOutcome): number | undefined {
  const place = outcome.shown.findIndex((record) => outcome.item.expect.includes(record.id));
  return place < 0 ? undefined : place + 1;
}

/** The best similarity among the top places: what a floor marking weak results would read. */
export function bestSimilarity(outcome: RelevanceOutcome): number {
  return Math.max(0, ...outcome.shown.map((record) => record.similarity));
}

/**
 * Probability that a random positive scores above a random negative (ties count half): how
 * well one number separates two families, whatever threshold is later chosen.
 */
export function separation(positives: readonly number[], negatives: readonly number[]): number | undefined {
  if (positives.length === 0 || negatives.length === 0) return undefined;
  let wins = 0;
  for (const positive of positives) for (const negative of negatives) wins += positive > negative ? 1 : positive === negative ? 0.5 : 0;
  return wins / (positives.length * negatives.length);
}

export function median(values: readonly number[]): number | undefined {
  if (values.length === 0) return undefined;
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

export interface RelevanceSummary {
  answers: { total: number; expectedShown: number; expectedFirst: number; reciprocalRank: number; atlasShown: number };
  offCorpus: { total: number; nothingShown: number; atlasShown: number };
  contested: { total: number; ownShown: number; otherAtlasOnly: number; noAtlas: number };
  medianBestSimilarity: Record<RelevanceFamily, number | undefined>;
  /** Best similarity, answers against off-corpus questions. */
  answersOverOffCorpus: number | undefined;
}

export function summariseRelevance(outcomes: readonly RelevanceOutcome[]): RelevanceSummary {
  const of = (family: RelevanceFamily) => outcomes.filter((outcome) => outcome.item.family === family);
  const answers = of('answers');
  const offCorpus = of('off_corpus');
  const contested = of('contested');
  const places = answers.map(firstExpectedPlace);
  const atlasOf = (outcome: RelevanceOutcome) => outcome.shown.filter((record) => record.atlas).map((record) => record.id);
  const ownShown = (outcome: RelevanceOutcome) => atlasOf(outcome).includes(outcome.item.expect[0]!);
  return {
    answers: {
      total: answers.length,
      expectedShown: places.filter((place) => place !== undefined).length,
      expectedFirst: places.filter((place) => place === 1).length,
      reciprocalRank: answers.length === 0 ? 0 : places.reduce<number>((sum, place) => sum + (place ? 1 / place : 0), 0) / answers.length,
      atlasShown: answers.filter((outcome) => atlasOf(outcome).length > 0).length,
    },
    offCorpus: {
      total: offCorpus.length,
      nothingShown: offCorpus.filter((outcome) => outcome.shown.length === 0).length,
      atlasShown: offCorpus.filter((outcome) => atlasOf(outcome).length > 0).length,
    },
    contested: {
      total: contested.length,
      ownShown: contested.filter(ownShown).length,
      otherAtlasOnly: contested.filter((outcome) => !ownShown(outcome) && atlasOf(outcome).length > 0).length,
      noAtlas: contested.filter((outcome) => atlasOf(outcome).length === 0).length,
    },
    medianBestSimilarity: {
      answers: median(answers.map(bestSimilarity)),
      off_corpus: median(offCorpus.map(bestSimilarity)),
      contested: median(contested.map(bestSimilarity)),
    },
    answersOverOffCorpus: separation(answers.map(bestSimilarity), offCorpus.map(bestSimilarity)),
  };
}
