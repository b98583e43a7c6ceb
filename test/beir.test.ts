import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { createUseLiteEmbedder } from '../providers/embedder.ts';
import { importBeir, runCli as importCli } from '../scripts/import-beir.ts';
import {
  buildBeirContent,
  evaluateRankings,
  mrrAt,
  ndcgAt,
  parseCorpus,
  parseIdList,
  parseQrels,
  readMaybeGzip,
  recallAt,
  selectSubset,
  titleFor,
} from '../scripts/lib/beir.ts';
import { benchmarkQuery, EVAL_DEPTH, firstWords, halfOf, runBeirEval } from '../scripts/lib/beir-eval.ts';
import { parseMarkdown } from '../content-files/frontmatter.ts';
import { loadContent } from '../content-files/load-content.ts';
import { pathsFromEnv } from '../core/paths.ts';
import { tempDir } from '../devkit/app.ts';
import { haveFixtures, sharedPath } from './helpers/shared-fixtures.ts';

const judged = (entries: Record<string, number>) => new Map(Object.entries(entries));
/** 1 / log2(rank + 1), the discount of rank `rank` (1-based). */
const d = (rank: number) => 1 / Math.log2(rank + 1);

describe('BEIR metrics (hand-computed)', () => {
  it('nDCG@10 with linear gain and log2 discount', () => {
    // relevant at ranks 2 and 4 of 2 relevant: (1/log2 3 + 1/log2 5) / (1 + 1/log2 3)
    expect(ndcgAt(['x', 'a', 'y', 'b'], judged({ a: 1, b: 1 }), 10)).toBeCloseTo(0.650921, 6);
    expect((d(2) + d(4)) / (1 + d(2))).toBeCloseTo(0.650921, 6);
    // graded: grade 1 first, grade 2 second, against the ideal 2 then 1
    expect(ndcgAt(['b', 'a'], judged({ a: 2, b: 1 }), 10)).toBeCloseTo(0.859719, 6);
    // a judged document that is not retrieved still counts in the ideal
    expect(ndcgAt(['a'], judged({ a: 1, z: 1 }), 10)).toBeCloseTo(0.613147, 6);
    expect(ndcgAt(['x', 'y', 'a'], judged({ a: 1, b: 1, c: 1 }), 10)).toBeCloseTo(0.234639, 6);
    // cut-off, grade 0, duplicates, nothing relevant
    expect(ndcgAt(['x', 'a'], judged({ a: 1 }), 1)).toBe(0);
    expect(ndcgAt(['a'], judged({ a: 0 }), 10)).toBe(0);
    expect(ndcgAt(['a', 'a'], judged({ a: 1, b: 1 }), 10)).toBeCloseTo(1 / (1 + d(2)), 6);
    expect(ndcgAt([], judged({ a: 1 }), 10)).toBe(0);
    expect(ndcgAt(['a', 'b'], judged({ a: 1, b: 1 }), 10)).toBe(1);
  });

  it('Recall@k and MRR@k', () => {
    expect(recallAt(['x', 'a', 'y', 'b'], judged({ a: 1, b: 1 }), 100)).toBe(1);
    expect(recallAt(['x', 'a', 'y', 'b'], judged({ a: 1, b: 1 }), 2)).toBe(0.5);
    expect(recallAt(['a'], judged({ a: 1, z: 1, n: 0 }), 100)).toBe(0.5);
    expect(recallAt(['a', 'a'], judged({ a: 1, b: 1 }), 100)).toBe(0.5);
    expect(mrrAt(['x', 'a', 'y', 'b'], judged({ a: 1, b: 1 }), 10)).toBe(0.5);
    const ten = Array.from({ length: 9 }, (_, i) => `x${i}`);
    expect(mrrAt([...ten, 'a'], judged({ a: 1 }), 10)).toBeCloseTo(0.1, 10);
    expect(mrrAt([...ten, 'y', 'a'], judged({ a: 1 }), 10)).toBe(0);
    expect(mrrAt(['a'], judged({ a: 0 }), 10)).toBe(0);
  });

  it('averages over the judged queries, a query without a ranking scoring 0', () => {
    const qrels = parseQrels('query-id\tcorpus-id\tscore\nq1\ta\t1\nq1\tb\t1\nq2\tc\t1\n');
    const summary = evaluateRankings(new Map([['q1', ['x', 'a', 'y', 'b']]]), qrels);
    expect(summary.queries).toBe(2);
    expect(summary.ndcg10).toBeCloseTo(0.650921 / 2, 6);
    expect(summary.recall100).toBeCloseTo(0.5, 10);
    expect(summary.mrr10).toBeCloseTo(0.25, 10);
  });

  it('parses qrels with or without a header, and id lists', () => {
    expect([...parseQrels('q1\td1\t1\nq1\td2\t0\n').get('q1')!]).toEqual([
      ['d1', 1],
      ['d2', 0],
    ]);
    expect(() => parseQrels('q1 d1\n')).toThrow(/qrels line 1/);
    expect(parseIdList('# subset\na\n\n b \n')).toEqual(['a', 'b']);
  });
});

function writeCorpus(dir: string, docs: object[]): string {
  mkdirSync(dir, { recursive: true });
  const file = path.join(dir, 'corpus.jsonl.gz');
  writeFileSync(file, gzipSync(`${docs.map((doc) => JSON.stringify(doc)).join('\n')}\n`));
  return file;
}

describe('import:beir', () => {
  const docs = [
    { _id: 'doc-1', title: 'tides harbour', text: 'Tides rise twice a day.' },
    { _id: 'doc-2', title: '', text: 'A text with *markdown*, "quotes", a colon: and [1] brackets,\nnew lines\n\nand   paragraphs.  ' },
    { _id: 'q-3', title: '', text: 'Unicode — “curly” quotes and émigré words, more than twelve words long, so the title is cut there.' },
    { _id: 'doc-4', title: 'bread', text: '---\nnot frontmatter: a rule line first' },
  ];

  it('writes one valid work per document, the text verbatim, and an import map', () => {
    const from = path.join(tempDir('beir-src'), 'tinyset');
    writeCorpus(from, docs);
    const out = path.join(tempDir('beir-out'), 'content');
    const summary = importBeir({ from, out });
    expect(summary.documents).toBe(4);
    expect(summary.notVerbatim).toEqual([]);

    const content = loadContent(out); // validates every file against the schemas
    expect(content.site).toMatchObject({ id_prefix: 'BEIR', slug: 'beir-tinyset', demo: false });
    expect(content.registry.families).toEqual([{ name: 'None', lab: 'n/a', aliases: [], fictional: false }]);
    expect(content.registry.models).toEqual([]);
    expect(content.claims).toEqual([]);
    expect(Object.keys(content.pages).sort()).toEqual(['context', 'evidence-status', 'for-future-models', 'limitations']);

    const map = JSON.parse(readFileSync(path.join(out, 'import-map.json'), 'utf8')) as Record<string, string>;
    expect(map).toEqual({ 'doc-1': 'BEIR-1', 'doc-2': 'BEIR-2', 'q-3': 'BEIR-3', 'doc-4': 'BEIR-4' });
    docs.forEach((doc, index) => {
      const parsed = parseMarkdown(readFileSync(path.join(out, 'works', `BEIR-${index + 1}.md`), 'utf8'));
      expect(parsed.body).toBe(`${doc.text}\n`);
      expect(parsed.data).toMatchObject({
        id: `BEIR-${index + 1}`,
        ring: 'curated',
        layer: 'research',
        evidence: 'uncharacterized',
        type: 'argument',
        contributors: ['BEIR tinyset'],
      });
    });
    const byId = new Map(content.works.map((work) => [work.data.id, work.data]));
    expect(byId.get('BEIR-1')!.title).toBe('tides harbour');
    expect(byId.get('BEIR-2')!.title).toBe('A text with *markdown*, "quotes", a colon: and [1] brackets, new lines…');
    expect(byId.get('BEIR-3')!.title).toBe('Unicode — “curly” quotes and émigré words, more than twelve words long,…');
    expect(byId.get('BEIR-1')!.date).toBe(byId.get('BEIR-4')!.date);

    expect(() => importBeir({ from, out })).toThrow(/not empty/);
    expect(importBeir({ from, out, force: true, limit: 2 }).documents).toBe(2);
    expect(loadContent(out).works).toHaveLength(2);
  });

  it('imports only --ids, then --limit, and reports ids it cannot find', () => {
    const from = tempDir('beir-src');
    const corpus = writeCorpus(from, docs);
    const out = tempDir('beir-out');
    const summary = importBeir({ from: corpus, out, name: 'tiny', ids: ['q-3', 'doc-1', 'missing'], force: true });
    expect(summary.documents).toBe(2);
    expect(summary.missingIds).toEqual(['missing']);
    expect(JSON.parse(readFileSync(path.join(out, 'import-map.json'), 'utf8'))).toEqual({ 'doc-1': 'BEIR-1', 'q-3': 'BEIR-2' });
    expect(loadContent(out).site.slug).toBe('beir-tiny');
  });

  it('reports texts a Markdown body cannot keep, and rejects bad arguments', () => {
    const built = buildBeirContent(parseCorpus('{"_id":"a","text":"\\nleading newline"}\n{"_id":"b","text":""}\n'), { name: 'x' });
    expect(built.notVerbatim).toEqual(['a', 'b']);
    expect(titleFor({ _id: 'b', title: '', text: '' })).toBe('b');
    expect(() => buildBeirContent(parseCorpus('{"_id":"a","text":"x"}\n{"_id":"a","text":"y"}'), { name: 'x' })).toThrow(/repeats/);
    expect(importCli(['--from', '/nowhere'])).toBe(2);
    expect(importCli(['--from', '/nowhere', '--out', tempDir('beir-out'), '--limit', 'ten'])).toBe(2);
  });

  it('keeps queries an HTTP client could send: cut at the API limit, widened to the eval depth', () => {
    const { query, truncated } = benchmarkQuery(`${'word '.repeat(1000)}end`);
    expect(truncated).toBe(true);
    expect(query.q.length).toBeLessThanOrEqual(4000);
    expect(query.limit).toBe(EVAL_DEPTH);
    expect(benchmarkQuery('short question').truncated).toBe(false);
  });

  it('cuts a query to its first words for the short-question proxy', () => {
    expect(firstWords('  Tides rise\n twice a day, the moon pulls.', 3)).toBe('Tides rise twice');
    expect(firstWords('one two', 5)).toBe('one two');
    expect(firstWords('kept as it is ', undefined)).toBe('kept as it is ');
  });

  it('splits queries into two stable halves by FNV-1a of the id', () => {
    // fnv1a('a') = 0xe40c292c (even), fnv1a('b') = 0xe70c2de5 (odd)
    expect(halfOf('a')).toBe('A');
    expect(halfOf('b')).toBe('B');
    const ids = Array.from({ length: 1000 }, (_, i) => `test-topic-${i}-pro01a`);
    const inA = ids.filter((id) => halfOf(id) === 'A').length;
    expect(inA).toBeGreaterThan(430);
    expect(inA).toBeLessThan(570);
  });
});

const ARGUANA = process.env.BEIR_ARGUANA_DIR ?? sharedPath('benchmarks', 'arguana');
/** ArguAna ids name their debate: test-environment-aeghhgwpe-pro02b → test-environment-aeghhgwpe. */
const debateOf = (id: string) => id.replace(/-[^-]+$/, '');
const SUBSET = { queries: 60, docs: 300, groupOf: debateOf };
const haveArguana = haveFixtures(['corpus.jsonl.gz', 'qrels-dev.tsv', 'queries.jsonl.gz'].map((file) => path.join(ARGUANA, file)));

describe.skipIf(!haveArguana)('retrieval quality regression on an ArguAna subset', () => {
  it('subsets deterministically', () => {
    const qrels = parseQrels(readFileSync(path.join(ARGUANA, 'qrels-dev.tsv'), 'utf8'));
    const ids = parseCorpus(readMaybeGzip(path.join(ARGUANA, 'corpus.jsonl.gz'))).map((doc) => doc._id);
    const a = selectSubset(qrels, ids, SUBSET);
    const b = selectSubset(qrels, ids, SUBSET);
    expect(a).toEqual(b);
    expect(a.queryIds).toHaveLength(60);
    expect(a.docIds).toHaveLength(300);
    for (const query of a.queryIds) for (const doc of qrels.get(query)!.keys()) expect(a.docIds).toContain(doc);
    // filled with the queries' debates first: hard neighbours, not random easy ones
    const debates = new Set(a.queryIds.map(debateOf));
    expect(a.docIds.filter((id) => debates.has(debateOf(id))).length).toBeGreaterThan(200);
  });

  it('60 dev queries over 300 documents keep nDCG@10 above the floor', async () => {
    const started = performance.now();
    const qrelsFile = path.join(ARGUANA, 'qrels-dev.tsv');
    const qrels = parseQrels(readFileSync(qrelsFile, 'utf8'));
    const ids = parseCorpus(readMaybeGzip(path.join(ARGUANA, 'corpus.jsonl.gz'))).map((doc) => doc._id);
    const subset = selectSubset(qrels, ids, SUBSET);
    const contentDir = path.join(tempDir('beir-subset'), 'content');
    importBeir({ from: ARGUANA, out: contentDir, ids: subset.docIds });
    const result = await runBeirEval({
      contentDir,
      queriesFile: path.join(ARGUANA, 'queries.jsonl.gz'),
      qrelsFile,
      queryIds: subset.queryIds,
      artifactsDir: path.join(tempDir('beir-artifacts'), 'artifacts'),
      cacheDir: pathsFromEnv().cacheDir,
      embedder: await createUseLiteEmbedder(),
    });
    const seconds = (performance.now() - started) / 1000;
    console.log(
      `ArguAna subset: nDCG@10 ${result.ndcg10.toFixed(4)}, Recall@100 ${result.recall100.toFixed(4)}, MRR@10 ${result.mrr10.toFixed(4)} in ${seconds.toFixed(1)} s`,
    );
    expect(result.queries).toBe(60);
    expect(result.ndcg10).toBeGreaterThan(SUBSET_NDCG_FLOOR);
    expect(result.recall100).toBeGreaterThanOrEqual(0.95); // 300 documents: judged ones sit in the first 100
  }, 120_000);
});

/**
 * The default configuration scored 0.889 here when the floor was set (vectors alone 0.754, BM25
 * alone 0.820, weight 0.6 without feedback and BM25 k1 1.2 b 0.75: 0.859, z-score fusion with
 * BM25 feedback 0.875; bench/README.md): the floor is that minus about 0.05. It scores 0.8749
 * now, the build's probe keeping the engine's default on this subset (ADR 0023).
 */
const SUBSET_NDCG_FLOOR = 0.84;
