/**
 * One quality report over several BEIR-layout sets (npm run eval:beir -- --sets arguana,scifact):
 * each set imported and built once (embeddings cached), then the build's default and its parts
 * scored through the fast path's retrieve() on both fixed halves of the judged queries (A: where
 * settings may be tuned; B: never tuned on), with bootstrap 95 % intervals over queries and the
 * difference to the engine's fixed default paired per query. Any set in BEIR layout can be named
 * by its folder (a deployment's own judged questions too).
 */
import { existsSync, mkdirSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { artifactPaths } from '../../core/artifacts.ts';
import { PROBE_WEIGHTS } from '../../core/search/retrieval-choice.ts';
import { DEFAULT_TUNING, type SearchTuning } from '../../core/search/search-index.ts';
import { readRetrievalChoice } from '../../api/retrieval-choice-file.ts';
import type { Embedder } from '../../providers/embedder.ts';
import { importBeir } from '../import-beir.ts';
import { mrrAt, ndcgAt, parseQrels, recallAt, type Qrels } from './beir.ts';
import { halfOf, runBeirEval, type QueryHalf } from './beir-eval.ts';
import { bootstrapDifference, bootstrapMean, type Interval } from './bootstrap.ts';

/** Where named sets live: ../shared/benchmarks/<name>, beside the repository. */
export const SHARED_BENCHMARKS = path.join('..', 'shared', 'benchmarks');
/** The judgements a set folder may hold, in the order they are looked for. */
const QRELS_FILES = ['qrels-dev.tsv', 'qrels-train.tsv', 'qrels.tsv', 'qrels-test.tsv'];

export interface QualitySet {
  name: string;
  folder: string;
  queriesFile: string;
  qrelsFile: string;
}

/** A set named as "arguana" (../shared/benchmarks/arguana, from the repository) or by a folder in BEIR layout. */
export function resolveSet(spec: string, repoRoot: string): QualitySet {
  const named = /^[a-z0-9-]+$/i.test(spec) && !existsSync(spec);
  const folder = path.resolve(named ? path.join(repoRoot, SHARED_BENCHMARKS, spec) : spec);
  if (!existsSync(folder)) throw new Error(`no benchmark set at ${folder} (a name under ${SHARED_BENCHMARKS}, or a folder in BEIR layout)`);
  const queries = ['queries.jsonl.gz', 'queries.jsonl'].map((file) => path.join(folder, file)).find((file) => existsSync(file));
  if (!queries) throw new Error(`${folder} has no queries.jsonl[.gz]`);
  const qrels = QRELS_FILES.map((file) => path.join(folder, file)).find((file) => existsSync(file));
  if (!qrels) throw new Error(`${folder} has no judgements (${QRELS_FILES.join(', ')})`);
  return { name: path.basename(folder).toLowerCase(), folder, queriesFile: queries, qrelsFile: qrels };
}

export interface Variant {
  label: string;
  tuning: Partial<SearchTuning>;
  /** Part of the fixed grid the best single setting is read from. */
  grid?: boolean;
}

/** The engine's fixed default before settings were chosen per corpus: what every difference is paired against. */
export const ENGINE_DEFAULT: Partial<SearchTuning> = { vectorWeight: DEFAULT_TUNING.vectorWeight, feedbackDocs: DEFAULT_TUNING.feedbackDocs };

export function qualityVariants(grid: boolean): Variant[] {
  const variants: Variant[] = [
    { label: 'default (this build)', tuning: {} },
    { label: `engine default (fixed ${DEFAULT_TUNING.vectorWeight} + feedback)`, tuning: ENGINE_DEFAULT },
    { label: 'words (BM25) alone', tuning: { vectorWeight: 0, feedbackDocs: 0 } },
    { label: 'words + feedback', tuning: { vectorWeight: 0, feedbackDocs: DEFAULT_TUNING.feedbackDocs } },
    { label: 'vectors alone', tuning: { vectorWeight: 1, feedbackDocs: 0 } },
  ];
  if (grid) {
    for (const vectorWeight of PROBE_WEIGHTS) {
      if (vectorWeight === 0) continue;
      variants.push({ label: `fixed ${vectorWeight} + feedback`, tuning: { vectorWeight, feedbackDocs: DEFAULT_TUNING.feedbackDocs }, grid: true });
      variants.push({ label: `fixed ${vectorWeight}, no feedback`, tuning: { vectorWeight, feedbackDocs: 0 }, grid: true });
    }
  }
  return variants;
}

export interface HalfFigures {
  queries: number;
  ndcg10: Interval;
  recall100: number;
  mrr10: number;
  /** nDCG@10 minus the engine default's on the same queries. */
  versusEngineDefault: Interval;
}

export interface VariantFigures {
  label: string;
  tuning: Partial<SearchTuning>;
  grid: boolean;
  halves: Record<QueryHalf, HalfFigures>;
}

export interface SetReport {
  set: QualitySet;
  queries: number;
  /** The build's own choice (data/search/retrieval.json). */
  choice: string;
  variants: VariantFigures[];
}

interface PerQuery {
  ndcg10: number[];
  recall100: number[];
  mrr10: number[];
}

function perQueryMetrics(ranked: ReadonlyMap<string, readonly string[]>, qrels: Qrels, ids: readonly string[]): PerQuery {
  const empty = new Map<string, number>();
  return {
    ndcg10: ids.map((id) => ndcgAt(ranked.get(id) ?? [], qrels.get(id) ?? empty, 10)),
    recall100: ids.map((id) => recallAt(ranked.get(id) ?? [], qrels.get(id) ?? empty, 100)),
    mrr10: ids.map((id) => mrrAt(ranked.get(id) ?? [], qrels.get(id) ?? empty, 10)),
  };
}

const average = (values: readonly number[]) => (values.length === 0 ? 0 : values.reduce((sum, value) => sum + value, 0) / values.length);

export async function runQuality(options: {
  sets: readonly QualitySet[];
  workDir: string;
  cacheDir: string;
  grid: boolean;
  rebuild: boolean;
  /** Only these variants (qualityVariants' labels); the engine default is always scored, as the pairing's baseline. */
  only?: readonly string[];
  embedder?: Embedder;
  limit?: number;
  log: (line: string) => void;
}): Promise<SetReport[]> {
  const reports: SetReport[] = [];
  for (const set of options.sets) {
    const contentDir = path.join(options.workDir, set.name, 'content');
    const artifactsDir = path.join(options.workDir, set.name, 'artifacts');
    if (!existsSync(path.join(contentDir, 'import-map.json'))) {
      mkdirSync(contentDir, { recursive: true });
      if (readdirSync(contentDir).length > 0) throw new Error(`${contentDir} holds an unfinished import: remove it and run again`);
      importBeir({ from: set.folder, out: contentDir, name: set.name, log: options.log });
    }
    const qrels = parseQrels(readFileSync(set.qrelsFile, 'utf8'));
    const variants = qualityVariants(options.grid).filter(
      (variant, at) => at === 0 || variant.tuning === ENGINE_DEFAULT || !options.only || options.only.includes(variant.label),
    );
    const results: { variant: Variant; ranked: Map<string, string[]>; ids: string[] }[] = [];
    for (const [at, variant] of variants.entries()) {
      const result = await runBeirEval({
        contentDir,
        queriesFile: set.queriesFile,
        qrelsFile: set.qrelsFile,
        artifactsDir,
        cacheDir: options.cacheDir,
        rebuild: at === 0 && (options.rebuild || !existsSync(artifactPaths(artifactsDir).manifest)),
        tuning: variant.tuning,
        ...(options.limit !== undefined ? { limit: options.limit } : {}),
        ...(options.embedder ? { embedder: options.embedder } : {}),
        log: at === 0 ? options.log : () => {},
      });
      options.log(
        `${set.name} | ${variant.label} | nDCG@10 ${result.ndcg10.toFixed(4)} (A ${result.halves.A.ndcg10.toFixed(4)}, B ${result.halves.B.ndcg10.toFixed(4)})`,
      );
      results.push({ variant, ranked: new Map(result.perQuery.map((entry) => [entry.id, entry.ranked])), ids: result.perQuery.map((entry) => entry.id) });
    }
    const ids = results[0]!.ids;
    const halfIds: Record<QueryHalf, string[]> = { A: ids.filter((id) => halfOf(id) === 'A'), B: ids.filter((id) => halfOf(id) === 'B') };
    const baseline = results.find((entry) => entry.variant.tuning === ENGINE_DEFAULT)!;
    const figures: VariantFigures[] = results.map(({ variant, ranked }) => {
      const halves = {} as Record<QueryHalf, HalfFigures>;
      for (const half of ['A', 'B'] as const) {
        const mine = perQueryMetrics(ranked, qrels, halfIds[half]);
        const theirs = perQueryMetrics(baseline.ranked, qrels, halfIds[half]);
        halves[half] = {
          queries: halfIds[half].length,
          ndcg10: bootstrapMean(mine.ndcg10),
          recall100: average(mine.recall100),
          mrr10: average(mine.mrr10),
          versusEngineDefault: bootstrapDifference(mine.ndcg10, theirs.ndcg10),
        };
      }
      return { label: variant.label, tuning: variant.tuning, grid: variant.grid ?? false, halves };
    });
    const choice = readRetrievalChoice(artifactPaths(artifactsDir).searchRetrieval);
    reports.push({ set, queries: ids.length, choice: choice ? `${choice.source}: ${choice.note}` : 'none recorded', variants: figures });
  }
  return reports;
}

function interval(value: Interval, signed = false): string {
  const number = (x: number) => (signed && x >= 0 ? '+' : '') + x.toFixed(4);
  return `${number(value.mean)} [${number(value.low)}, ${number(value.high)}]`;
}

/** The report as Markdown tables, one a set, as bench/README.md records it. */
export function formatQuality(reports: readonly SetReport[]): string {
  const lines: string[] = [];
  for (const report of reports) {
    const { A, B } = report.variants[0]!.halves;
    lines.push(
      `### ${report.set.name} — ${report.queries} judged queries (${path.basename(report.set.qrelsFile)}); half A ${A.queries} (tune), half B ${B.queries} (never tuned on)`,
      '',
      `Build's choice: ${report.choice}`,
      '',
      '| variant | A nDCG@10 [95 % CI] | A R@100 | A MRR@10 | **B nDCG@10** [95 % CI] | B R@100 | B MRR@10 | B − engine default, paired [95 % CI] |',
      '|---|---|---|---|---|---|---|---|',
    );
    for (const variant of report.variants) {
      const a = variant.halves.A;
      const b = variant.halves.B;
      lines.push(
        `| ${variant.label} | ${interval(a.ndcg10)} | ${a.recall100.toFixed(4)} | ${a.mrr10.toFixed(4)} | ${interval(b.ndcg10)} | ${b.recall100.toFixed(4)} | ${b.mrr10.toFixed(4)} | ${interval(b.versusEngineDefault, true)} |`,
      );
    }
    // Every variant but the build's own is one fixed setting.
    const fixed = report.variants.slice(1);
    if (fixed.length > 1) {
      for (const half of ['A', 'B'] as const) {
        const best = fixed.reduce((x, y) => (y.halves[half].ndcg10.mean > x.halves[half].ndcg10.mean ? y : x));
        lines.push('', `Best single fixed setting on half ${half}: ${best.label}, nDCG@10 ${best.halves[half].ndcg10.mean.toFixed(4)}.`);
      }
    }
    lines.push('');
  }
  return lines.join('\n');
}
