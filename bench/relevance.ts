/**
 * The judged relevance set (bench/relevance-set.json) asked of retrieve(), the code behind
 * GET /api/query with default parameters, over the Omnarai corpus and Atlas imported from
 * ../shared/omnarai into a temporary folder. Prints, for the calibration and held-out halves:
 * how often the works that answer a question are in its top 8, what off-corpus questions get
 * (nothing, an Atlas record), whether contested questions show their Atlas record, and how
 * well the best similarity in the top 8 separates answered questions from off-corpus ones —
 * the number a floor marking weak results would read. Then, as the reference measured in the
 * same run, bench/intent-set.json's factual questions (written in the corpus's vocabulary,
 * which the Atlas admission ratio was calibrated on), and every miss, by id.
 *
 *   npx tsx bench/relevance.ts [--from ../shared/omnarai]
 */
import { retrieve } from '../core/retrieve.ts';
import { parseQueryParameters } from '../core/query-params.ts';
import { withImportedOmnarai } from './omnarai-corpus.ts';
import {
  bestSimilarity,
  firstExpectedPlace,
  judgeRelevance,
  loadRelevanceSet,
  median,
  summariseRelevance,
  TOP,
  type RelevanceOutcome,
  type ShownRecord,
  type RelevanceSummary,
} from './relevance-set.ts';
import { loadIntentSet } from './intent-eval.ts';

function argument(name: string): string | undefined {
  const at = process.argv.indexOf(name);
  return at >= 0 ? process.argv[at + 1] : undefined;
}

const fixed = (value: number | undefined, digits = 2) => (value === undefined ? '—' : value.toFixed(digits));

function renderSummary(halves: readonly [string, RelevanceSummary][]): string {
  const rows: [string, (summary: RelevanceSummary) => string][] = [
    [`answers: an expected work in the top ${TOP}`, ({ answers }) => `${answers.expectedShown}/${answers.total}`],
    ['answers: an expected work first', ({ answers }) => `${answers.expectedFirst}/${answers.total}`],
    [`answers: mean reciprocal rank (top ${TOP})`, ({ answers }) => fixed(answers.reciprocalRank)],
    ['answers: any Atlas record shown', ({ answers }) => `${answers.atlasShown}/${answers.total}`],
    ['off_corpus: nothing shown', ({ offCorpus }) => `${offCorpus.nothingShown}/${offCorpus.total}`],
    ['off_corpus: any Atlas record shown', ({ offCorpus }) => `${offCorpus.atlasShown}/${offCorpus.total}`],
    [`contested: its Atlas record in the top ${TOP}`, ({ contested }) => `${contested.ownShown}/${contested.total}`],
    ['contested: only other Atlas records', ({ contested }) => `${contested.otherAtlasOnly}/${contested.total}`],
    ['contested: no Atlas record', ({ contested }) => `${contested.noAtlas}/${contested.total}`],
    ['median best similarity: answers', ({ medianBestSimilarity }) => fixed(medianBestSimilarity.answers, 3)],
    ['median best similarity: off_corpus', ({ medianBestSimilarity }) => fixed(medianBestSimilarity.off_corpus, 3)],
    ['median best similarity: contested', ({ medianBestSimilarity }) => fixed(medianBestSimilarity.contested, 3)],
    ['best similarity separates answers from off_corpus (AUC)', ({ answersOverOffCorpus }) => fixed(answersOverOffCorpus)],
  ];
  return [
    `| figure | ${halves.map(([name]) => name).join(' | ')} |`,
    `|---|${halves.map(() => '---|').join('')}`,
    ...rows.map(([label, value]) => `| ${label} | ${halves.map(([, summary]) => value(summary)).join(' | ')} |`),
  ].join('\n');
}

function missLine(outcome: RelevanceOutcome): string | undefined {
  const { item, shown } = outcome;
  const atlas = shown.filter((record) => record.atlas).map((record) => record.id);
  const top = `best similarity ${bestSimilarity(outcome).toFixed(3)}`;
  if (item.family === 'answers' && firstExpectedPlace(outcome) === undefined)
    return `${item.id} (${item.split}): no expected work; top ${shown[0]?.id ?? 'none'}, ${top}`;
  if (item.family === 'off_corpus' && atlas.length > 0) return `${item.id} (${item.split}): Atlas ${atlas.join(', ')}`;
  if (item.family === 'contested' && !atlas.includes(item.expect[0]!))
    return `${item.id} (${item.split}): ${atlas.length > 0 ? `other Atlas ${atlas.join(', ')}` : 'no Atlas record'}`;
  return undefined;
}

async function main(): Promise<void> {
  await withImportedOmnarai(argument('--from'), 'relevance', async (corpus) => {
    const ask = async (question: string): Promise<ShownRecord[]> => {
      const { hits } = await retrieve(corpus, parseQueryParameters({ q: question }));
      return hits.map((hit) => ({ id: hit.record.id, atlas: hit.record.kind === 'divergence', similarity: hit.similarity }));
    };
    const outcomes = await judgeRelevance(loadRelevanceSet().questions, ask);
    const half = (split: string) => summariseRelevance(outcomes.filter((outcome) => outcome.item.split === split));
    console.log(
      renderSummary([
        ['calibrate', half('calibrate')],
        ['holdout', half('holdout')],
        ['both', summariseRelevance(outcomes)],
      ]),
    );
    // The reference, in the same run: bench/intent-set.json's factual questions, written with the
    // corpus's vocabulary, which the Atlas admission ratio was calibrated on.
    const factual = loadIntentSet().filter((item) => item.kind === 'factual');
    let factualWithAtlas = 0;
    const factualBest: number[] = [];
    for (const item of factual) {
      const top = (await ask(item.question)).slice(0, TOP);
      if (top.some((record) => record.atlas)) factualWithAtlas++;
      factualBest.push(Math.max(0, ...top.map((record) => record.similarity)));
    }
    console.log(
      `\nReference (bench/intent-set.json factual, same run): any Atlas record shown ${factualWithAtlas}/${factual.length}, median best similarity ${fixed(median(factualBest), 3)}`,
    );
    const missed = outcomes.map(missLine).filter((line): line is string => line !== undefined);
    console.log(`\nMisses:${missed.map((line) => `\n- ${line}`).join('') || ' none'}`);
  });
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(error instanceof Error ? error.message : error);
    process.exit(1);
  },
);
