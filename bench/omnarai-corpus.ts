/**
 * The imported ../shared/omnarai data, built with the real model into a temporary folder and
 * loaded as the API loads it: what the judged-set benchmarks (intent.ts, relevance.ts) ask.
 */
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { loadCorpus, type Corpus } from '../api/load-artifacts.ts';
import type { SearchTuning } from '../core/search/search-index.ts';
import { pathsFromEnv, REPO_ROOT } from '../core/paths.ts';
import { createUseLiteEmbedder, withQueryCache } from '../providers/embedder.ts';
import { buildArtifacts } from '../scripts/build.ts';
import { importOmnarai } from '../scripts/import-omnarai.ts';

/** Runs `use` on the built corpus (`from`: the Omnarai folder, relative to the repository), then removes the folder. */
export async function withImportedOmnarai(from: string | undefined, label: string, use: (corpus: Corpus, dataDir: string) => Promise<void>): Promise<void> {
  const dataDir = path.resolve(REPO_ROOT, from ?? '../shared/omnarai');
  if (!existsSync(path.join(dataDir, 'divergences.jsonl'))) throw new Error(`no Omnarai data in ${dataDir} (--from <dir>)`);
  const work = mkdtempSync(path.join(os.tmpdir(), `polyphony-bench-${label}-`));
  try {
    const contentDir = path.join(work, 'content');
    const artifactsDir = path.join(work, 'artifacts');
    importOmnarai({ from: dataDir, out: contentDir, force: true });
    const embedder = withQueryCache(await createUseLiteEmbedder());
    await buildArtifacts({ contentDir, artifactsDir, cacheDir: pathsFromEnv().cacheDir, embedder });
    // BENCH_TUNING='<json>' sets search tuning over the build's choice, to compare settings on the same data.
    const tuning = process.env.BENCH_TUNING ? (JSON.parse(process.env.BENCH_TUNING) as Partial<SearchTuning>) : undefined;
    await use(await loadCorpus(artifactsDir, embedder, tuning), dataDir);
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}
