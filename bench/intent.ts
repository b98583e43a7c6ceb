/**
 * Atlas admission on real data: the judged set (bench/intent-set.json) asked of retrieve(),
 * the code behind GET /api/query, over the Omnarai corpus and Atlas imported from
 * ../shared/omnarai into a temporary folder. Prints the confusion table without the admission
 * test (ratio 0: every Atlas record retrieval found, as before it) and with the default ratio,
 * for the calibration and held-out halves, then the sweep the ratio was chosen from.
 *
 *   npx tsx bench/intent.ts [--from ../shared/omnarai]
 */
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ATLAS_RELEVANCE_RATIO } from '../api/core/atlas-admission.ts';
import { retrieve } from '../api/core/fast-path.ts';
import { parseQueryParameters } from '../api/core/query-params.ts';
import { loadCorpus, type Corpus } from '../api/load-artifacts.ts';
import { createUseLiteEmbedder, withQueryCache } from '../api/providers/embedder.ts';
import { buildArtifacts } from '../scripts/build.ts';
import { importOmnarai } from '../scripts/import-omnarai.ts';
import { pathsFromEnv, REPO_ROOT } from '../scripts/lib/paths.ts';
import { confusion, judge, loadIntentSet, misses, renderConfusion, type JudgedQuestion, type Outcome } from './intent-eval.ts';

const SWEEP = [0.5, 0.6, 0.65, 0.7, 0.75, 0.8, 0.85, 0.9, 0.95];

function argument(name: string): string | undefined {
  const at = process.argv.indexOf(name);
  return at >= 0 ? process.argv[at + 1] : undefined;
}

async function outcomesAt(corpus: Corpus, items: readonly JudgedQuestion[], atlasRatio: number): Promise<Outcome[]> {
  return judge(items, async (question) => {
    const { hits } = await retrieve(corpus, parseQueryParameters({ q: question }), { atlasRatio });
    return hits.map((hit) => ({ id: hit.record.id, atlas: hit.record.kind === 'divergence' }));
  });
}

function report(title: string, outcomes: readonly Outcome[]): void {
  for (const split of ['calibrate', 'holdout'] as const) {
    console.log(`\n${title}, ${split} half:\n`);
    console.log(renderConfusion(confusion(outcomes.filter((outcome) => outcome.item.split === split))));
  }
}

async function main(): Promise<void> {
  const from = path.resolve(REPO_ROOT, argument('--from') ?? '../shared/omnarai');
  if (!existsSync(path.join(from, 'divergences.jsonl'))) throw new Error(`no Omnarai data in ${from} (--from <dir>)`);
  const work = mkdtempSync(path.join(os.tmpdir(), 'polyphony-bench-intent-'));
  try {
    const contentDir = path.join(work, 'content');
    const artifactsDir = path.join(work, 'artifacts');
    importOmnarai({ from, out: contentDir, force: true });
    const embedder = withQueryCache(await createUseLiteEmbedder());
    await buildArtifacts({ contentDir, artifactsDir, cacheDir: pathsFromEnv().cacheDir, embedder });
    const corpus = await loadCorpus(artifactsDir, embedder);
    const items = loadIntentSet();

    const before = await outcomesAt(corpus, items, 0);
    const after = await outcomesAt(corpus, items, ATLAS_RELEVANCE_RATIO);
    report('No admission test (ratio 0)', before);
    report(`Admission ratio ${ATLAS_RELEVANCE_RATIO} (default)`, after);
    console.log(`\nMisses at the default ratio:${misses(after).map((line) => `\n- ${line}`).join('') || ' none'}`);

    console.log('\nSweep: factual questions with an Atlas record in the top 8 / contested questions showing their record\n');
    console.log('| ratio | calibrate: factual with Atlas | calibrate: contested own shown | holdout: factual with Atlas | holdout: contested own shown |');
    console.log('|---|---|---|---|---|');
    for (const ratio of SWEEP) {
      const outcomes = await outcomesAt(corpus, items, ratio);
      const cells = (['calibrate', 'holdout'] as const).flatMap((split) => {
        const table = confusion(outcomes.filter((outcome) => outcome.item.split === split));
        return [`${table.factual.atlasShown}/${table.factual.total}`, `${table.contested.ownShown}/${table.contested.total}`];
      });
      console.log(`| ${ratio} | ${cells.join(' | ')} |`);
    }
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(error instanceof Error ? error.message : error);
    process.exit(1);
  },
);
