/**
 * Atlas admission on real data: the judged set (bench/intent-set.json) asked of retrieve(),
 * the code behind GET /api/query, over the Omnarai corpus and Atlas imported from
 * ../shared/omnarai into a temporary folder. Prints the confusion table without the admission
 * test (ratio 0: every Atlas record retrieval found, as before it) and with the default ratio,
 * for the calibration and held-out halves, then the sweep the ratio was chosen from. The sweep
 * also counts the questions of ../shared/omnarai/eval-gold-set.json that expect tensions and
 * get no Atlas record (test/omnarai-gold.test.ts requires none): the ratio must keep those.
 *
 *   npx tsx bench/intent.ts [--from ../shared/omnarai]
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { ATLAS_RELEVANCE_RATIO } from '../core/atlas-admission.ts';
import { retrieve } from '../core/retrieve.ts';
import { parseQueryParameters } from '../core/query-params.ts';
import type { Corpus } from '../api/load-artifacts.ts';
import { withImportedOmnarai } from './omnarai-corpus.ts';
import { confusion, judge, loadIntentSet, misses, renderConfusion, type JudgedQuestion, type Outcome } from './intent-eval.ts';

const SWEEP = [0, 0.5, 0.54, 0.56, 0.58, 0.6, 0.62, 0.64, 0.66, 0.68, 0.7, 0.75, 0.8, 0.85, 0.9, 0.95];

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
  await withImportedOmnarai(argument('--from'), 'intent', async (corpus, from) => {
    const items = loadIntentSet();

    const before = await outcomesAt(corpus, items, 0);
    const after = await outcomesAt(corpus, items, ATLAS_RELEVANCE_RATIO);
    report('No admission test (ratio 0)', before);
    report(`Admission ratio ${ATLAS_RELEVANCE_RATIO} (default)`, after);
    console.log(
      `\nMisses at the default ratio:${
        misses(after)
          .map((line) => `\n- ${line}`)
          .join('') || ' none'
      }`,
    );

    // The source service's typed queries that expect tensions: each must keep an Atlas record.
    const gold = (JSON.parse(readFileSync(path.join(from, 'eval-gold-set.json'), 'utf8')) as { query: string; expect_tensions: boolean }[]).filter(
      (entry) => entry.expect_tensions,
    );
    console.log(
      '\nSweep: factual questions with an Atlas record in the top 8 / contested questions showing their record / gold questions expecting tensions that get no Atlas record\n',
    );
    console.log(
      '| ratio | calibrate: factual with Atlas | calibrate: contested own shown | gold: tensions expected, no Atlas | holdout: factual with Atlas | holdout: contested own shown |',
    );
    console.log('|---|---|---|---|---|---|');
    for (const ratio of SWEEP) {
      const outcomes = await outcomesAt(corpus, items, ratio);
      const [calibrate, holdout] = (['calibrate', 'holdout'] as const).map((split) => {
        const table = confusion(outcomes.filter((outcome) => outcome.item.split === split));
        return [`${table.factual.atlasShown}/${table.factual.total}`, `${table.contested.ownShown}/${table.contested.total}`];
      });
      let goldWithout = 0;
      for (const entry of gold) {
        const { hits } = await retrieve(corpus, parseQueryParameters({ q: entry.query }), { atlasRatio: ratio });
        if (!hits.some((hit) => hit.record.kind === 'divergence')) goldWithout++;
      }
      console.log(`| ${ratio} | ${[...calibrate!, `${goldWithout}/${gold.length}`, ...holdout!].join(' | ')} |`);
    }
  });
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(error instanceof Error ? error.message : error);
    process.exit(1);
  },
);
