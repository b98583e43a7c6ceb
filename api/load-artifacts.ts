/** Loads the build's artifacts into memory: the read model every route serves from. */
import { existsSync, readFileSync } from 'node:fs';
import type { RawData } from '@orama/orama';
import type { ModelRegistry, SiteConfig } from '../schemas/content.ts';
import { artifactPaths } from '../scripts/lib/artifacts.ts';
import type { AudioManifest } from '../scripts/build.ts';
import type { Manifest } from './core/build-manifest.ts';
import type { ConceptGraph, DivergenceFull, TensionEntry, WorkRecord } from './core/records.ts';
import { loadFullTextIndex } from './core/search/orama-index.ts';
import { createSearchIndex, type SearchIndex, type SearchTuning } from './core/search/search-index.ts';
import type { SearchMeta } from './core/search/types.ts';
import type { Embedder } from './providers/embedder.ts';

export interface Corpus {
  site: SiteConfig;
  registry: ModelRegistry;
  works: WorkRecord[];
  workById: Map<string, WorkRecord>;
  divergences: DivergenceFull[];
  divergenceById: Map<string, DivergenceFull>;
  tensions: TensionEntry[];
  graph: ConceptGraph;
  manifest: Manifest;
  pages: Record<string, { title: string; description: string; path: string; html: string }>;
  audio: AudioManifest;
  claims: unknown[];
  search: SearchIndex;
  publicDir: string;
  builtAt: string;
}

function readJson<T>(file: string): T {
  return JSON.parse(readFileSync(file, 'utf8')) as T;
}

export class ArtifactsMissingError extends Error {}

export async function loadCorpus(artifactsDir: string, embedder: Embedder, tuning?: Partial<SearchTuning>): Promise<Corpus> {
  const paths = artifactPaths(artifactsDir);
  if (!existsSync(paths.manifest)) {
    throw new ArtifactsMissingError(`no build artifacts in ${artifactsDir}: run \`npm run build\` first`);
  }
  const works = readJson<WorkRecord[]>(paths.works);
  const divergences = readJson<DivergenceFull[]>(paths.divergences);
  const meta = readJson<SearchMeta>(paths.searchMeta);
  const vectorBytes = readFileSync(paths.searchVectors);
  // Copy: a Buffer's offset into Node's pool need not be aligned for a Float32Array view.
  const vectors = new Float32Array(vectorBytes.byteLength / 4);
  new Uint8Array(vectors.buffer).set(vectorBytes);
  const fullText = await loadFullTextIndex(readJson<RawData>(paths.searchFullText));
  return {
    site: readJson(paths.site),
    registry: readJson(paths.models),
    works,
    workById: new Map(works.map((work) => [work.id, work])),
    divergences,
    divergenceById: new Map(divergences.map((record) => [record.id, record])),
    tensions: readJson(paths.tensions),
    graph: readJson(paths.concepts),
    manifest: readJson(paths.manifest),
    pages: readJson(paths.pages),
    audio: readJson(paths.audio),
    claims: readJson(paths.claims),
    search: createSearchIndex({ meta, vectors, fullText, embedder, ...(tuning ? { tuning } : {}) }),
    publicDir: paths.public,
    builtAt: meta.built_at,
  };
}
