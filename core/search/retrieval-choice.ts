/**
 * How much this corpus's search trusts the vectors and the feedback, chosen at build time from
 * the corpus's own questions (probe-questions.ts) rather than fixed on one benchmark.
 *
 * The engine's default (DEFAULT_TUNING: vectors 0.6 under z-scores, feedback on) was chosen on
 * ArguAna; on SciFact, whose words the embedder does not know, the same weight and feedback put
 * the hybrid below its own lexical side (docs/decisions/0023-retrieval-per-corpus.md). The build
 * ranks a few hundred held-back sentences through the real search under each candidate below
 * and keeps the best by nDCG@10 (the question's work its one relevant record): first whether
 * feedback helps (on average over the weights, so one lucky weight does not decide it), then the
 * weight with it. Too few questions to tell: the engine's
 * default, said so.
 */
import { z } from 'zod';
import type { SearchTuning } from './search-index.ts';
import { quantile } from './relevance-fit.ts';

export const RETRIEVAL_CHOICE_FORMAT = 'polyphony-retrieval-choice@2';
/** Served at the site root as it is, so a reader can see what the search was set to on this corpus and why. */
export const RETRIEVAL_CHOICE_FILE = 'retrieval-choice.json';
/** Bumped when the probe or the candidates change: a build with another version probes again. */
export const PROBE_VERSION = 2;
/** Questions asked of the corpus. */
export const PROBE_QUESTIONS = 500;
/** Fewer answered questions than this and the choice is noise: the engine's default stays. */
export const PROBE_MIN_QUESTIONS = 100;
/** The vector weights tried, each with feedback on and off. */
export const PROBE_WEIGHTS = [0, 0.2, 0.4, 0.6, 0.8] as const;
/**
 * A later build keeps the choice while the corpus stays within this factor of the size it was
 * chosen at (and the embedder and probe are the same): a choice describes the corpus's kind,
 * which a few added works do not change, and probing again costs about a minute at 10,000
 * passages, more than the incremental build it would be part of (ADR 0022).
 */
export const REPROBE_GROWTH = 1.25;
/**
 * The build departs from the engine's default only when the best setting beats it on the
 * corpus's questions by at least this many standard errors of the paired difference (one-sided,
 * about 98 %): on a small or ambiguous corpus the probe's best is often noise, and the default
 * was at least chosen on judged questions. ArguAna's 300-document regression subset (test/beir.test.ts)
 * departed without it, to 0.6 without feedback on a margin of 0.9 standard errors, and scored
 * 0.8716 on its 60 judged queries against the default's 0.8749.
 */
export const DEPARTURE_Z = 2;
/**
 * The share of the corpus's own questions the question gate may turn away (question_gate). The
 * calibrated relevance ranks a corpus's own questions above other fields' (AUC 0.97–1.00 on
 * SciFact and ArguAna), but the floor fitted on ../shared/omnarai lets half of other fields'
 * questions through there. Chosen on the A halves (1, 2, 5 and 10 % tried): the largest share
 * that costs no set's judged questions more than one point of "a judged work in the top 8"
 * (5 % cost SciFact 4.2 points); bench/README.md, "Calibrated relevance beyond the imported
 * data", has both halves.
 */
export const QUESTION_GATE_PERCENTILE = 0.02;
/** Feedback off: neither side's pseudo-relevance feedback. */
const FEEDBACK_OFF: Partial<SearchTuning> = { feedbackDocs: 0 };

export const RetrievalChoiceSchema = z.strictObject({
  format: z.literal(RETRIEVAL_CHOICE_FORMAT),
  /** probe: chosen from the corpus's own questions; default: the engine's default, `reason` says why. */
  source: z.enum(['probe', 'default']),
  embedder: z.string().min(1),
  vector_weight: z.number().min(0).max(1),
  feedback: z.boolean(),
  /**
   * The question gate: the calibrated relevance the best record a question finds must reach for
   * the question to be answered from the corpus (below it: no_context, reason below_floor). The
   * relevance the best hits of 98 % of the corpus's own questions reach (QUESTION_GATE_PERCENTILE),
   * so a deployment without judged questions still tells the questions its corpus answers from
   * other fields'. Null where the content brought its own fit (its floors, fitted on judged
   * questions, decide alone) or the build did not probe.
   */
  question_gate: z.number().min(0).max(1).nullable(),
  /** One sentence for an operator: what was chosen and on what evidence. */
  note: z.string(),
  probe: z
    .strictObject({
      version: z.number().int(),
      /**
       * How far the best setting beat the engine's default on the probe's questions (nDCG@10,
       * paired) and in standard errors; null when the best was the default or could not be paired.
       */
      departure: z.strictObject({ over_default: z.number(), z: z.number() }).nullable(),
      /** The embedder and the probe's version, hashed: a choice made under another key is made again. */
      key: z.string(),
      questions: z.number().int().min(0),
      /** Passages the questions were asked of (the whole corpus, or a sample of a large one). */
      passages: z.number().int().min(0),
      /** Passages of the whole corpus when the choice was made: a corpus grown or shrunk past REPROBE_GROWTH is probed again. */
      corpus_passages: z.number().int().min(0),
      candidates: z.array(
        z.strictObject({
          vector_weight: z.number().min(0).max(1),
          feedback: z.boolean(),
          /** nDCG@10 with the question's work the one relevant record: what the choice maximises. */
          ndcg10: z.number().min(0).max(1),
          mrr10: z.number().min(0).max(1),
          hits10: z.number().min(0).max(1),
        }),
      ),
    })
    .nullable(),
});
export type RetrievalChoice = z.infer<typeof RetrievalChoiceSchema>;

export interface ProbeCandidate {
  label: string;
  vectorWeight: number;
  feedback: boolean;
  tuning: Partial<SearchTuning>;
}

/** Every weight with feedback on and off, and the vectors alone (reported, never chosen). */
export function probeCandidates(): ProbeCandidate[] {
  const candidates: ProbeCandidate[] = [];
  for (const vectorWeight of PROBE_WEIGHTS) {
    candidates.push({ label: `vectors ${vectorWeight}, feedback`, vectorWeight, feedback: true, tuning: { vectorWeight } });
    candidates.push({ label: `vectors ${vectorWeight}, no feedback`, vectorWeight, feedback: false, tuning: { vectorWeight, ...FEEDBACK_OFF } });
  }
  candidates.push({ label: 'vectors alone', vectorWeight: 1, feedback: false, tuning: { vectorWeight: 1, ...FEEDBACK_OFF } });
  return candidates;
}

/** The search tuning a choice stands for, over the engine's default. */
export function tuningOf(choice: Pick<RetrievalChoice, 'vector_weight' | 'feedback'>): Partial<SearchTuning> {
  return choice.feedback ? { vectorWeight: choice.vector_weight } : { vectorWeight: choice.vector_weight, ...FEEDBACK_OFF };
}

export function engineDefaultChoice(embedder: string, reason: string, defaults: Pick<SearchTuning, 'vectorWeight' | 'feedbackDocs'>): RetrievalChoice {
  const feedback = defaults.feedbackDocs > 0;
  return {
    format: RETRIEVAL_CHOICE_FORMAT,
    source: 'default',
    embedder,
    vector_weight: defaults.vectorWeight,
    feedback,
    question_gate: null,
    note: `the engine's default (vectors weighted ${defaults.vectorWeight}, feedback ${feedback ? 'on' : 'off'}): ${reason}`,
    probe: null,
  };
}

export interface ProbeOutcome {
  vectorWeight: number;
  feedback: boolean;
  ndcg10: number;
  /** nDCG@10 of each question, in the same question order for every outcome: the departure test pairs them. */
  perQuestion?: readonly number[];
  /** The calibrated relevance of the best record each question found: where the corpus's own questions sit on the relevance scale. */
  topRelevance?: readonly number[];
  mrr10: number;
  hits10: number;
}

function mean(values: readonly number[]): number {
  return values.length === 0 ? 0 : values.reduce((sum, value) => sum + value, 0) / values.length;
}

function percent(share: number): string {
  return `${Math.round(share * 100)} %`;
}

/**
 * The choice from the probe's outcomes: feedback where it helps nDCG@10 on average over the
 * weights, then the weight that ranks the questions' works highest with it (ties: the lower weight, the
 * side every corpus has). The note names what each side finds alone, so an operator sees when
 * the vectors can do little for this corpus.
 */
export function chooseRetrieval(
  outcomes: readonly ProbeOutcome[],
  probe: { key: string; questions: number; passages: number; corpusPassages: number; embedder: string },
  defaults: Pick<SearchTuning, 'vectorWeight' | 'feedbackDocs'>,
): RetrievalChoice {
  if (probe.questions < PROBE_MIN_QUESTIONS) {
    return {
      ...engineDefaultChoice(
        probe.embedder,
        `the corpus gave ${probe.questions} questions of its own, fewer than the ${PROBE_MIN_QUESTIONS} a choice needs`,
        defaults,
      ),
      probe: {
        version: PROBE_VERSION,
        departure: null,
        key: probe.key,
        questions: probe.questions,
        passages: probe.passages,
        corpus_passages: probe.corpusPassages,
        candidates: [],
      },
    };
  }
  const mixed = outcomes.filter((outcome) => outcome.vectorWeight < 1);
  const withFeedback = mixed.filter((outcome) => outcome.feedback);
  const without = mixed.filter((outcome) => !outcome.feedback);
  const feedback = withFeedback.length > 0 && (without.length === 0 || mean(withFeedback.map((o) => o.ndcg10)) > mean(without.map((o) => o.ndcg10)));
  const pool = feedback ? withFeedback : without;
  const best = pool.reduce((a, b) => (b.ndcg10 > a.ndcg10 || (b.ndcg10 === a.ndcg10 && b.vectorWeight < a.vectorWeight) ? b : a));
  const engine = outcomes.find((outcome) => outcome.vectorWeight === defaults.vectorWeight && outcome.feedback === defaults.feedbackDocs > 0);
  const departure = engine && engine !== best ? pairedMargin(best, engine) : null;
  const keep = engine !== undefined && departure !== null && departure.z < DEPARTURE_Z;
  const chosen = keep ? engine : best;
  const wordsAlone = outcomes.find((outcome) => outcome.vectorWeight === 0 && !outcome.feedback);
  const vectorsAlone = outcomes.find((outcome) => outcome.vectorWeight === 1);
  const alone = wordsAlone && vectorsAlone ? `; alone, words find ${percent(wordsAlone.hits10)} of them and vectors ${percent(vectorsAlone.hits10)}` : '';
  return {
    format: RETRIEVAL_CHOICE_FORMAT,
    source: 'probe',
    embedder: probe.embedder,
    vector_weight: chosen.vectorWeight,
    feedback: chosen.feedback,
    question_gate: chosen.topRelevance && chosen.topRelevance.length > 0 ? roundDown(quantile(chosen.topRelevance, QUESTION_GATE_PERCENTILE)) : null,
    note: keep
      ? `vectors weighted ${chosen.vectorWeight}, feedback ${chosen.feedback ? 'on' : 'off'} (the engine's default): on ${probe.questions} of the corpus's own questions ` +
        `(a held-back sentence, its work the answer) the best other setting (vectors ${best.vectorWeight}, feedback ${best.feedback ? 'on' : 'off'}) ` +
        `beat it by ${departure!.over_default.toFixed(3)} nDCG@10, ${departure!.z.toFixed(1)} standard errors, short of the ${DEPARTURE_Z} a departure needs; ` +
        `this finds ${percent(chosen.hits10)} in the top 10${alone}`
      : `vectors weighted ${chosen.vectorWeight}, feedback ${chosen.feedback ? 'on' : 'off'}: chosen on ${probe.questions} of the corpus's own questions ` +
        `(a held-back sentence, its work the answer), which this finds in the top 10 for ${percent(chosen.hits10)}${alone}`,
    probe: {
      version: PROBE_VERSION,
      departure: departure && { over_default: round(departure.over_default), z: Math.round(departure.z * 100) / 100 },
      key: probe.key,
      questions: probe.questions,
      passages: probe.passages,
      corpus_passages: probe.corpusPassages,
      candidates: outcomes.map((outcome) => ({
        vector_weight: outcome.vectorWeight,
        feedback: outcome.feedback,
        ndcg10: round(outcome.ndcg10),
        mrr10: round(outcome.mrr10),
        hits10: round(outcome.hits10),
      })),
    },
  };
}

/** The paired difference a − b over the probe's questions and its size in standard errors (null without per-question scores). */
function pairedMargin(a: ProbeOutcome, b: ProbeOutcome): { over_default: number; z: number } | null {
  const x = a.perQuestion;
  const y = b.perQuestion;
  if (!x || !y || x.length !== y.length || x.length < 2) return null;
  const differences = x.map((value, at) => value - y[at]!);
  const average = mean(differences);
  const variance = differences.reduce((sum, value) => sum + (value - average) ** 2, 0) / (differences.length - 1);
  const error = Math.sqrt(variance / differences.length);
  // Bounded, so the record stays JSON (a difference with no spread at all is as sure as it gets).
  return { over_default: average, z: Math.max(-MAX_Z, Math.min(MAX_Z, error > 0 ? average / error : Math.sign(average) * MAX_Z)) };
}

const MAX_Z = 1e6;

/** Whether a build may keep a previous choice: the same embedder and probe, and a corpus of about the same size. */
export function choiceStillHolds(previous: RetrievalChoice | undefined, key: string, corpusPassages: number): previous is RetrievalChoice {
  const probe = previous?.probe;
  if (!probe || probe.key !== key || probe.version !== PROBE_VERSION) return false;
  const ratio = corpusPassages / Math.max(1, probe.corpus_passages);
  return ratio <= REPROBE_GROWTH && ratio >= 1 / REPROBE_GROWTH;
}

function round(value: number): number {
  return Math.round(value * 1e4) / 1e4;
}

/** Rounded down, so the questions at the percentile still pass the gate it sets. */
function roundDown(value: number): number {
  return Math.floor(value * 1e4) / 1e4;
}
