/** Ranking by the kind of question (query-intent.ts): Atlas records weighed against works on factual and contested questions. */
import type { Corpus } from './corpus.ts';
import { recognizeFamily } from './kin.ts';
import { admitAtlasByRelevance, closestToFloors } from './atlas-admission.ts';
import type { QuestionIntent, VoiceLexiconEntry } from './query-intent.ts';
import type { TensionEntry } from './records.ts';
import { SURFACE_SIMILARITY } from './receipt.ts';
import { DEFAULT_TUNING, diversify } from './search/search-index.ts';
import { calibratedRelevance, signalsOf } from './search/relevance.ts';
import { createTermTokenizer } from './search/tokenizer.ts';
import type { ScoredRecord, SearchFilters } from './search/types.ts';
import type { VectorsWatch } from './search/vectors.ts';

/**
 * Ranking by the kind of question (query-intent.ts), for callers who set no glyph and no layer.
 *
 * Factual ("What is <term>?", "How does <mechanism> work?"): the answer is in the works. An
 * Atlas record is an open question answered by several models; its common words ("epistemic",
 * "architecture", "matter") overlap a definition's often enough to place it, and the diversity
 * re-ranking never penalises one (each Atlas record is its own voice, while works share a few
 * lead contributors). On a real corpus (../shared/omnarai, test/omnarai-gold.test.ts)
 * unrelated Atlas records took up to six of eight places and their tensions were reported as
 * surfaced. On a factual question an Atlas record is kept only when it is as close to the
 * question as the receipt requires before it counts a record's tensions (SURFACE_SIMILARITY),
 * and then counts FACTUAL_ATLAS_WEIGHT: it is shown when it is about twice as relevant as the
 * works around it. Below that it is no filler: a shorter list is the honest answer.
 */
export const FACTUAL_ATLAS_WEIGHT = 0.5;
/**
 * Contested, naming voices ("Where do A and B disagree about X?"): an Atlas record with a
 * tension that sets two of the named voices against each other over X answers the question
 * directly. Merely having such a pair says little (on a real Atlas two frequent voices split
 * somewhere in most records), so the tension itself must share a term with the topic.
 */
export const NAMED_PAIR_WEIGHT = 1.5;

let termTokenizer: Promise<(text: string) => string[]> | undefined;

const lexicons = new WeakMap<Corpus, VoiceLexiconEntry[]>();

/** The Atlas voices a question may name: each model family with its aliases. */
export function voiceLexicon(corpus: Corpus): VoiceLexiconEntry[] {
  let lexicon = lexicons.get(corpus);
  if (!lexicon) {
    lexicon = corpus.registry.families.map((family) => ({ family: family.name, names: [family.name, ...family.aliases] }));
    lexicons.set(corpus, lexicon);
  }
  return lexicon;
}

/**
 * The record's tensions that set two different named families against each other over the
 * topic: the tension's topic or claims share a (stemmed, non-stop) term with it.
 */
function namedSplitsOn(
  corpus: Corpus,
  recordId: string,
  families: readonly string[],
  topicTerms: ReadonlySet<string>,
  terms: (text: string) => string[],
): TensionEntry[] {
  const record = corpus.divergenceById.get(recordId);
  if (!record || families.length < 2 || topicTerms.size === 0) return [];
  const named = new Set(families);
  const familyOf = (voice: string) => recognizeFamily(voice, corpus.registry).family ?? voice;
  return record.tensions.filter((tension) => {
    const a = familyOf(tension.voice_a);
    const b = familyOf(tension.voice_b);
    if (a === b || !named.has(a) || !named.has(b)) return false;
    return terms(`${tension.topic} ${tension.claim_a} ${tension.claim_b}`).some((term) => topicTerms.has(term));
  });
}

/** What ranking by the question's intent decides; retrieve.ts adds the filters it applied. */
export interface IntentRanking {
  hits: ScoredRecord[];
  /**
   * Tensions of returned Atlas records that answer the question as asked: the voices it names
   * split on its topic ("Where do A and B disagree about X?"). The receipt lists them first.
   */
  answering?: ReadonlyMap<string, readonly TensionEntry[]>;
}

/** What rankForIntent found before the relevance floors: the record closest to its floor (null: nothing). */
export interface IntentRankingFound extends IntentRanking {
  closest: { relevance: number; floor: number } | null;
}

export async function rankForIntent(
  corpus: Corpus,
  question: string,
  intent: QuestionIntent,
  options: {
    filters: SearchFilters;
    limit: number;
    atlasRatio: number;
    floors: { relevant: number; atlas: number };
    similarityFloor?: number;
    /** Given: a search without the question's vector answers by words and is reported here, and the floors are not applied (vectors.ts). */
    vectors?: VectorsWatch;
  },
): Promise<IntentRankingFound> {
  const { filters, limit, vectors } = options;
  const floor = {
    ...(options.similarityFloor !== undefined ? { similarityFloor: options.similarityFloor } : {}),
    ...(vectors ? { onVectorsUnavailable: vectors.report } : {}),
  };
  const byTopic = intent.kind === 'contested' && intent.topic !== question.trim();
  // Both searches at once: their two embeddings go to the worker together.
  const [pool, topicPool] = await Promise.all([
    corpus.search.search(question, { filters, limit: Math.min(limit * 3, 100), ...floor }),
    byTopic ? corpus.search.search(intent.topic, { filters, limit: 100, ...floor }) : undefined,
  ]);
  let candidates = pool;

  if (byTopic && topicPool) {
    // Every Atlas record is a disagreement among the same panel, and its indexed text (the
    // question and its tension topics) never names the voices. In "Where do A and B disagree
    // about X?" the words A, B and "disagree" therefore cannot tell Atlas records apart; they
    // only pull records whose question happens to say "disagree" (about values, about facts)
    // ahead of the ones about X. Atlas records are scored on the topic X alone, searched over
    // all layers so that word scores share one scale with the works'; works keep the score of
    // the whole question, where a voice's name is real evidence (authorship, a title).
    const topical = topicPool.filter((hit) => hit.record.kind === 'divergence');
    // The similarity a hit reports is to the question asked (the receipt reads it), not to the topic.
    const ids = new Set(topical.map((hit) => hit.record.id));
    // Without the question's vector there is no similarity to report: read as 0, like every cosine then.
    const own = new Map<string, number>();
    if (!vectors?.unavailable) {
      const similar = await corpus.search.similar(question, (record) => ids.has(record.id), ids.size, vectors ? { onVectorsUnavailable: vectors.report } : {});
      if (!vectors?.unavailable) for (const hit of similar) own.set(hit.record.id, hit.score);
    }
    // Calibrated relevance is the question's too: the topic alone is shorter, so the same words
    // cover more of it. A record the whole question's search did not find covers none of it.
    const coverage = new Map(pool.map((hit) => [hit.record.id, hit.coverage]));
    const model = corpus.search.relevance;
    candidates = [
      ...pool.filter((hit) => hit.record.kind !== 'divergence'),
      ...topical.map((hit) => {
        const similarity = Math.max(0, own.get(hit.record.id) ?? 0);
        const covered = coverage.get(hit.record.id) ?? 0;
        return {
          ...hit,
          similarity,
          coverage: covered,
          calibrated: roundTo4(calibratedRelevance(model, similarity, covered)),
          signals: signalsOf(model, similarity, covered),
        };
      }),
    ];
  }
  // Calibrated relevance reads the cosine: without it, no floor on it is applied (the ∞ glyph's wider field).
  const floors = vectors?.unavailable ? { relevant: 0, atlas: 0 } : options.floors;
  const closest = closestToFloors(candidates, floors.relevant, floors.atlas);
  const splits = new Map<string, TensionEntry[]>();
  if (intent.kind === 'contested' && intent.voices.length >= 2) {
    termTokenizer ??= createTermTokenizer();
    const terms = await termTokenizer;
    const topicTerms = new Set(terms(intent.topic));
    for (const hit of candidates) {
      if (hit.record.kind !== 'divergence') continue;
      const found = namedSplitsOn(corpus, hit.record.id, intent.voices, topicTerms, terms);
      if (found.length > 0) splits.set(hit.record.id, found);
    }
  }
  // The absolute floors (relevance.ts): a record below the relevance floor is not evidence,
  // however it ranks among the others, and an Atlas record needs the Atlas floor, even for a
  // question worded as a disagreement — but for one where two voices the question names split
  // on its topic: that record answers the question as asked (its tensions lead the receipt),
  // whatever its words share with the question's.
  const atlasBar = Math.max(floors.relevant, floors.atlas);
  candidates = candidates.filter((hit) => splits.has(hit.record.id) || hit.calibrated >= (hit.record.kind === 'divergence' ? atlasBar : floors.relevant));
  if (intent.kind === 'factual') candidates = candidates.filter((hit) => hit.record.kind !== 'divergence' || hit.similarity >= SURFACE_SIMILARITY);
  // Without Atlas records nothing is re-weighted; the works keep retrieval's order (an Atlas
  // record is its own voice in the diversity re-ranking, so taking one out moves no work).
  if (!candidates.some((hit) => hit.record.kind === 'divergence')) return { hits: candidates.slice(0, limit), closest };

  // A record where the named voices split on the topic answers the question as asked: it is
  // raised, and never ranks below the best work (the works' and the topic's scores come from
  // two searches, whose fused scales need not agree).
  const bestScore = Math.max(...candidates.map((hit) => hit.relevanceScore));
  let weighted = candidates.map((hit) => {
    if (hit.record.kind !== 'divergence') return hit;
    if (splits.has(hit.record.id)) return { ...hit, relevanceScore: Math.max(hit.relevanceScore * NAMED_PAIR_WEIGHT, bestScore) };
    return intent.kind === 'factual' ? { ...hit, relevanceScore: hit.relevanceScore * FACTUAL_ATLAS_WEIGHT } : hit;
  });
  weighted.sort((a, b) => b.relevanceScore - a.relevanceScore || (a.record.id < b.record.id ? -1 : 1));
  const bestAtlas = weighted.find((hit) => hit.record.kind === 'divergence');
  // Atlas records earn their place against the works (atlas-admission.ts) on their weighted
  // score, whatever the question's wording: a lookup's are halved first, a named pair's raised.
  weighted = admitAtlasByRelevance(weighted, options.atlasRatio);
  // The same voice-diversity re-ranking as retrieval's, on the re-weighted scores (with the
  // default penalty: a corpus loaded with other tuning, as benchmarks do, keeps this one here).
  const ranked = diversify(weighted, limit, DEFAULT_TUNING.diversityPenalty);
  if (intent.kind === 'contested' && bestAtlas && !ranked.some((hit) => hit.record.kind === 'divergence')) {
    // A question worded as a disagreement always shows its best Atlas evidence above the floors,
    // even one the relative rule or the diversity re-ranking left out: in the last place, or
    // after the works when the list is not full.
    if (ranked.length < limit) ranked.push(bestAtlas);
    else ranked[ranked.length - 1] = bestAtlas;
  }
  const hits = ranked.map((hit) => ({ ...hit, relevanceScore: Math.round(Math.min(1, hit.relevanceScore) * 10000) / 10000 }));
  const answering = new Map(hits.filter((hit) => splits.has(hit.record.id)).map((hit) => [hit.record.id, splits.get(hit.record.id)!]));
  return { hits, closest, ...(answering.size > 0 ? { answering } : {}) };
}

function roundTo4(value: number): number {
  return Math.round(value * 10000) / 10000;
}
