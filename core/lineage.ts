/**
 * Concept lineage, from the content alone: for one concept, the concepts that co-occur with
 * it on the same works (undirected: no parent or child is claimed), the chronological spine
 * of works and Atlas records tagged with it, who contributed, and the tensions in its region.
 * A work is tagged by its `lineage`; an Atlas record by its `cluster` when that is a concept id.
 */
import type { Ring } from '../schemas/vocab.ts';
import type { ConceptGraph, ConceptNode, DivergenceFull, WorkRecord } from './records.ts';
import { recordConcepts, type TrackedTension } from './tension-identity.ts';

export interface LineageInput {
  graph: ConceptGraph;
  works: readonly WorkRecord[];
  divergences: readonly DivergenceFull[];
  tensions: readonly TrackedTension[];
}

export interface SpineEntry {
  kind: 'work' | 'divergence';
  id: string;
  title: string;
  contributors: string[];
  ring: Ring;
  date: string;
  href: string;
}

export interface TensionBrief {
  id: string;
  topic: string;
  voices: [string, string];
  status: TrackedTension['status'];
  lifecycle: TrackedTension['lifecycle'];
  disposition: TrackedTension['disposition'];
  sighting_count: number;
  record_ids: string[];
  href: string;
}

export interface Lineage {
  concept: ConceptNode;
  related: { id: string; label: string; co_occurrences: number; href: string }[];
  spine: SpineEntry[];
  contributors: { name: string; works: number; divergences: number; total: number }[];
  counts: { works: number; divergences: number; contributors: number; related: number; tensions_open: number; tensions_repaired: number };
  tensions: { open: TensionBrief[]; repaired: TensionBrief[] };
  note: string;
}

export const LINEAGE_NOTE =
  'Related concepts are ranked by how many works carry both (the graph is undirected: no parent or child is claimed). ' +
  'The spine lists, oldest first, the works whose lineage names the concept and the Atlas records whose cluster is the concept. ' +
  'Tensions are those sighted on those Atlas records; a tension is repaired when its latest curator disposition is reclassified or canon-note.';

function normalise(value: string): string {
  return value
    .normalize('NFKC')
    .toLowerCase()
    .replace(/[^\p{L}\p{N}]+/gu, ' ')
    .trim();
}

/** A concept by id, or by label (case, spacing and punctuation ignored). */
export function resolveConcept(graph: ConceptGraph, query: string): ConceptNode | undefined {
  const trimmed = query.trim();
  const byId = graph.nodes.find((node) => node.id === trimmed.toLowerCase());
  if (byId) return byId;
  const wanted = normalise(trimmed);
  return graph.nodes.find((node) => normalise(node.label) === wanted || normalise(node.id) === wanted);
}

function bigrams(value: string): Set<string> {
  const text = ` ${normalise(value)} `;
  const grams = new Set<string>();
  for (let index = 0; index < text.length - 1; index++) grams.add(text.slice(index, index + 2));
  return grams;
}

function similarity(a: Set<string>, b: Set<string>): number {
  let shared = 0;
  for (const gram of a) if (b.has(gram)) shared++;
  return (2 * shared) / (a.size + b.size || 1);
}

/** The concepts whose id or label is closest to an unknown query (Dice coefficient of character bigrams). */
export function nearestConcepts(graph: ConceptGraph, query: string, limit = 5): { id: string; label: string }[] {
  const wanted = bigrams(query);
  return graph.nodes
    .map((node) => ({ node, score: Math.max(similarity(wanted, bigrams(node.id)), similarity(wanted, bigrams(node.label))) }))
    .sort((a, b) => b.score - a.score || b.node.weight - a.node.weight || a.node.id.localeCompare(b.node.id))
    .slice(0, limit)
    .map(({ node }) => ({ id: node.id, label: node.label }));
}

export function conceptLineage(input: LineageInput, concept: ConceptNode): Lineage {
  const conceptIds = new Set(input.graph.nodes.map((node) => node.id));
  const labels = new Map(input.graph.nodes.map((node) => [node.id, node.label]));
  const works = input.works.filter((work) => work.lineage.includes(concept.id));
  const records = input.divergences.filter((record) => recordConcepts(record, conceptIds).includes(concept.id));

  const coOccurrences = new Map<string, number>();
  for (const work of works) {
    for (const other of new Set(work.lineage)) {
      if (other !== concept.id && conceptIds.has(other)) coOccurrences.set(other, (coOccurrences.get(other) ?? 0) + 1);
    }
  }
  const related = [...coOccurrences]
    .sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))
    .map(([id, count]) => ({ id, label: labels.get(id) ?? id, co_occurrences: count, href: `/api/lineage?concept=${encodeURIComponent(id)}` }));

  const spine: SpineEntry[] = [
    ...works.map((work) => ({
      kind: 'work' as const,
      id: work.id,
      title: work.title,
      contributors: work.contributors,
      ring: work.ring,
      date: work.date,
      href: work.json_url,
    })),
    ...records.map((record) => ({
      kind: 'divergence' as const,
      id: record.id,
      title: record.title,
      contributors: record.contributors,
      ring: 'core' as const,
      date: record.date,
      href: record.href,
    })),
  ].sort((a, b) => a.date.localeCompare(b.date) || a.id.localeCompare(b.id, 'en', { numeric: true }));

  const byContributor = new Map<string, { works: number; divergences: number }>();
  for (const entry of spine) {
    for (const name of new Set(entry.contributors)) {
      const counts = byContributor.get(name) ?? { works: 0, divergences: 0 };
      if (entry.kind === 'work') counts.works++;
      else counts.divergences++;
      byContributor.set(name, counts);
    }
  }
  const contributors = [...byContributor]
    .map(([name, counts]) => ({ name, ...counts, total: counts.works + counts.divergences }))
    .sort((a, b) => b.total - a.total || a.name.localeCompare(b.name));

  const recordIds = new Set(records.map((record) => record.id));
  const inRegion = input.tensions.filter((tension) => tension.sightings.some((sighting) => sighting.record_id !== null && recordIds.has(sighting.record_id)));
  const brief = (tension: TrackedTension): TensionBrief => ({
    id: tension.id,
    topic: tension.topic,
    voices: tension.voices,
    status: tension.status,
    lifecycle: tension.lifecycle,
    disposition: tension.disposition,
    sighting_count: tension.sighting_count,
    record_ids: [...new Set(tension.sightings.flatMap((sighting) => (sighting.record_id ? [sighting.record_id] : [])))],
    href: `/api/tensions?key=${encodeURIComponent(tension.id)}`,
  });
  const open = inRegion.filter((tension) => tension.lifecycle === 'open').map(brief);
  const repaired = inRegion.filter((tension) => tension.lifecycle === 'repaired').map(brief);

  return {
    concept,
    related,
    spine,
    contributors,
    counts: {
      works: works.length,
      divergences: records.length,
      contributors: contributors.length,
      related: related.length,
      tensions_open: open.length,
      tensions_repaired: repaired.length,
    },
    tensions: { open, repaired },
    note: LINEAGE_NOTE,
  };
}
