/** The tracked tensions of the read model: Atlas tension entries grouped by key, with dispositions. */
import { recordConcepts, trackTensions, type KeptSighting, type TrackedTension } from '../../core/tension-identity.ts';
import type { Corpus } from '../load-artifacts.ts';

/** `kept`: deliberation sightings a curator kept (store), which join their tension. */
export function trackedTensions(corpus: Corpus, kept: readonly KeptSighting[] = []): TrackedTension[] {
  const conceptIds = new Set(corpus.graph.nodes.map((node) => node.id));
  return trackTensions(
    corpus.tensions,
    corpus.dispositions,
    (recordId) => {
      const record = corpus.divergenceById.get(recordId);
      return record ? recordConcepts(record, conceptIds) : [];
    },
    kept,
    corpus.tensionMerges,
  );
}
