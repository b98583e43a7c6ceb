/** Assembles the manifest document (spec §2.8) from derived records. Pure. */
import type { ModelRegistry } from '../schemas/content.ts';
import {
  atlasStateHash,
  computeCounts,
  corpusSeedHash,
  HOW_TO_VERIFY,
  MANIFEST_VERSION,
  manifestHash,
  type ManifestCounts,
  type SeedFile,
} from './manifest.ts';
import type { ConceptGraph, DivergenceFull, WorkRecord } from './records.ts';
import type { CalibrationSummary } from './certify/calibration-summary.ts';
import { ENGINE_VERSION, INTERFACE_VERSION } from './version.ts';

export interface ManifestInput {
  works: readonly WorkRecord[];
  divergences: readonly DivergenceFull[];
  graph: ConceptGraph;
  audioTracks: number;
  registry: ModelRegistry;
  seedFiles: readonly SeedFile[];
  corpusRev: string;
  generatedAt: string;
  /** Seed hash carried over when the seed files are not at hand (the API recomputing live counts). */
  corpusSeed?: string;
  /** How well this Atlas's instrument sees splits, when `npm run certify -- --calibrate` measured it. */
  calibration?: CalibrationSummary;
  /** The embedding model the search index was built with (its id and length). */
  embedder?: { id: string; dims: number };
}

export interface Manifest {
  manifest_version: string;
  engine_version: string;
  interface_version: string;
  generated_at: string;
  counts: ManifestCounts;
  model_versions: {
    model_id: string;
    family: string;
    lab: string;
    retired: boolean;
    superseded_by: string | null;
    fictional: boolean;
    answers_in_atlas: number;
  }[];
  published_releases: { corpus_rev: string; releases: { tag: string; date: string }[]; note: string };
  hashes: {
    algorithm: 'sha256';
    corpus_seed: string;
    atlas_state: string;
    manifest: string;
    how_to_verify: typeof HOW_TO_VERIFY;
  };
  consistency_contract: Record<string, string>;
  schemas: Record<string, string>;
  certification_calibration?: CalibrationSummary;
  embedder?: { id: string; dims: number };
}

export function buildManifest(input: ManifestInput): Manifest {
  const counts = computeCounts(input);
  const answersByModel = new Map<string, number>();
  for (const record of input.divergences) {
    for (const model of record.models) {
      const answers = record.answers.filter((answer) => answer.model_id === model.model_id).length;
      answersByModel.set(model.model_id, (answersByModel.get(model.model_id) ?? 0) + answers);
    }
  }
  const families = new Map(input.registry.families.map((family) => [family.name, family]));
  return {
    manifest_version: MANIFEST_VERSION,
    engine_version: ENGINE_VERSION,
    interface_version: INTERFACE_VERSION,
    generated_at: input.generatedAt,
    counts,
    model_versions: input.registry.models.map((model) => ({
      model_id: model.model_id,
      family: model.family,
      lab: families.get(model.family)?.lab ?? 'unknown',
      retired: model.retired,
      superseded_by: model.superseded_by ?? null,
      fictional: families.get(model.family)?.fictional ?? false,
      answers_in_atlas: answersByModel.get(model.model_id) ?? 0,
    })),
    published_releases: {
      corpus_rev: input.corpusRev,
      releases: [],
      note: 'The corpus is versioned in git; corpus_rev identifies the content revision this manifest was computed from.',
    },
    hashes: {
      algorithm: 'sha256',
      corpus_seed: input.corpusSeed ?? corpusSeedHash(input.seedFiles),
      atlas_state: atlasStateHash(
        input.divergences.map((record) => record.id),
        counts.atlas.store_updated_at,
      ),
      manifest: manifestHash(counts),
      how_to_verify: HOW_TO_VERIFY,
    },
    consistency_contract: {
      counts:
        'Every count is computed from the live content and store when the manifest is served. A number on any other surface that disagrees with this manifest is wrong.',
      categories: 'Corpus works (seed works plus approved proposals) and Atlas records are two separate categories; neither count includes the other.',
      pending: 'Pending contributions and proposals are not counted until a curator approves them.',
    },
    schemas: {
      openapi: '/openapi.json',
      interface_version: INTERFACE_VERSION,
      content_format: 'docs/CONTENT.md in the engine repository',
    },
    ...(input.calibration ? { certification_calibration: input.calibration } : {}),
    ...(input.embedder ? { embedder: input.embedder } : {}),
  };
}
