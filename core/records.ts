/**
 * Derived records: what the build computes from validated content, and what the API
 * serves. Pure functions; the same code derives a record persisted by a live council.
 */
import type { DivergenceFrontmatter, ModelRegistry, WorkFrontmatter, ConceptFrontmatter } from '../schemas/content.ts';
import type { Evidence, Layer, Ring, TensionStatus } from '../schemas/vocab.ts';
import { certificationSummary, certificationView, type CertificationSummary, type CertificationView, type WrittenResult } from './certify/record-view.ts';
import { tierSource, type TierSource } from './certify/tier-source.ts';
import { countWords, plainText, shorten } from './excerpt.ts';
import { chunkText } from './search/chunk.ts';
import type { LongitudinalSummary } from './longitudinal.ts';
import { encodeParam } from './url.ts';

export const EXCERPT_CHARS = 280;

export interface WorkRecord {
  id: string;
  title: string;
  ring: Ring;
  type: string;
  layer: Layer;
  evidence: Evidence;
  contributors: string[];
  date: string;
  excerpt: string;
  words: number;
  lineage: string[];
  source_url?: string;
  media?: { url?: string; duration_seconds?: number };
  provenance?: WorkFrontmatter['provenance'];
  /** seed (content/works) or proposal (content/proposals, an approved contribution). */
  origin: 'seed' | 'proposal';
  markdown_url: string;
  json_url: string;
}

export interface StaleModel {
  model: string;
  model_id: string;
  superseded_by: string | null;
}

export interface DivergenceSummary {
  id: string;
  title: string;
  date: string;
  question: string;
  contributors: string[];
  answerCount: number;
  tensionCount: number;
  certification: CertificationSummary & { tier_source: TierSource };
  freshness: { stale: boolean; stale_models: StaleModel[] };
  annotated: boolean;
  re_elicits?: string;
  excerpt: string;
  href: string;
}

/** A type, not an interface: it is sent where the API schema allows more fields (an index signature). */
export type TensionEntry = {
  id: string;
  record_id: string;
  topic: string;
  voice_a: string;
  claim_a: string;
  voice_b: string;
  claim_b: string;
  status: TensionStatus;
  /** After a live council's second round: which of the two voices revised (absent: no second round). */
  moved?: string[];
  date: string;
  question: string;
  href: string;
};

export interface DivergenceFull extends DivergenceSummary {
  /** The whole written block, the evidence log's address and, when logged, each run's outcome; where the tier came from. */
  certification: CertificationView & { tier_source: TierSource };
  cluster?: string;
  method: string;
  n_models: number;
  models: { model: string; model_id: string; lab?: string }[];
  answers: DivergenceFrontmatter['answers'];
  tensions: TensionEntry[];
  tension_map: { voices: string[]; pairs: { a: string; b: string; topics: string[] }[] };
  annotations: DivergenceFrontmatter['annotations'];
  re_elicited_by: string[];
  /** Set by the build on both records of a re-elicitation pair: who moved, which tensions still hold. */
  longitudinal?: LongitudinalSummary[];
  synthesis?: string;
  divergence_score?: number | null;
  deliberation_card?: Record<string, unknown> | null;
  provenance?: DivergenceFrontmatter['provenance'];
  markdown_url: string;
  json_url: string;
}

/**
 * What a work's body alone gives: its excerpt (when the front matter sets none), its word count
 * and its search passages (chunk.ts). A function of the body's text only, so a build keeps it
 * for files whose bytes did not change (content-files/content-memo.ts); bump
 * BODY_TEXT_VERSION when the derivation changes.
 */
export interface BodyText {
  excerpt: string;
  words: number;
  passages: string[];
}

export const BODY_TEXT_VERSION = 1;

export function bodyText(body: string): BodyText {
  const text = plainText(body);
  return { excerpt: shorten(text, EXCERPT_CHARS), words: countWords(text), passages: chunkText(text) };
}

/** A work's record from its front matter and its body, or what its body gives (bodyText) where that is known. */
export function deriveWork(data: WorkFrontmatter, body: string | BodyText, origin: WorkRecord['origin']): WorkRecord {
  const derived = typeof body === 'string' ? bodyText(body) : body;
  return {
    id: data.id,
    title: data.title,
    ring: data.ring,
    type: data.type,
    layer: data.layer,
    evidence: data.evidence,
    contributors: data.contributors,
    date: data.date,
    excerpt: data.excerpt ? shorten(data.excerpt, EXCERPT_CHARS) : derived.excerpt,
    words: derived.words,
    lineage: data.lineage,
    ...(data.source_url ? { source_url: data.source_url } : {}),
    ...(data.media ? { media: data.media } : {}),
    ...(data.provenance ? { provenance: data.provenance } : {}),
    origin,
    markdown_url: `/records/${data.id}.md`,
    json_url: `/records/${data.id}.json`,
  };
}

export function divergenceHref(id: string): string {
  return `/api/divergences?id=${encodeParam(id)}`;
}

function uniqueInOrder(values: readonly string[]): string[] {
  return [...new Set(values)];
}

export function deriveFreshness(data: DivergenceFrontmatter, registry: ModelRegistry): DivergenceSummary['freshness'] {
  const byId = new Map(registry.models.map((model) => [model.model_id, model]));
  const stale: StaleModel[] = [];
  const seen = new Set<string>();
  for (const answer of data.answers) {
    const model = byId.get(answer.model_id);
    if (model?.retired && !seen.has(answer.model_id)) {
      seen.add(answer.model_id);
      stale.push({ model: answer.model, model_id: answer.model_id, superseded_by: model.superseded_by ?? null });
    }
  }
  return { stale: stale.length > 0, stale_models: stale };
}

export function deriveTensions(data: DivergenceFrontmatter): TensionEntry[] {
  return data.tensions.map((tension, index) => ({
    id: `${data.id}-T${index + 1}`,
    record_id: data.id,
    ...tension,
    date: data.date,
    question: data.question,
    href: divergenceHref(data.id),
  }));
}

export function deriveDivergence(
  data: DivergenceFrontmatter,
  body: string,
  registry: ModelRegistry,
  reElicitedBy: string[] = [],
  certified?: WrittenResult,
): DivergenceFull {
  const tensions = deriveTensions(data);
  const voices = uniqueInOrder(data.answers.map((answer) => answer.model));
  const pairs = new Map<string, { a: string; b: string; topics: string[] }>();
  for (const tension of tensions) {
    const [a, b] = [tension.voice_a, tension.voice_b].sort();
    const key = `${a}\u0000${b}`;
    const pair = pairs.get(key) ?? { a: a!, b: b!, topics: [] };
    pair.topics.push(tension.topic);
    pairs.set(key, pair);
  }
  const certification = {
    ...certificationView(data.id, data.certification, certified),
    tier_source: tierSource({ id: data.id, evidence: data.certification.evidence, written: certified !== undefined, provenance: data.provenance }),
  };
  return {
    id: data.id,
    title: shorten(data.question, 80).endsWith('…') ? shorten(data.question, 80) : `${shorten(data.question, 79)}…`,
    date: data.date,
    question: data.question,
    contributors: voices,
    answerCount: data.answers.length,
    tensionCount: tensions.length,
    certification,
    freshness: deriveFreshness(data, registry),
    annotated: data.annotations.length > 0,
    ...(data.re_elicits ? { re_elicits: data.re_elicits } : {}),
    excerpt: shorten(plainText(data.answers[0]?.text ?? data.question), EXCERPT_CHARS),
    href: divergenceHref(data.id),
    ...(data.cluster ? { cluster: data.cluster } : {}),
    method: data.method,
    n_models: voices.length,
    models: uniqueInOrder(data.answers.map((answer) => answer.model_id)).map((modelId) => {
      const answer = data.answers.find((candidate) => candidate.model_id === modelId)!;
      return { model: answer.model, model_id: modelId, ...(answer.lab ? { lab: answer.lab } : {}) };
    }),
    answers: data.answers,
    tensions,
    tension_map: { voices, pairs: [...pairs.values()] },
    annotations: data.annotations,
    re_elicited_by: reElicitedBy,
    ...(body.trim() ? { synthesis: body } : {}),
    ...(data.divergence_score !== undefined ? { divergence_score: data.divergence_score } : {}),
    ...(data.deliberation_card !== undefined ? { deliberation_card: data.deliberation_card } : {}),
    ...(data.provenance ? { provenance: data.provenance } : {}),
    markdown_url: `/records/${data.id}.md`,
    json_url: `/records/${data.id}.json`,
  };
}

const SUMMARY_KEYS = [
  'id',
  'title',
  'date',
  'question',
  'contributors',
  'answerCount',
  'tensionCount',
  'certification',
  'freshness',
  'annotated',
  're_elicits',
  'excerpt',
  'href',
] as const;

export function toSummary(record: DivergenceFull): DivergenceSummary {
  const summary: Record<string, unknown> = {};
  for (const key of SUMMARY_KEYS) if (record[key] !== undefined) summary[key] = record[key];
  summary.certification = { ...certificationSummary(record.certification), tier_source: record.certification.tier_source };
  return summary as unknown as DivergenceSummary;
}

export interface ConceptNode {
  id: string;
  label: string;
  ring: Ring;
  type: 'theme' | 'glossary';
  weight: number;
  definition?: string;
  category?: string;
}

export interface ConceptGraph {
  nodes: ConceptNode[];
  edges: [string, string][];
}

/** Weight defaults to how many works name the concept in their lineage. */
export function deriveConceptGraph(concepts: readonly ConceptFrontmatter[], works: readonly WorkRecord[]): ConceptGraph {
  const usage = new Map<string, number>();
  for (const work of works) for (const concept of work.lineage) usage.set(concept, (usage.get(concept) ?? 0) + 1);
  const nodes = concepts.map((concept) => ({
    id: concept.id,
    label: concept.label,
    ring: concept.ring,
    type: concept.type,
    weight: concept.weight ?? usage.get(concept.id) ?? 0,
    ...(concept.definition ? { definition: concept.definition } : {}),
    ...(concept.category ? { category: concept.category } : {}),
  }));
  const seen = new Set<string>();
  const edges: [string, string][] = [];
  for (const concept of concepts) {
    for (const related of concept.related) {
      const key = [concept.id, related].sort().join('\u0000');
      if (seen.has(key) || related === concept.id) continue;
      seen.add(key);
      edges.push([concept.id, related]);
    }
  }
  return { nodes, edges };
}
