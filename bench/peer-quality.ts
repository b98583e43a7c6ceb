/**
 * Retrieval quality through each engine (issue 44): nDCG@10 on the B halves of the judged sets
 * (ArguAna dev, SciFact train; the halves of scripts/lib/beir-eval.ts `halfOf`, never tuned on),
 * Polyphony's search as each corpus's build chose it beside LanceDB over the same passages and
 * vectors (bench/peer.ts builds its table and indexes in a process of its own):
 *   - LanceDB's vector side alone, its full-text side alone, and its hybrid with its own RRF reranker;
 *   - our fusion over LanceDB's two candidate lists: each side's scores as z-scores over the
 *     records either list holds (a record absent from a list gets that list's lowest), mixed
 *     with the weight this corpus's build chose for the vector side (retrieval-choice.ts).
 * A record's best passage stands for it; the question itself is dropped from its ranking, as
 * BEIR does for ArguAna. Questions are embedded once through the same cache as `eval:beir`.
 *
 *   npx tsx bench/peer-quality.ts [--sets arguana,scifact] [--work-dir .cache/beir-sets]
 *
 * The sets' builds are `npm run eval:beir -- --sets <set>`'s (under --work-dir); run that first.
 */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { pathToFileURL } from 'node:url';
import { artifactPaths } from '../core/artifacts.ts';
import { REPO_ROOT } from '../core/paths.ts';
import { readRetrievalChoice } from '../api/retrieval-choice-file.ts';
import { createUseLiteEmbedder } from '../providers/embedder.ts';
import { pathsFromEnv } from '../core/paths.ts';
import { benchmarkQuery, cachedEmbedder, halfOf, readImportMap, runBeirEval } from '../scripts/lib/beir-eval.ts';
import { evaluateRankings, parseQrels, parseQueries, readMaybeGzip } from '../scripts/lib/beir.ts';
import { resolveSet } from '../scripts/lib/beir-quality.ts';
import { buildLanceInChild, LANCE_ENV } from './peer.ts';

/** Passages asked of each LanceDB list: enough for 100 distinct records on these corpora. */
const PASSAGES_ASKED = 400;
const DEPTH = 100;

interface Row {
  record: string;
  _distance?: number;
  _score?: number;
}

/** Record ids in order of their best passage, the question's own record left out, as BEIR sources. */
function rankRecords(rows: readonly Row[], sourceOf: ReadonlyMap<string, string>, self: string): string[] {
  const out: string[] = [];
  const seen = new Set<string>();
  for (const row of rows) {
    const source = sourceOf.get(row.record);
    if (source === undefined || source === self || seen.has(source)) continue;
    seen.add(source);
    out.push(source);
    if (out.length === DEPTH) break;
  }
  return out;
}

/** Each record's best value in a list (higher is better), by record id. */
function bestByRecord(rows: readonly Row[], value: (row: Row) => number): Map<string, number> {
  const best = new Map<string, number>();
  for (const row of rows) best.set(row.record, Math.max(best.get(row.record) ?? -Infinity, value(row)));
  return best;
}

/** Z-scores of both lists over the records either holds, mixed with the vector side's weight (a record missing from a list: that list's lowest). */
function fuseLists(vector: Map<string, number>, words: Map<string, number>, vectorWeight: number): string[] {
  const records = [...new Set([...vector.keys(), ...words.keys()])];
  const standardised = (side: Map<string, number>) => {
    const floor = Math.min(...side.values());
    const values = records.map((record) => side.get(record) ?? floor);
    const mean = values.reduce((sum, value) => sum + value, 0) / Math.max(values.length, 1);
    const deviation = Math.sqrt(values.reduce((sum, value) => sum + (value - mean) ** 2, 0) / Math.max(values.length, 1)) || 1;
    return values.map((value) => (value - mean) / deviation);
  };
  const v = vector.size > 0 ? standardised(vector) : records.map(() => 0);
  const w = words.size > 0 ? standardised(words) : records.map(() => 0);
  return records
    .map((record, at) => ({ record, score: vectorWeight * v[at]! + (1 - vectorWeight) * w[at]! }))
    .sort((a, b) => b.score - a.score || (a.record < b.record ? -1 : 1))
    .map((entry) => entry.record);
}

async function qualityOf(spec: string, workDir: string) {
  const set = resolveSet(spec, REPO_ROOT);
  const contentDir = path.join(workDir, set.name, 'content');
  const artifactsDir = path.join(workDir, set.name, 'artifacts');
  if (!existsSync(artifactPaths(artifactsDir).manifest))
    throw new Error(`no build of ${set.name} in ${artifactsDir}: run npm run eval:beir -- --sets ${set.name} first`);
  const cacheDir = pathsFromEnv().cacheDir;
  const model = await createUseLiteEmbedder({});
  const ours = await runBeirEval({
    contentDir,
    queriesFile: set.queriesFile,
    qrelsFile: set.qrelsFile,
    artifactsDir,
    cacheDir,
    rebuild: false,
    tuning: {},
    embedder: model,
  });
  const qrels = parseQrels(readFileSync(set.qrelsFile, 'utf8'));
  const bIds = [...qrels.keys()].filter((id) => halfOf(id) === 'B');
  const text = new Map(parseQueries(readMaybeGzip(set.queriesFile)).map((query) => [query._id, query.text]));
  const sourceOf = new Map(Object.entries(readImportMap(contentDir)).map(([source, record]) => [record, source]));
  const asked = bIds.filter((id) => text.has(id)).map((id) => ({ id, q: benchmarkQuery(text.get(id)!).query.cleanQuery }));
  const vectors = await cachedEmbedder(model, cacheDir).embed(asked.map((entry) => entry.q));

  const lanceDir = path.join(workDir, set.name, 'lance');
  await buildLanceInChild(artifactsDir, lanceDir);
  Object.assign(process.env, LANCE_ENV);
  const lancedb = await import('@lancedb/lancedb');
  const table = await (await lancedb.connect(lanceDir)).openTable('passages');
  const reranker = await lancedb.rerankers.RRFReranker.create();
  const weight = readRetrievalChoice(artifactPaths(artifactsDir).searchRetrieval)?.vector_weight ?? 0.6;
  const lists = {
    vector: new Map<string, string[]>(),
    words: new Map<string, string[]>(),
    hybrid: new Map<string, string[]>(),
    fused: new Map<string, string[]>(),
  };
  for (const [at, { id, q }] of asked.entries()) {
    const vector = Array.from(vectors[at]!);
    const byVector = (await table.vectorSearch(vector).distanceType('cosine').select(['record']).limit(PASSAGES_ASKED).toArray()) as Row[];
    const byWords = (await table.search(q, 'fts', 'text').select(['record']).limit(PASSAGES_ASKED).toArray()) as Row[];
    const hybrid = (await table
      .query()
      .nearestTo(vector)
      .distanceType('cosine')
      .fullTextSearch(q)
      .rerank(reranker)
      .select(['record'])
      .limit(PASSAGES_ASKED)
      .toArray()) as Row[];
    lists.vector.set(id, rankRecords(byVector, sourceOf, id));
    lists.words.set(id, rankRecords(byWords, sourceOf, id));
    lists.hybrid.set(id, rankRecords(hybrid, sourceOf, id));
    const fused = fuseLists(
      bestByRecord(byVector, (row) => -(row._distance ?? 2)),
      bestByRecord(byWords, (row) => row._score ?? 0),
      weight,
    );
    lists.fused.set(
      id,
      rankRecords(
        fused.map((record) => ({ record })),
        sourceOf,
        id,
      ),
    );
  }
  const b = (rankings: Map<string, string[]>) => evaluateRankings(rankings, qrels, bIds).ndcg10;
  return {
    set: set.name,
    queries: bIds.length,
    weight,
    ours: ours.halves.B.ndcg10,
    lance: { vector: b(lists.vector), words: b(lists.words), hybrid: b(lists.hybrid), fused: b(lists.fused) },
  };
}

async function main() {
  const { values } = parseArgs({
    options: { sets: { type: 'string', default: 'arguana,scifact' }, 'work-dir': { type: 'string', default: path.join(REPO_ROOT, '.cache', 'beir-sets') } },
  });
  console.log(
    "| set (B half) | queries | Polyphony (as built) | LanceDB vector | LanceDB full text | LanceDB hybrid (RRF) | our z-score fusion over LanceDB's lists |",
  );
  console.log('|---|---|---|---|---|---|---|');
  for (const spec of values.sets.split(',')) {
    const r = await qualityOf(spec, path.resolve(values['work-dir']));
    const cell = (value: number) => `${value.toFixed(4)} (${(value - r.ours >= 0 ? '+' : '') + (value - r.ours).toFixed(4)})`;
    console.log(
      `| ${r.set} | ${r.queries} | ${r.ours.toFixed(4)} | ${cell(r.lance.vector)} | ${cell(r.lance.words)} | ${cell(r.lance.hybrid)} | ${cell(r.lance.fused)} (vector weight ${r.weight}) |`,
    );
  }
  process.exit(0);
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) void main();
