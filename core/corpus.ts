/**
 * The read model the API serves: what api/load-artifacts.ts loads from the build's artifacts
 * (and what persisted live records join at run time). The core reads it; it never loads it.
 */
import type { ModelRegistry, SiteConfig, TensionDisposition } from '../schemas/content.ts';
import type { AudioManifest } from './artifacts.ts';
import type { Manifest } from './build-manifest.ts';
import type { ConceptGraph, DivergenceFull, TensionEntry, WorkRecord } from './records.ts';
import type { SearchIndex } from './search/search-index.ts';
import type { RetrievalChoice } from './search/retrieval-choice.ts';

export interface Corpus {
  site: SiteConfig;
  registry: ModelRegistry;
  works: WorkRecord[];
  workById: Map<string, WorkRecord>;
  divergences: DivergenceFull[];
  divergenceById: Map<string, DivergenceFull>;
  tensions: TensionEntry[];
  /** Curators' dispositions by tension key (content/tensions/). */
  dispositions: Record<string, TensionDisposition[]>;
  /** Tension merges in force (content/tension-merges.yaml): key merged away → surviving key. */
  tensionMerges: Map<string, string>;
  graph: ConceptGraph;
  manifest: Manifest;
  pages: Record<string, { title: string; description: string; path: string; html: string }>;
  audio: AudioManifest;
  claims: unknown[];
  search: SearchIndex;
  /** How much the search trusts the vectors and the feedback on this corpus, and why (retrieval-choice.ts). */
  retrieval: RetrievalChoice;
  publicDir: string;
  builtAt: string;
  /** Full text of a work, read lazily from its record twin. */
  textOf(id: string): string | undefined;
}
