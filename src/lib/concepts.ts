/**
 * What the concept pages show about a concept: its related concepts (either direction of the
 * graph's edges), the works that name it in their lineage, and the Atlas records about it (the
 * record's theme is the concept, or its question or a tension topic names the concept).
 */
import { conceptGraph, divergences, works, type ConceptNode, type DivergenceFull, type WorkRecord } from './artifacts.ts';

export interface ConceptUse {
  node: ConceptNode;
  related: ConceptNode[];
  works: WorkRecord[];
  records: DivergenceFull[];
}

const escape = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

export function conceptUses(): ConceptUse[] {
  const graph = conceptGraph();
  const byId = new Map(graph.nodes.map((node) => [node.id, node]));
  const neighbours = new Map<string, Set<string>>();
  for (const [a, b] of graph.edges) {
    neighbours.set(a, (neighbours.get(a) ?? new Set()).add(b));
    neighbours.set(b, (neighbours.get(b) ?? new Set()).add(a));
  }
  const allWorks = works();
  const records = divergences();
  return [...graph.nodes]
    .sort((a, b) => a.label.localeCompare(b.label, 'en'))
    .map((node) => {
      const named = new RegExp(`\\b${escape(node.label.toLowerCase())}\\b`);
      const about = (record: DivergenceFull) =>
        record.cluster === node.id || [record.question, ...record.tensions.map((tension) => tension.topic)].some((text) => named.test(text.toLowerCase()));
      return {
        node,
        related: [...(neighbours.get(node.id) ?? [])]
          .flatMap((id) => (byId.has(id) ? [byId.get(id)!] : []))
          .sort((a, b) => a.label.localeCompare(b.label, 'en')),
        works: allWorks.filter((work) => work.lineage.includes(node.id)),
        records: records.filter(about),
      };
    });
}

export const conceptPath = (id: string) => `/graph/${encodeURIComponent(id)}/`;
