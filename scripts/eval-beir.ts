/**
 * Scores the fast path's retrieval on a BEIR dataset imported with scripts/import-beir.ts:
 *
 *   npm run eval:beir -- --content /tmp/beir-arguana \
 *     --queries ../shared/benchmarks/arguana/queries.jsonl.gz \
 *     --qrels ../shared/benchmarks/arguana/qrels-dev.tsv [--artifacts <dir>] [--limit N] [--query-words N] [--json]
 *
 * Builds the content (embeddings cached in .cache/embeddings) unless --artifacts already
 * holds a build, then reports nDCG@10, Recall@100 and MRR@10 over the judged queries.
 * --tuning '<json>' overrides search tuning fields for experiments (see SearchTuning).
 */
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import type { SearchTuning } from '../core/search/search-index.ts';
import { runBeirEval, type BeirEvalResult } from './lib/beir-eval.ts';
import { formatQuality, resolveSet, runQuality } from './lib/beir-quality.ts';
import { exitWhenFlushed } from './lib/cli-exit.ts';
import { pathsFromEnv, REPO_ROOT } from '../core/paths.ts';

const USAGE = `usage: eval-beir --content <content-dir> --queries <queries.jsonl[.gz]> --qrels <qrels.tsv>
                 [--artifacts <dir>] [--rebuild] [--limit N] [--query-words N] [--tuning '<json>'] [--json]
       eval-beir --sets arguana,scifact[,<folder in BEIR layout>] [--grid] [--rebuild] [--limit N] [--work-dir <dir>] [--json]

  --sets       the quality report over several sets: each imported and built once into
               --work-dir (default .cache/beir-sets), then the build's default and its parts
               (words alone, with feedback, vectors alone, the engine's fixed default; --grid adds
               every fixed weight with and without feedback) on both halves of the judged
               queries, with bootstrap 95 % intervals and the paired difference to the engine's
               fixed default. A name is a folder under ../shared/benchmarks.

  --content    content folder written by import-beir (holds import-map.json)
  --queries    BEIR queries file
  --qrels      BEIR qrels TSV (query-id, corpus-id, score)
  --artifacts  build folder: reused when it holds a build, else built into
               (default .cache/beir/<content folder name>, always rebuilt)
  --rebuild    rebuild even when --artifacts holds a build
  --limit      score only the first N judged queries
  --query-words  keep only the first N words of each query (a proxy for short questions)
  --tuning     JSON overrides of the search tuning, e.g. '{"vectorWeight":0.5}'
  --json       print the result as JSON (without per-query rankings)`;

function format(result: BeirEvalResult, label: string): string {
  const lines = [
    `${label}: ${result.queries} queries`,
    `  nDCG@10     ${result.ndcg10.toFixed(4)}`,
    `  Recall@100  ${result.recall100.toFixed(4)}`,
    `  MRR@10      ${result.mrr10.toFixed(4)}`,
    ...(['A', 'B'] as const).map(
      (half) =>
        `  half ${half} (${result.halves[half].queries} queries): nDCG@10 ${result.halves[half].ndcg10.toFixed(4)}, Recall@100 ${result.halves[half].recall100.toFixed(4)}, MRR@10 ${result.halves[half].mrr10.toFixed(4)}`,
    ),
    `  build ${result.build === 'reused' ? 'reused' : `${Math.round(result.timings.buildMs / 1000)} s (${result.build.chunks} passages, ${result.build.embedded} embedded, ${result.build.cachedEmbeddings} cached)`}` +
      `; load ${Math.round(result.timings.loadMs)} ms; query embedding ${Math.round(result.timings.embedQueriesMs)} ms` +
      `; retrieval ${result.timings.queryMsMean.toFixed(1)} ms mean, ${result.timings.queryMsP95.toFixed(1)} ms p95`,
  ];
  if (result.truncatedQueries.length > 0)
    lines.push(`  ${result.truncatedQueries.length} queries cut to the API's 4000-character limit: ${result.truncatedQueries.join(', ')}`);
  if (result.missingQueries.length > 0) lines.push(`  ${result.missingQueries.length} judged queries have no text (scored 0)`);
  return lines.join('\n');
}

export async function runCli(argv: readonly string[]): Promise<number> {
  let values;
  try {
    ({ values } = parseArgs({
      args: [...argv],
      options: {
        content: { type: 'string' },
        queries: { type: 'string' },
        qrels: { type: 'string' },
        artifacts: { type: 'string' },
        rebuild: { type: 'boolean', default: false },
        limit: { type: 'string' },
        'query-words': { type: 'string' },
        tuning: { type: 'string' },
        json: { type: 'boolean', default: false },
        sets: { type: 'string' },
        grid: { type: 'boolean', default: false },
        'work-dir': { type: 'string' },
        help: { type: 'boolean', short: 'h', default: false },
      },
      strict: true,
      allowPositionals: false,
    }));
  } catch (error) {
    console.error(`eval-beir: ${(error as Error).message}\n${USAGE}`);
    return 2;
  }
  if (values.help) {
    console.log(USAGE);
    return 0;
  }
  if (values.sets !== undefined) return runSets(values);
  if (!values.content || !values.queries || !values.qrels) {
    console.error(`eval-beir: --content, --queries and --qrels are required\n${USAGE}`);
    return 2;
  }
  if (values.limit !== undefined && !/^\d+$/.test(values.limit)) {
    console.error(`eval-beir: --limit must be a whole number\n${USAGE}`);
    return 2;
  }
  const queryWords = values['query-words'];
  if (queryWords !== undefined && !/^[1-9]\d*$/.test(queryWords)) {
    console.error(`eval-beir: --query-words must be a positive whole number\n${USAGE}`);
    return 2;
  }
  let tuning: Partial<SearchTuning> | undefined;
  if (values.tuning !== undefined) {
    try {
      tuning = JSON.parse(values.tuning) as Partial<SearchTuning>;
    } catch (error) {
      console.error(`eval-beir: --tuning is not JSON: ${(error as Error).message}`);
      return 2;
    }
  }
  const contentDir = path.resolve(values.content);
  const defaultArtifacts = values.artifacts === undefined;
  const artifactsDir = path.resolve(values.artifacts ?? path.join(REPO_ROOT, '.cache', 'beir', path.basename(contentDir)));
  mkdirSync(path.dirname(artifactsDir), { recursive: true });
  const log = values.json ? (line: string) => console.error(line) : (line: string) => console.log(line);
  try {
    const result = await runBeirEval({
      contentDir,
      queriesFile: path.resolve(values.queries),
      qrelsFile: path.resolve(values.qrels),
      artifactsDir,
      cacheDir: pathsFromEnv().cacheDir,
      rebuild: values.rebuild || defaultArtifacts,
      ...(values.limit !== undefined ? { limit: Number(values.limit) } : {}),
      ...(queryWords !== undefined ? { queryWords: Number(queryWords) } : {}),
      ...(tuning ? { tuning } : {}),
      log,
    });
    if (values.json) {
      const { perQuery: _perQuery, ...rest } = result;
      console.log(JSON.stringify({ content: contentDir, qrels: path.resolve(values.qrels), tuning: tuning ?? {}, ...rest }, null, 2));
    } else {
      console.log(format(result, path.basename(contentDir)));
    }
    return 0;
  } catch (error) {
    console.error(`eval-beir: ${(error as Error).stack ?? (error as Error).message}`);
    return 1;
  }
}

async function runSets(values: { sets?: string; grid?: boolean; rebuild?: boolean; limit?: string; json?: boolean; 'work-dir'?: string }): Promise<number> {
  const log = values.json ? (line: string) => console.error(line) : (line: string) => console.log(line);
  if (values.limit !== undefined && !/^\d+$/.test(values.limit)) {
    console.error(`eval-beir: --limit must be a whole number\n${USAGE}`);
    return 2;
  }
  let sets;
  try {
    sets = values
      .sets!.split(',')
      .filter(Boolean)
      .map((spec) => resolveSet(spec, REPO_ROOT));
  } catch (error) {
    console.error(`eval-beir: ${(error as Error).message}`);
    return 2;
  }
  if (sets.length === 0) {
    console.error(`eval-beir: --sets names no set\n${USAGE}`);
    return 2;
  }
  try {
    const reports = await runQuality({
      sets,
      workDir: path.resolve(values['work-dir'] ?? path.join(REPO_ROOT, '.cache', 'beir-sets')),
      cacheDir: pathsFromEnv().cacheDir,
      grid: values.grid ?? false,
      rebuild: values.rebuild ?? false,
      ...(values.limit !== undefined ? { limit: Number(values.limit) } : {}),
      log,
    });
    console.log(values.json ? JSON.stringify(reports, null, 2) : formatQuality(reports));
    return 0;
  } catch (error) {
    console.error(`eval-beir: ${(error as Error).stack ?? (error as Error).message}`);
    return 1;
  }
}

const invokedDirectly = process.argv[1] !== undefined && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url);
if (invokedDirectly) {
  // TensorFlow keeps handles open: exit explicitly, once the report has drained.
  runCli(process.argv.slice(2)).then(exitWhenFlushed, (error: unknown) => {
    console.error(error);
    return exitWhenFlushed(1);
  });
}
