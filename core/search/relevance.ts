/**
 * Calibrated relevance: one number a caller can read the same way for every question.
 *
 * The ranking score (search-index.ts) divides each record's BM25 by the best BM25 of the
 * question, so the best word match always scores 1 on that side however poor it is: on a
 * question the corpus does not cover, every score is relative to noise. Calibrated relevance
 * reads two absolute signals instead:
 *
 * - `cosine`: the question's own cosine to the record's best passage (USE-lite vectors);
 * - `coverage`: the record's BM25 divided by what the question could score at most (bm25.ts
 *   `ceiling`: every question term at full saturation, a term the corpus never uses counted
 *   at the idf of a term in no document), so a passage matching only the question's common
 *   words covers little of it and a word the corpus lacks lowers every record's coverage.
 *
 * and maps them through a logistic model fitted on judged questions (relevance-fit.ts,
 * `npm run calibrate:relevance`): `relevance = 1 / (1 + exp(-(intercept + a·cosine +
 * b·coverage)))`. Positives are the records judged questions expect; negatives are what
 * retrieval returns for questions the corpus does not cover; the two classes weigh the same,
 * so 0.5 is where a record is as likely to be one as the other. Floors on it decide "relevant
 * at all" (below: dropped; nothing left: `no_context`) and Atlas admission, both absolute.
 */
import { z } from 'zod';
import type { Signals } from '../../schemas/vocab.ts';
import { embeddingModel } from './embedding-model.ts';

export const RELEVANCE_MODEL_FORMAT = 'polyphony-relevance@1';
/** Where a deployment keeps its own fit, in its content folder; served at /relevance-calibration.json. */
export const RELEVANCE_CALIBRATION_FILE = 'relevance-calibration.json';

export const RelevanceModelSchema = z.strictObject({
  format: z.literal(RELEVANCE_MODEL_FORMAT),
  /** The embedder the cosines were measured with: a model fitted on another does not apply. */
  embedder: z.string().min(1),
  intercept: z.number().finite(),
  cosine: z.number().finite(),
  coverage: z.number().finite(),
  floors: z.strictObject({
    /** Below this a record is not returned (no record left: no_context). */
    relevant: z.number().min(0).max(1),
    /** An Atlas record is returned only at or above this. */
    atlas: z.number().min(0).max(1),
  }),
  /**
   * A signal "made the record relevant" when it is above what 90 % of the judged irrelevant
   * pairs reach on it: the values fitted with the model.
   */
  signals: z.strictObject({ cosine: z.number().min(-1).max(1), coverage: z.number().min(0).max(1) }),
  /** How and on what the model was fitted (shown by the calibration command, kept for the reader). */
  fitted_on: z.string().optional(),
});
export type RelevanceModel = z.infer<typeof RelevanceModelSchema>;

/**
 * Fitted with `npm run calibrate:relevance` on the calibration half of bench/relevance-set.json
 * over the imported ../shared/omnarai data (USE-lite, BM25 k1 1.5 b 1); bench/README.md
 * "Calibrated relevance" has both halves. A deployment with other content fits its own and
 * puts it in its content folder as relevance-calibration.json.
 */
export const DEFAULT_RELEVANCE_MODEL: RelevanceModel = {
  format: RELEVANCE_MODEL_FORMAT,
  embedder: 'universal-sentence-encoder-lite@energetic-ai-0.2.0',
  intercept: -9.9846,
  cosine: 19.3032,
  coverage: 11.3892,
  floors: { relevant: 0.34, atlas: 0.94 },
  signals: { cosine: 0.4763, coverage: 0.159 },
  fitted_on:
    'bench/relevance-set.json (calibrate half) over the imported ../shared/omnarai: 100 judged questions, 64 expected records and 175 records found for questions off the corpus',
};

export function calibratedRelevance(model: RelevanceModel, cosine: number, coverage: number): number {
  const logit = model.intercept + model.cosine * cosine + model.coverage * coverage;
  return 1 / (1 + Math.exp(-logit));
}

/** Which of the two signals are above what judged irrelevant pairs mostly reach. */
export function signalsOf(model: RelevanceModel, cosine: number, coverage: number): Signals {
  const semantic = cosine >= model.signals.cosine;
  const lexical = coverage >= model.signals.coverage;
  return semantic && lexical ? 'both' : semantic ? 'semantic' : lexical ? 'lexical' : 'neither';
}

/** The floors a deployment set (configuration) over the model's own. */
export function withFloors(model: RelevanceModel, floors: Partial<RelevanceModel['floors']>): RelevanceModel {
  return { ...model, floors: { ...model.floors, ...floors } };
}

/**
 * The model as it applies to questions embedded with `embedderId`: cosines of another model
 * (not merely other arithmetic, embedding-model.ts) sit on another scale, so a model fitted on one says nothing of the other and its floors are
 * not applied (relevance is still reported, marked by `applies: false`, until a fit is made).
 */
export function relevanceFor(model: RelevanceModel, embedderId: string): { model: RelevanceModel; applies: boolean } {
  if (embeddingModel(model.embedder) === embeddingModel(embedderId)) return { model, applies: true };
  return { model: withFloors(model, { relevant: 0, atlas: 0 }), applies: false };
}
