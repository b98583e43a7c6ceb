/**
 * Ablation harness for the retrieval figures in bench/README.md. It rebuilds the search
 * inputs in memory from the BEIR files the way the build does (titles as the importer sets
 * them, passages "<title>. <passage>" from core/search/chunk.ts), then scores many tunings
 * per load through the same createSearchIndex and retrieve() (core/retrieve.ts) as the API and
 * scripts/eval-beir.ts. Build-time choices the eval cannot vary (passage size, what is
 * embedded, tokenizer) are its `--passages` and per-config options.
 *
 *   npx tsx scripts/lib/beir-experiments.ts --data ../shared/benchmarks/arguana \
 *     --configs configs.json [--passages default|chunk:<target>:<max>|whole|whole-text] [--qrels <tsv>]
 *     [--query-words N]   (only the first N words of each query: a proxy for short questions)
 *
 * configs.json: an array of {label, ...SearchTuning fields, stemming?, stopWords?, titleInPassages?}.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { plainText } from '../../core/excerpt.ts';
import { retrieve } from '../../core/retrieve.ts';
import { buildFullTextIndex, loadFullTextIndex, type FullTextIndex } from '../../core/search/fulltext.ts';
import { createSearchIndex, type SearchTuning } from '../../core/search/search-index.ts';
import type { SearchChunk, SearchMeta, SearchRecord } from '../../core/search/types.ts';
import type { Corpus } from '../../api/load-artifacts.ts';
import { createUseLiteEmbedder } from '../../providers/embedder.ts';
import { evaluateRankings, parseCorpus, parseQrels, parseQueries, readMaybeGzip, titleFor, type BeirDoc, type MetricSummary } from './beir.ts';
import { benchmarkQuery, cachedEmbedder, EVAL_RETRIEVE, EVAL_TUNING, firstWords } from './beir-eval.ts';
import { chunkText } from '../../core/search/chunk.ts';
import { createEmbeddingCache } from './embedding-cache.ts';
import { pathsFromEnv } from '../../core/paths.ts';

export interface ExperimentConfig extends Partial<SearchTuning> {
  label?: string;
  stemming?: boolean;
  stopWords?: boolean;
  titleInPassages?: boolean;
}

/** Passages as the build makes them, or a variant: other chunk sizes, whole documents, no title. */
export function passagesFor(docs: readonly BeirDoc[], variant: string): { records: SearchRecord[]; chunks: SearchChunk[] } {
  const records: SearchRecord[] = docs.map((doc) => ({
    id: doc._id,
    kind: 'work',
    title: titleFor(doc),
    ring: 'curated',
    type: 'argument',
    layer: 'research',
    evidence: 'uncharacterized',
    contributors: ['BEIR'],
    date: '2021-04-17',
    excerpt: '',
    lineage: [],
  }));
  const chunks: SearchChunk[] = [];
  const sizes = /^chunk:(\d+):(\d+)$/.exec(variant);
  docs.forEach((doc, record) => {
    const body = plainText(doc.text);
    const title = records[record]!.title;
    if (variant === 'default') for (const passage of chunkText(body)) chunks.push({ record, text: `${title}. ${passage}` });
    else if (sizes) for (const passage of chunkText(body, Number(sizes[1]), Number(sizes[2]))) chunks.push({ record, text: `${title}. ${passage}` });
    else if (variant === 'whole') chunks.push({ record, text: `${title}. ${body}` });
    else if (variant === 'whole-text') chunks.push({ record, text: body });
    else throw new Error(`unknown --passages "${variant}"`);
  });
  return { records, chunks };
}

export async function runExperiments(options: {
  dataDir: string;
  qrelsFile: string;
  variant: string;
  configs: readonly ExperimentConfig[];
  cacheDir: string;
  /** Keep only the first N words of each query: a proxy for short questions. */
  queryWords?: number;
  log?: (line: string) => void;
}): Promise<{ label: string; summary: MetricSummary; msPerQuery: number }[]> {
  const log = options.log ?? (() => {});
  const docs = parseCorpus(readMaybeGzip(path.join(options.dataDir, 'corpus.jsonl.gz')));
  const queryText = new Map(parseQueries(readMaybeGzip(path.join(options.dataDir, 'queries.jsonl.gz'))).map((query) => [query._id, query.text]));
  const qrels = parseQrels(readFileSync(options.qrelsFile, 'utf8'));
  const queryIds = [...qrels.keys()].filter((id) => queryText.has(id));
  const { records, chunks } = passagesFor(docs, options.variant);

  const model = await createUseLiteEmbedder();
  const embedder = cachedEmbedder(model, options.cacheDir);
  const started = performance.now();
  const embedded = await createEmbeddingCache(options.cacheDir, model).embedAll(chunks.map((chunk) => chunk.text));
  log(`${options.variant}: ${chunks.length} passages, ${embedded.embedded} embedded in ${Math.round((performance.now() - started) / 1000)} s`);
  const vectors = new Float32Array(chunks.length * model.dims);
  embedded.vectors.forEach((vector, index) => vectors.set(vector, index * model.dims));
  const meta: SearchMeta = { embedder: { id: model.id, dims: model.dims }, records, chunk_records: chunks.map((chunk) => chunk.record), built_at: '' };
  const queries = queryIds.map((id) => ({ id, query: benchmarkQuery(firstWords(queryText.get(id)!, options.queryWords)).query }));
  await embedder.embed(queries.map((entry) => entry.query.cleanQuery));

  const fullTextIndexes = new Map<string, FullTextIndex>();
  const results = [];
  for (const config of options.configs) {
    const { label, stemming, stopWords, titleInPassages, ...tuning } = config;
    const key = JSON.stringify([stemming, stopWords, titleInPassages]);
    if (!fullTextIndexes.has(key)) {
      const data = await buildFullTextIndex(records, chunks, {
        ...(stemming !== undefined ? { stemming } : {}),
        ...(stopWords !== undefined ? { stopWords } : {}),
        ...(titleInPassages !== undefined ? { titleInPassages } : {}),
      });
      fullTextIndexes.set(key, await loadFullTextIndex(data));
    }
    const search = createSearchIndex({ meta, vectors, fullText: fullTextIndexes.get(key)!, embedder, tuning: { ...EVAL_TUNING, ...tuning } });
    // retrieve() reads only these fields of the corpus when no glyph is used.
    const corpus = { search, registry: { families: [], models: [] }, divergenceById: new Map() } as unknown as Corpus;
    const rankings = new Map<string, string[]>();
    const t0 = performance.now();
    for (const { id, query } of queries) {
      const { hits } = await retrieve(corpus, query, EVAL_RETRIEVE);
      rankings.set(
        id,
        hits
          .map((hit) => hit.record.id)
          .filter((doc) => doc !== id)
          .slice(0, 100),
      );
    }
    const msPerQuery = (performance.now() - t0) / queries.length;
    const summary = evaluateRankings(rankings, qrels, queryIds);
    const name = label ?? JSON.stringify(config);
    log(
      `${options.variant}${options.queryWords ? ` q≤${options.queryWords}w` : ''} | ${name} | nDCG@10 ${summary.ndcg10.toFixed(4)} | R@100 ${summary.recall100.toFixed(4)} | MRR@10 ${summary.mrr10.toFixed(4)} | ${msPerQuery.toFixed(1)} ms/q`,
    );
    results.push({ label: name, summary, msPerQuery });
  }
  return results;
}

const invokedDirectly = process.argv[1] !== undefined && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url);
if (invokedDirectly) {
  const { values } = parseArgs({
    options: {
      data: { type: 'string' },
      qrels: { type: 'string' },
      configs: { type: 'string' },
      passages: { type: 'string', default: 'default' },
      'query-words': { type: 'string' },
    },
  });
  if (!values.data || !values.configs) {
    console.error(
      'usage: beir-experiments --data <beir-dir> --configs <configs.json> [--passages default|chunk:<target>:<max>|whole|whole-text] [--qrels <tsv>] [--query-words N]',
    );
    process.exit(2);
  }
  runExperiments({
    dataDir: values.data,
    qrelsFile: values.qrels ?? path.join(values.data, 'qrels-dev.tsv'),
    variant: values.passages,
    configs: JSON.parse(readFileSync(values.configs, 'utf8')) as ExperimentConfig[],
    cacheDir: pathsFromEnv().cacheDir,
    ...(values['query-words'] ? { queryWords: Number(values['query-words']) } : {}),
    log: (line) => console.log(line),
  }).then(
    () => process.exit(0),
    (error: unknown) => {
      console.error(error);
      process.exit(1);
    },
  );
}
