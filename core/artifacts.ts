/**
 * The artifact layout, shared by the build (writer) and the API and site (readers).
 *   data/    internal JSON the API loads (works, divergences, tensions, concepts, models, manifest, search/)
 *   public/  files served as they are at the site root (record twins, static documents, audio)
 */
import path from 'node:path';

export function artifactPaths(artifactsDir: string) {
  const data = path.join(artifactsDir, 'data');
  const pub = path.join(artifactsDir, 'public');
  return {
    root: artifactsDir,
    data,
    public: pub,
    site: path.join(data, 'site.json'),
    works: path.join(data, 'works.json'),
    divergences: path.join(data, 'divergences.json'),
    tensions: path.join(data, 'tensions.json'),
    dispositions: path.join(data, 'dispositions.json'),
    tensionMerges: path.join(data, 'tension-merges.json'),
    concepts: path.join(data, 'concepts.json'),
    models: path.join(data, 'models.json'),
    manifest: path.join(data, 'manifest.json'),
    pages: path.join(data, 'pages.json'),
    audio: path.join(data, 'audio.json'),
    claims: path.join(data, 'claims.json'),
    searchMeta: path.join(data, 'search', 'meta.json'),
    searchVectors: path.join(data, 'search', 'vectors.f32'),
    /** The approximate index over vectors.f32 (USearch), present only above the size threshold (ADR 0018). */
    searchVectorIndex: path.join(data, 'search', 'vectors.usearch'),
    /** The same vectors as int8 with a scale a row (core/search/vector-scan.ts), present from QUANTIZE_FROM passages on: the server reads these, not vectors.f32. */
    searchQuantized: path.join(data, 'search', 'vectors.i8'),
    searchFullText: path.join(data, 'search', 'fulltext.bin'),
    /** The passages' text as indexed, read one passage at a time (core/search/passages.ts). */
    searchPassages: path.join(data, 'search', 'passages.bin'),
    searchRelevance: path.join(data, 'search', 'relevance.json'),
    /** How much this corpus's search trusts the vectors and the feedback, and on what evidence (core/search/retrieval-choice.ts). */
    searchRetrieval: path.join(data, 'search', 'retrieval.json'),
    /** Each passage's identity across builds (scripts/lib/previous-search.ts), 32 bytes a passage: the next build matches its passages without hashing them again. */
    searchIdentities: path.join(data, 'search', 'identities.bin'),
    buildInfo: path.join(data, 'build.json'),
    /** The content's revisions read from git, newest first (scripts/lib/change-history.ts): what GET /api/changes answers from; /changes/ holds the same in pages. */
    changes: path.join(data, 'changes.json'),
    /** Each work's record twin key (scripts/lib/twin-reuse.ts), so the next build links the twins that did not change. */
    recordTwins: path.join(data, 'record-twins.json'),
  };
}
export type ArtifactPaths = ReturnType<typeof artifactPaths>;

/** data/audio.json: the audio tracks the build found, with their durations. */
export interface AudioManifest {
  tracks: {
    slug: string;
    title: string;
    duration_seconds: number;
    date: string;
    contributors: string[];
    description?: string;
    stream_url: string | null;
    transcript_url: string;
  }[];
  total_duration_seconds: number;
  note: string;
}
