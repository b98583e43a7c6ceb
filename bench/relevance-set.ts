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
