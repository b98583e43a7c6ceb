/** Source records to content files: concepts, corpus and media works, divergence records, each validated before it is written. */
import { z } from 'zod';
import { ConceptSchema, createDivergenceSchema, createWorkSchema, type ConceptFrontmatter, type ModelRegistry } from '../../../schemas/content.ts';
import { EVIDENCE, type Evidence, type Layer } from '../../../schemas/vocab.ts';
import { stringifyMarkdown } from '../../../content-files/frontmatter.ts';
import { issuesFromZod } from '../../../content-files/issues.ts';
import { resolveVoice } from './registry.ts';
import type { Normalization, RejectedRecord } from './report.ts';
import { answersOf, decodeJsonString, isPlainObject, objectsOf, SOURCE_FILES, stringList } from './sources.ts';

export const ID_PREFIX = 'OMN';
const workSchema = createWorkSchema(ID_PREFIX);
const divergenceSchema = createDivergenceSchema(ID_PREFIX);
const urlSchema = z.string().url();
const CALENDAR_PREFIX = /^\d{4}-\d{2}-\d{2}/;

/**
 * Corpus `type` → layer. Lore is the fiction of the Realms (realms); research, technical
 * notes and benchmarks are research; philosophy, synthesis and every other type (the
 * corpus also has three items typed "media") are canon. Media records from
 * media-corpus.jsonl are decided by their tags instead (see mediaLayer).
 */
const LAYER_BY_TYPE: Readonly<Record<string, Exclude<Layer, 'divergence'>>> = {
  lore: 'realms',
  research: 'research',
  technical: 'research',
  benchmark: 'research',
  philosophy: 'canon',
  synthesis: 'canon',
};

export function layerForType(type: string): Exclude<Layer, 'divergence'> {
  return LAYER_BY_TYPE[type.trim().toLowerCase()] ?? 'canon';
}

function mediaLayer(tags: readonly string[]): Exclude<Layer, 'divergence'> {
  return tags.some((tag) => tag.trim().toLowerCase() === 'lore') ? 'realms' : 'canon';
}

/** "Claude | xz" names two contributors; duplicates after splitting are kept once. */
export function splitContributors(value: unknown): string[] {
  const raw = Array.isArray(value) ? value : typeof value === 'string' ? [value] : [];
  const names = raw
    .filter((item): item is string => typeof item === 'string')
    .flatMap((item) => item.split('|'))
    .map((name) => name.trim())
    .filter((name) => name.length > 0);
  return [...new Set(names)];
}

function evidenceFor(value: unknown): Evidence {
  return typeof value === 'string' && (EVIDENCE as readonly string[]).includes(value) ? (value as Evidence) : 'uncharacterized';
}

function calendarDate(value: unknown): unknown {
  return typeof value === 'string' && CALENDAR_PREFIX.test(value) ? value.slice(0, 10) : value;
}

function webUrl(value: unknown): string | undefined {
  if (typeof value !== 'string' || !urlSchema.safeParse(value).success) return undefined;
  return /^https?:\/\//i.test(value) ? value : undefined;
}

/** Zod issues as one line: `field: message; field: message`. */
function describeZod(error: z.ZodError): string {
  return issuesFromZod('', error)
    .map((issue) => `${issue.field}: ${issue.message}`)
    .join('; ');
}

/** Collects files and every report line while records are built. */
export interface Build {
  files: Map<string, string>;
  rejected: RejectedRecord[];
  normalized: Normalization[];
  warnings: string[];
  droppedLineage: Map<string, number>;
  concepts: Map<string, ConceptFrontmatter>;
  /** Works and divergence records share one id space. */
  ids: Map<string, string>;
  /** A source cluster → the concept id its records are written with (clusters.ts). */
  clusters: Map<string, string>;
}

export function addConcepts(graph: unknown, build: Build): void {
  const nodes = objectsOf(isPlainObject(graph) ? graph.nodes : undefined, SOURCE_FILES.concepts, 'a nodes array');
  build.rejected.push(...nodes.rejected);
  for (const node of nodes.records) {
    const result = ConceptSchema.safeParse({
      id: node.id,
      label: node.label,
      ring: node.ring,
      type: node.type,
      weight: node.weight,
      ...(typeof node.category === 'string' && node.category.trim() !== '' ? { category: node.category } : {}),
      ...(typeof node.definition === 'string' && node.definition.trim() !== '' ? { definition: node.definition } : {}),
      related: [],
    });
    const id = typeof node.id === 'string' ? node.id : undefined;
    if (!result.success) build.rejected.push({ source: SOURCE_FILES.concepts, id, reason: describeZod(result.error) });
    else if (build.concepts.has(result.data.id)) build.rejected.push({ source: SOURCE_FILES.concepts, id, reason: 'duplicate concept id' });
    else build.concepts.set(result.data.id, result.data);
  }
  // Edges are [a, b] pairs; b becomes a related concept of a, once.
  const edges = isPlainObject(graph) && Array.isArray(graph.edges) ? graph.edges : [];
  for (const edge of edges) {
    const [from, to] = Array.isArray(edge) ? (edge as unknown[]) : [];
    const concept = typeof from === 'string' ? build.concepts.get(from) : undefined;
    if (!concept || typeof to !== 'string' || !build.concepts.has(to)) {
      build.warnings.push(`${SOURCE_FILES.concepts}: edge ${JSON.stringify(edge)} names a concept that was not written; dropped`);
    } else if (!concept.related.includes(to)) {
      concept.related.push(to);
    }
  }
  for (const concept of build.concepts.values()) {
    build.files.set(`concepts/${concept.id}.md`, stringifyMarkdown(concept, concept.definition ?? concept.label));
  }
}

/** Lineage keeps only ids that are concept nodes; the others are counted in the report. */
function lineageOf(value: unknown, build: Build): string[] {
  return [...new Set(stringList(value))].filter((id) => {
    if (build.concepts.has(id)) return true;
    build.droppedLineage.set(id, (build.droppedLineage.get(id) ?? 0) + 1);
    return false;
  });
}

interface WorkCandidate {
  data: Record<string, unknown>;
  body: string;
}

export function corpusWork(work: Record<string, unknown>, build: Build): WorkCandidate {
  const sourceUrl = webUrl(work.permalink);
  const excerpt = typeof work.excerpt === 'string' ? work.excerpt : '';
  return {
    data: {
      id: work.id,
      title: work.title,
      ring: work.ring,
      type: work.type,
      layer: layerForType(typeof work.type === 'string' ? work.type : ''),
      evidence: evidenceFor(work.evidence_status),
      contributors: splitContributors(work.contributors),
      date: calendarDate(work.date),
      lineage: lineageOf(work.lineage, build),
      ...(sourceUrl ? { source_url: sourceUrl } : {}),
    },
    // The corpus carries excerpts only; the excerpt is the body.
    body: excerpt,
  };
}

export function mediaWork(item: Record<string, unknown>, build: Build): WorkCandidate {
  const videoUrl = webUrl(item.video_url);
  const duration = item.duration_seconds;
  const transcript = typeof item.transcript === 'string' ? item.transcript : '';
  const excerpt = typeof item.excerpt === 'string' ? item.excerpt : '';
  const hasTranscript = transcript.trim() !== '';
  return {
    data: {
      id: item.id,
      title: item.title,
      ring: 'media',
      type: 'media',
      layer: mediaLayer(stringList(item.tags)),
      evidence: 'uncharacterized',
      contributors: splitContributors(item.contributors),
      date: calendarDate(item.published_at),
      lineage: lineageOf(item.lineage, build),
      ...(videoUrl ? { source_url: videoUrl } : {}),
      // The body is the transcript; the short description stays the excerpt shown in results.
      ...(hasTranscript && excerpt.trim() !== '' ? { excerpt } : {}),
      media: {
        ...(videoUrl ? { url: videoUrl } : {}),
        ...(typeof duration === 'number' && Number.isInteger(duration) && duration >= 0 ? { duration_seconds: duration } : {}),
      },
    },
    body: hasTranscript ? transcript : excerpt,
  };
}

function claimId(id: string, source: string, build: Build): boolean {
  const previous = build.ids.get(id);
  if (previous) {
    build.rejected.push({ source, id, reason: `duplicate id, already used by a record from ${previous}` });
    return false;
  }
  build.ids.set(id, source);
  return true;
}

export function addWork(source: string, work: WorkCandidate, build: Build): boolean {
  const id = typeof work.data.id === 'string' ? work.data.id : undefined;
  const result = workSchema.safeParse(work.data);
  if (!result.success) {
    build.rejected.push({ source, id, reason: describeZod(result.error) });
    return false;
  }
  if (!claimId(result.data.id, source, build)) return false;
  if (work.body.trim() === '') build.warnings.push(`${source}: ${result.data.id} has no excerpt or transcript; its body is empty`);
  build.files.set(`works/${result.data.id}.md`, stringifyMarkdown(work.data, work.body));
  return true;
}

export function addDivergence(record: Record<string, unknown>, registry: ModelRegistry, build: Build): { answers: number; tensions: number } | undefined {
  const source = SOURCE_FILES.divergences;
  const id = typeof record.id === 'string' ? record.id : undefined;
  const answers = answersOf(record);
  const tensions = record.tensions === undefined || record.tensions === null ? [] : decodeJsonString(record.tensions);
  if (!answers || !Array.isArray(tensions)) {
    const field = answers ? 'tensions' : 'answers';
    build.rejected.push({ source, id, reason: `${field} is neither an array nor a JSON-encoded array` });
    return undefined;
  }
  const changes: Normalization[] = [];
  const tensionList = tensions.filter(isPlainObject).map((tension, index) => {
    const voices = { voice_a: tension.voice_a, voice_b: tension.voice_b };
    for (const key of ['voice_a', 'voice_b'] as const) {
      const change = resolveVoice(tension[key], answers, registry);
      if (change) {
        voices[key] = change.to;
        changes.push({ id: id ?? '(no id)', field: `tensions.${index}.${key}`, ...change });
      }
    }
    return {
      topic: tension.topic,
      voice_a: voices.voice_a,
      claim_a: tension.claim_a,
      voice_b: voices.voice_b,
      claim_b: tension.claim_b,
      status: tension.status,
    };
  });
  const score = decodeJsonString(record.divergence_score);
  const card = decodeJsonString(record.deliberation_card);
  const data = {
    id: record.id,
    date: calendarDate(record.date),
    question: record.question,
    ...(typeof record.cluster === 'string' && record.cluster !== '' ? { cluster: build.clusters.get(record.cluster) ?? record.cluster } : {}),
    method: record.method,
    // No perturbation results in the data: every record is uncertified.
    certification: { tier: 'C0' },
    // Answer text is copied as is: never trimmed or re-wrapped.
    answers: answers.map((answer) => ({
      model: answer.model,
      model_id: answer.model_id,
      ...(typeof answer.lab === 'string' ? { lab: answer.lab } : {}),
      date: answer.date,
      text: answer.text,
    })),
    tensions: tensionList,
    ...(typeof score === 'number' && Number.isFinite(score) ? { divergence_score: score } : {}),
    ...(isPlainObject(card) ? { deliberation_card: card } : {}),
    provenance: { source: `omnarai ${source}` },
  };
  const result = divergenceSchema.safeParse(data);
  if (!result.success) {
    build.rejected.push({ source, id, reason: describeZod(result.error) });
    return undefined;
  }
  if (!claimId(result.data.id, source, build)) return undefined;
  build.normalized.push(...changes);
  const declared = decodeJsonString(record.n_tensions);
  if (declared !== undefined && declared !== null && Number(declared) !== tensionList.length) {
    build.warnings.push(`${source}: ${result.data.id} declares n_tensions ${String(declared)} but carries ${tensionList.length}`);
  }
  const synthesis = typeof record.synthesis === 'string' ? record.synthesis : '';
  build.files.set(`divergences/${result.data.id}.md`, stringifyMarkdown(data, synthesis));
  return { answers: data.answers.length, tensions: tensionList.length };
}

export function warnCaseCollisions(build: Build): void {
  const lowerNames = new Map<string, string>();
  for (const file of build.files.keys()) {
    const other = lowerNames.get(file.toLowerCase());
    if (other) build.warnings.push(`${file} and ${other} differ only by case; they collide on case-insensitive file systems`);
    lowerNames.set(file.toLowerCase(), file);
  }
}
