/**
 * The calibrated relevance floors (core/search/relevance.ts; fitted on ../shared/omnarai) on
 * builds of other corpora (issue 42, part 4): over a BEIR set built by `npm run eval:beir --
 * --sets <name>`, GET /api/query's retrieve() with the deployment's default floors, without and
 * with the build's question gate (retrieval-choice.ts `question_gate`), asked
 *   - the set's own judged questions, on both fixed halves (works expected: how many get any
 *     work, and how many show a judged work in the top 8), and
 *   - questions from other fields the corpus does not answer (no_context expected): the
 *     off-corpus and Omnarai-answer families of bench/relevance-set.json, and the other BEIR
 *     sets' judged questions (their first 30 words, as a caller would ask).
 *
 *   npx tsx bench/relevance-beir.ts --sets scifact,arguana [--work-dir .cache/beir-sets]
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { loadCorpus } from '../api/load-artifacts.ts';
import { REPO_ROOT } from '../core/paths.ts';
import { parseQueryParameters } from '../core/query-params.ts';
import { retrieve } from '../core/retrieve.ts';
import { createUseLiteEmbedder } from '../providers/embedder.ts';
import { parseQrels, parseQueries, readMaybeGzip } from '../scripts/lib/beir.ts';
import { cachedEmbedder, firstWords, halfOf, readImportMap } from '../scripts/lib/beir-eval.ts';
import { resolveSet } from '../scripts/lib/beir-quality.ts';
import { loadRelevanceSet } from './relevance-set.ts';

const { values } = parseArgs({ options: { sets: { type: 'string', default: 'scifact,arguana' }, 'work-dir': { type: 'string' } } });
const workDir = path.resolve(values['work-dir'] ?? path.join(REPO_ROOT, '.cache', 'beir-sets'));
const sets = values.sets.split(',').map((name) => resolveSet(name, REPO_ROOT));
const embedder = cachedEmbedder(await createUseLiteEmbedder(), path.join(REPO_ROOT, '.cache'));
const judged = loadRelevanceSet().questions.filter((question) => question.family !== 'contested');
const questionsOf = new Map(
  sets.map((set) => {
    const text = new Map(parseQueries(readMaybeGzip(set.queriesFile)).map((query) => [query._id, query.text]));
    const qrels = parseQrels(readFileSync(set.qrelsFile, 'utf8'));
    return [set.name, [...qrels.keys()].filter((id) => text.has(id)).map((id) => ({ id, text: text.get(id)!, judged: qrels.get(id)! }))];
  }),
);
const TOP = 8;
const share = (count: number, total: number) => `${count}/${total} (${total === 0 ? '—' : Math.round((100 * count) / total)} %)`;

console.log('| corpus | question gate | questions | half | expected | got | figure |');
console.log('|---|---|---|---|---|---|---|');
for (const set of sets) {
  const contentDir = path.join(workDir, set.name, 'content');
  const corpus = await loadCorpus(path.join(workDir, set.name, 'artifacts'), embedder);
  const recordOf = new Map(Object.entries(readImportMap(contentDir)));
  const gates: [string, number | undefined][] = [
    ['none (floors only)', 0],
    [`${corpus.retrieval.question_gate ?? 'none'} (the build's)`, undefined],
  ];
  for (const [gateLabel, questionGate] of gates) {
    const ask = async (text: string) =>
      (await retrieve(corpus, parseQueryParameters({ q: firstWords(text, 30).slice(0, 4000) }), questionGate === undefined ? {} : { questionGate })).hits;
    for (const half of ['A', 'B'] as const) await askHalf(set, half, gateLabel, ask, recordOf);
  }
}
process.exit(0);

async function askHalf(
  set: (typeof sets)[number],
  half: 'A' | 'B',
  gateLabel: string,
  ask: (text: string) => Promise<{ record: { id: string } }[]>,
  recordOf: Map<string, string>,
): Promise<void> {
  const own = questionsOf.get(set.name)!.filter((question) => halfOf(question.id) === half);
  let answered = 0;
  let found = 0;
  for (const question of own) {
    const hits = await ask(question.text);
    if (hits.length > 0) answered++;
    const wanted = new Set([...question.judged].filter(([, grade]) => grade > 0).map(([doc]) => recordOf.get(doc)));
    if (hits.slice(0, TOP).some((hit) => wanted.has(hit.record.id))) found++;
  }
  console.log(
    `| ${set.name} | ${gateLabel} | its own judged questions | ${half} | works | any work: ${share(answered, own.length)} | a judged work in the top ${TOP}: ${share(found, own.length)} |`,
  );
  const off: [string, string[]][] = [
    [
      'relevance-set.json off-corpus and Omnarai answers',
      judged.filter((question) => question.split === (half === 'A' ? 'calibrate' : 'holdout')).map((question) => question.question),
    ],
    ...sets
      .filter((other) => other !== set)
      .map((other): [string, string[]] => [
        `${other.name}'s judged questions (first 30 words)`,
        questionsOf
          .get(other.name)!
          .filter((question) => halfOf(question.id) === half)
          .map((question) => question.text),
      ]),
  ];
  for (const [label, texts] of off) {
    let empty = 0;
    for (const text of texts) if ((await ask(text)).length === 0) empty++;
    console.log(`| ${set.name} | ${gateLabel} | ${label} | ${half} | no_context | no_context: ${share(empty, texts.length)} | |`);
  }
}
