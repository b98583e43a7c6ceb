/** The concepts a question touches: those it names, then the returned records' themes, with their subgraph. */
import type { Corpus } from './corpus.ts';
import { createTermTokenizer } from './search/tokenizer.ts';
import type { ScoredRecord } from './search/types.ts';

let termTokenizer: Promise<(text: string) => string[]> | undefined;

/** Each corpus's concept labels as term sets, made once. */
const conceptTerms = new WeakMap<Corpus, { id: string; terms: Set<string> }[]>();

/**
 * Concepts the question names: every word of the concept's label is in the question
 * ("holdform"), or the question's own words, two or more, all sit in one label ("What is an
 * epistemic ring?" names "Epistemic Ring Classification"). A definitional question then gets
 * the definition, which no retrieved passage may hold.
 */
export async function conceptsNamed(corpus: Corpus, question: string): Promise<string[]> {
  termTokenizer ??= createTermTokenizer();
  const terms = await termTokenizer;
  let labels = conceptTerms.get(corpus);
  if (!labels) {
    labels = corpus.graph.nodes.map((node) => ({ id: node.id, terms: new Set(terms(node.label)) })).filter((node) => node.terms.size > 0);
    conceptTerms.set(corpus, labels);
  }
  const asked = new Set(terms(question));
  if (asked.size === 0) return [];
  return labels
    .filter((label) => [...label.terms].every((term) => asked.has(term)) || (asked.size >= 2 && [...asked].every((term) => label.terms.has(term))))
    .map((label) => label.id);
}

/**
 * Concept ids touched by the question: those it names first, then the returned records'
 * themes, most-cited first; and the subgraph of those concepts with the edges among them.
 */
export function conceptsTouched(corpus: Corpus, hits: readonly ScoredRecord[], named: readonly string[] = []) {
  const counts = new Map<string, number>();
  for (const hit of hits) for (const concept of hit.record.lineage) counts.set(concept, (counts.get(concept) ?? 0) + 1);
  const byCount = [...counts.entries()].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0])).map(([id]) => id);
  const ids = [...new Set([...named, ...byCount])];
  const wanted = new Set(ids);
  return {
    concepts: ids,
    conceptSubgraph: {
      nodes: corpus.graph.nodes.filter((node) => wanted.has(node.id)),
      edges: corpus.graph.edges.filter(([a, b]) => wanted.has(a) && wanted.has(b)),
    },
  };
}
