/**
 * Manifest counts and the sha256 attestation of spec §2.8. Pure: inputs in, manifest out.
 * The manifest is the single source of truth for counts on every surface.
 */
import { createHash } from 'node:crypto';
import { EVIDENCE, RINGS } from '../schemas/vocab.ts';
import { canonicalJson } from './canonical-json.ts';
import type { ManifestCounts } from '../schemas/api/orientation.ts';
import { certificationCounts } from './certify/record-view.ts';
import { tierSourceCounts } from './certify/tier-source.ts';
import type { ConceptGraph, DivergenceFull, WorkRecord } from './records.ts';

export const MANIFEST_VERSION = '1.0.0';

export function sha256Hex(data: string | Buffer | Uint8Array): string {
  return createHash('sha256').update(data).digest('hex');
}

/** The counts as /api/manifest states them (schemas/api/orientation.ts). */
export type { ManifestCounts } from '../schemas/api/orientation.ts';

export interface CountInput {
  works: readonly WorkRecord[];
  divergences: readonly DivergenceFull[];
  graph: ConceptGraph;
  audioTracks: number;
}

/** Counts per value; every key of `keys` is present (0 when absent). */
function tally<K extends string>(values: readonly string[], keys: readonly K[]): Record<K, number> {
  const counts: Record<string, number> = Object.fromEntries(keys.map((key) => [key, 0]));
  for (const value of values) counts[value] = (counts[value] ?? 0) + 1;
  return counts as Record<K, number>;
}

/** The latest moment any Atlas record was dated, persisted or annotated. */
export function storeUpdatedAt(divergences: readonly DivergenceFull[]): string {
  let latest = '';
  for (const record of divergences) {
    const stamps = [record.date, record.provenance?.persisted_at, ...record.annotations.map((annotation) => annotation.date)];
    for (const stamp of stamps) {
      if (!stamp) continue;
      const iso = stamp.length === 10 ? `${stamp}T00:00:00.000Z` : new Date(stamp).toISOString();
      if (iso > latest) latest = iso;
    }
  }
  return latest || new Date(0).toISOString();
}

export function computeCounts(input: CountInput): ManifestCounts {
  const { works, divergences, graph } = input;
  const seriesOf = (id: string) => id.replace(/^[A-Z0-9]+-([A-Z]).*$/, '$1');
  const corpusContributors = new Set(works.flatMap((work) => work.contributors));
  const voices = new Set(divergences.flatMap((record) => record.contributors));
  const certification = certificationCounts(divergences);
  return {
    corpus: {
      total_works: works.length,
      total_words: works.reduce((sum, work) => sum + work.words, 0),
      seed_works: works.filter((work) => work.origin === 'seed').length,
      merged_proposals: works.filter((work) => work.origin === 'proposal').length,
      rings: tally(
        works.map((work) => work.ring),
        RINGS,
      ),
      evidence: tally(
        works.map((work) => work.evidence),
        EVIDENCE,
      ),
      layers: tally(
        works.map((work) => work.layer),
        ['research', 'canon', 'realms'] as const,
      ),
    },
    atlas: {
      live_records: divergences.length,
      by_series: tally(
        divergences.map((record) => seriesOf(record.id)),
        [],
      ),
      verbatim_answers: divergences.reduce((sum, record) => sum + record.answerCount, 0),
      tension_axes: divergences.reduce((sum, record) => sum + record.tensionCount, 0),
      delta_records: divergences.filter((record) => record.re_elicits !== undefined).length,
      distinct_questions: new Set(divergences.map((record) => record.question)).size,
      tested_records: certification.tested,
      certified_records: certification.certified,
      ...(certification.undecided > 0 ? { undecided_records: certification.undecided } : {}),
      tier_distribution: certification.tiers,
      tier_sources: tierSourceCounts(divergences),
      store_updated_at: storeUpdatedAt(divergences),
    },
    concept_graph: {
      nodes: graph.nodes.length,
      edges: graph.edges.length,
      themes: graph.nodes.filter((node) => node.type === 'theme').length,
      glossary: graph.nodes.filter((node) => node.type === 'glossary').length,
    },
    contributors: {
      total: new Set([...corpusContributors, ...voices]).size,
      corpus: corpusContributors.size,
      atlas_voices: voices.size,
    },
    audio: { tracks: input.audioTracks },
  };
}

export interface SeedFile {
  file: string;
  bytes: Uint8Array;
}

/** sha256 over the seed works' raw bytes, files in byte order of their relative paths. */
export function corpusSeedHash(seedFiles: readonly SeedFile[]): string {
  const hash = createHash('sha256');
  for (const file of [...seedFiles].sort((a, b) => (a.file < b.file ? -1 : a.file > b.file ? 1 : 0))) {
    hash.update(file.bytes);
  }
  return hash.digest('hex');
}

/** sha256 of the sorted live record ids, one per line, then the store timestamp. */
export function atlasStateHash(liveIds: readonly string[], storeTimestamp: string): string {
  const sorted = [...liveIds].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  return sha256Hex(`${sorted.join('\n')}\n${storeTimestamp}`);
}

export function manifestHash(counts: ManifestCounts): string {
  return sha256Hex(canonicalJson(counts));
}

export const HOW_TO_VERIFY = {
  corpus_seed:
    'sha256 of the raw bytes of every file in content/works/ (the seed works), concatenated in byte order of their file names: `cat $(ls content/works/*.md | LC_ALL=C sort) | sha256sum`.',
  atlas_state:
    'sha256 of the UTF-8 string made of the live Atlas record ids sorted in byte order, joined by "\\n", then "\\n", then counts.atlas.store_updated_at.',
  manifest: 'sha256 of the canonical JSON of `counts`: JSON.stringify with object keys sorted recursively, no whitespace, UTF-8.',
};
