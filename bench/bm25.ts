/**
 * The lexical side at scale (issue 30): BM25 over 100k and 1M synthetic passages, the
 * exhaustive `scores()` (every posting of the query's terms) beside the exact scores of a
 * shortlist (`scoresOf()`, the feedback's pool), timed in the same run. (A MaxScore top k was
 * measured here beside them until issue 44 removed it: slower than the exhaustive scores.)
 *
 * The passages are made of sentences of the real ArguAna arguments in ../shared (read at run
 * time), drawn seeded until about 160 words, as the build's passages; four passages a record.
 * A passage's sentences come from one debate (ArguAna's ids name it), so a passage keeps a
 * topic, as real text does: sentences drawn from the whole corpus make every passage look
 * alike to a query, which flatters no method but is not what a search meets.
 * Each distinct sentence is tokenized once and the postings are packed straight into typed
 * arrays (the in-memory FullTextData of a million passages would not fit in a JavaScript
 * heap), so the index is the one `loadBm25Index` serves from fulltext.bin (passages only,
 * as the build's).
 *
 * Queries: ArguAna's arguments (long, ~200 words) and their first 5-10 words (short questions).
 * Per query: the exhaustive scores and scoresOf 2000 records (the size of the default
 * feedback pool); median and p95 ms, each as a ratio of the exhaustive one.
 *
 *   npx tsx bench/bm25.ts [--sizes 10000,100000,1000000] [--queries 60]
 */
import path from 'node:path';
import { parseArgs } from 'node:util';
import { pathToFileURL } from 'node:url';
import { loadBm25Index, type FullTextIndex, type FullTextQueryOptions, type PackedFullText } from '../core/search/bm25.ts';
import { createTermTokenizer } from '../core/search/tokenizer.ts';
import { seededRandom } from '../core/random.ts';
import { REPO_ROOT } from '../core/paths.ts';
import { parseCorpus, parseQueries, readMaybeGzip } from '../scripts/lib/beir.ts';
import { DEFAULT_TUNING } from '../core/search/search-index.ts';
import { ms, percentile, ratio } from './lib.ts';

const ARGUANA = process.env.BEIR_ARGUANA_DIR ?? path.resolve(REPO_ROOT, '../shared/benchmarks/arguana');
const OPTIONS: FullTextQueryOptions = { text: DEFAULT_TUNING.bm25 };
const PASSAGE_WORDS = 160;
const PASSAGES_PER_RECORD = 4;

/** ArguAna's sentences of at least five words, grouped by debate (a debate's sentences are sentences[starts[d] .. starts[d + 1])). */
function debateSentences(): { sentences: string[]; starts: number[] } {
  const debates = new Map<string, string[]>();
  for (const doc of parseCorpus(readMaybeGzip(path.join(ARGUANA, 'corpus.jsonl.gz')))) {
    const debate = doc._id.replace(/-[^-]+$/, '');
    let sentences = debates.get(debate);
    if (!sentences) debates.set(debate, (sentences = []));
    sentences.push(...doc.text.split(/(?<=[.!?])\s+/).filter((sentence) => sentence.split(/\s+/).length >= 5));
  }
  const sentences: string[] = [];
  const starts = [0];
  for (const group of debates.values()) {
    if (group.length === 0) continue;
    sentences.push(...group);
    starts.push(sentences.length);
  }
  return { sentences, starts };
}

/** The sentences as term ids with counts, and the dictionary. */
async function tokenizedPool({ sentences, starts }: { sentences: string[]; starts: number[] }) {
  const tokenize = await createTermTokenizer();
  const ids = new Map<string, number>();
  const terms: string[] = [];
  const pool = sentences.map((sentence) => {
    const counts = new Map<number, number>();
    for (const token of tokenize(sentence)) {
      let id = ids.get(token);
      if (id === undefined) ids.set(token, (id = terms.push(token) - 1));
      counts.set(id, (counts.get(id) ?? 0) + 1);
    }
    return { words: sentence.split(/\s+/).length, terms: Uint32Array.from(counts.keys()), counts: Uint32Array.from(counts.values()) };
  });
  return { pool, terms, starts };
}

type Pool = Awaited<ReturnType<typeof tokenizedPool>>;

/** Packs `passages` synthetic passages into the loaded index's typed arrays (two passes, no per-passage objects). */
function syntheticIndex({ pool, terms, starts }: Pool, passages: number, seed: number): PackedFullText {
  const next = seededRandom(seed);
  const sentenceStarts = new Uint32Array(passages + 1);
  const sentenceIds: number[] = [];
  for (let passage = 0; passage < passages; passage++) {
    let words = 0;
    const debate = Math.floor(next() * (starts.length - 1));
    const from = starts[debate]!;
    const size = starts[debate + 1]! - from;
    while (words < PASSAGE_WORDS) {
      const id = from + Math.floor(next() * size);
      sentenceIds.push(id);
      words += pool[id]!.words;
    }
    sentenceStarts[passage + 1] = sentenceIds.length;
  }
  const tf = new Uint32Array(terms.length);
  const touched: number[] = [];
  /** Calls `visit(term, tf)` for each distinct term of a passage; returns its length in terms. */
  const eachTerm = (passage: number, visit: (term: number, count: number) => void): number => {
    let length = 0;
    for (let at = sentenceStarts[passage]!; at < sentenceStarts[passage + 1]!; at++) {
      const sentence = pool[sentenceIds[at]!]!;
      sentence.terms.forEach((term, i) => {
        if (tf[term] === 0) touched.push(term);
        tf[term] = tf[term]! + sentence.counts[i]!;
        length += sentence.counts[i]!;
      });
    }
    for (const term of touched) {
      visit(term, tf[term]!);
      tf[term] = 0;
    }
    touched.length = 0;
    return length;
  };
  const df = new Uint32Array(terms.length);
  const lengths = new Uint32Array(passages);
  for (let passage = 0; passage < passages; passage++) lengths[passage] = eachTerm(passage, (term) => (df[term] = df[term]! + 1));
  const offsets = new Uint32Array(terms.length + 1);
  for (let term = 0; term < terms.length; term++) offsets[term + 1] = offsets[term]! + 2 * df[term]!;
  const postings = new Uint32Array(offsets[terms.length]!);
  const fill = offsets.slice(0, terms.length);
  for (let passage = 0; passage < passages; passage++) {
    eachTerm(passage, (term, count) => {
      postings[fill[term]!] = passage;
      postings[fill[term]! + 1] = count;
      fill[term] = fill[term]! + 2;
    });
  }
  const records = Math.ceil(passages / PASSAGES_PER_RECORD);
  return {
    stemming: true,
    stopWords: true,
    recordCount: records,
    chunkRecords: Uint32Array.from({ length: passages }, (_, passage) => Math.floor(passage / PASSAGES_PER_RECORD)),
    text: { lengths, terms, offsets, postings },
  };
}

const bytesOf = (packed: PackedFullText) =>
  [packed.chunkRecords, packed.text.lengths, packed.text.offsets, packed.text.postings].reduce((sum, array) => sum + array.byteLength, 0);

interface Timings {
  exhaustive: number[];
  scoresOf: number[];
}

function timeQueries(index: FullTextIndex, queries: readonly string[], records: number, seed: number): Timings {
  const next = seededRandom(seed);
  const timings: Timings = { exhaustive: [], scoresOf: [] };
  const clock = <T>(work: () => T, into: number[]): T => {
    const started = performance.now();
    const result = work();
    into.push(performance.now() - started);
    return result;
  };
  for (const query of queries) {
    const shortlist = Uint32Array.from({ length: 2000 }, () => Math.floor(next() * records));
    // The order rotates so neither path always runs on a cache the other warmed.
    const scores = clock(() => index.scores(query, OPTIONS), timings.exhaustive);
    const exact = clock(() => index.scoresOf(query, OPTIONS, shortlist), timings.scoresOf);
    if (exact.some((score, i) => score !== scores[shortlist[i]!])) throw new Error(`scoresOf and scores disagree on "${query.slice(0, 40)}"`);
  }
  return timings;
}

function report(label: string, timings: Timings): void {
  const median = (values: number[]) => percentile(values, 50);
  const p95 = (values: number[]) => percentile(values, 95);
  const reference = { median: median(timings.exhaustive), p95: p95(timings.exhaustive) };
  const row = (name: string, values: number[]) =>
    `  ${name.padEnd(22)} median ${ms(median(values)).padStart(9)} (${ratio(median(values), reference.median)})  p95 ${ms(p95(values)).padStart(9)} (${ratio(p95(values), reference.p95)})`;
  console.log(`${label} (${timings.exhaustive.length} queries)`);
  console.log(row('exhaustive scores()', timings.exhaustive));
  console.log(row('scoresOf(2000 records)', timings.scoresOf));
}

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { sizes: { type: 'string', default: '10000,100000,1000000' }, queries: { type: 'string', default: '60' } } });
  const sizes = values.sizes.split(',').map(Number);
  const count = Number(values.queries);
  const pool = await tokenizedPool(debateSentences());
  const next = seededRandom(30);
  const all = parseQueries(readMaybeGzip(path.join(ARGUANA, 'queries.jsonl.gz')));
  const long = Array.from({ length: count }, () => all[Math.floor(next() * all.length)]!.text);
  const short = long.map((text) =>
    text
      .split(/\s+/)
      .slice(0, 5 + Math.floor(next() * 6))
      .join(' '),
  );
  console.log(
    `BM25 at scale: ${pool.pool.length} ArguAna sentences in ${pool.starts.length - 1} debates, ${pool.terms.length} terms; machine shared (2 cores), figures are ratios within one run`,
  );
  for (const size of sizes) {
    const started = performance.now();
    const packed = syntheticIndex(pool, size, size);
    const index = await loadBm25Index(packed);
    const heapBefore = process.memoryUsage().heapUsed;
    index.scoresOf('warm', OPTIONS, [0]); // builds the record → passages table, measured below
    console.log(
      `\n${size} passages: index ${(bytesOf(packed) / 2 ** 20).toFixed(0)} MiB of typed arrays (${(packed.text.postings.length / 2 / size).toFixed(1)} postings a passage), built in ${((performance.now() - started) / 1000).toFixed(1)} s; record → passages table for scoresOf ${(((size + size / PASSAGES_PER_RECORD) * 4) / 2 ** 20).toFixed(1)} MiB`,
    );
    timeQueries(index, long.slice(0, 5), packed.recordCount, 1); // warm-up: JIT
    report('  long queries (ArguAna arguments)', timeQueries(index, long, packed.recordCount, 2));
    report('  short questions (5-10 words)', timeQueries(index, short, packed.recordCount, 3));
    console.log(`  heap growth over the queries (garbage): ${((process.memoryUsage().heapUsed - heapBefore) / 2 ** 20).toFixed(0)} MiB`);
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) void main();
