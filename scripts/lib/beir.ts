/**
 * BEIR benchmark data (https://github.com/beir-cellar/beir): reading its files, turning a
 * corpus into a Polyphony content folder, and the ranking metrics BEIR reports. Pure except
 * for the readers, which take a path.
 *
 * BEIR layout: corpus.jsonl[.gz] lines {_id, title, text}; queries.jsonl[.gz] lines
 * {_id, text}; qrels TSV `query-id corpus-id score` with a header line.
 */
import { readFileSync } from 'node:fs';
import { gunzipSync } from 'node:zlib';
import { stringifyMarkdown, stringifyYaml } from '../../content-files/frontmatter.ts';

export interface BeirDoc {
  _id: string;
  title: string;
  text: string;
}

export interface BeirQuery {
  _id: string;
  text: string;
}

/** query id → (corpus id → graded relevance). Only grades > 0 count as relevant. */
export type Qrels = Map<string, Map<string, number>>;

// ---------------------------------------------------------------------------------------
// Readers

/** Reads a text file, gunzipping it when the name ends in .gz. */
export function readMaybeGzip(file: string): string {
  const bytes = readFileSync(file);
  return (file.endsWith('.gz') ? gunzipSync(bytes) : bytes).toString('utf8');
}

export function parseJsonl<T>(text: string, what: string): T[] {
  const out: T[] = [];
  text.split('\n').forEach((line, index) => {
    if (line.trim() === '') return;
    try {
      out.push(JSON.parse(line) as T);
    } catch (error) {
      throw new Error(`${what} line ${index + 1} is not JSON: ${(error as Error).message}`, { cause: error });
    }
  });
  return out;
}

export function parseCorpus(text: string): BeirDoc[] {
  return parseJsonl<Partial<BeirDoc>>(text, 'corpus').map((doc, index) => {
    if (typeof doc._id !== 'string' || doc._id === '') throw new Error(`corpus line ${index + 1} has no _id`);
    return { _id: doc._id, title: typeof doc.title === 'string' ? doc.title : '', text: typeof doc.text === 'string' ? doc.text : '' };
  });
}

export function parseQueries(text: string): BeirQuery[] {
  return parseJsonl<Partial<BeirQuery>>(text, 'queries').map((query, index) => {
    if (typeof query._id !== 'string' || typeof query.text !== 'string') throw new Error(`queries line ${index + 1} needs _id and text`);
    return { _id: query._id, text: query.text };
  });
}

/** BEIR qrels TSV; a first line starting with "query-id" is a header. */
export function parseQrels(text: string): Qrels {
  const qrels: Qrels = new Map();
  text.split('\n').forEach((line, index) => {
    const trimmed = line.trim();
    if (trimmed === '' || (index === 0 && /^query-?id\b/i.test(trimmed))) return;
    const [queryId, docId, score] = trimmed.split(/\t| +/);
    if (!queryId || !docId || score === undefined || !Number.isFinite(Number(score))) {
      throw new Error(`qrels line ${index + 1} is not "query-id<TAB>corpus-id<TAB>score": ${JSON.stringify(line)}`);
    }
    if (!qrels.has(queryId)) qrels.set(queryId, new Map());
    qrels.get(queryId)!.set(docId, Number(score));
  });
  return qrels;
}

/** One id per line; blank lines and lines starting with # are ignored. */
export function parseIdList(text: string): string[] {
  return text
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '' && !line.startsWith('#'));
}

// ---------------------------------------------------------------------------------------
// Metrics (as trec_eval / pytrec_eval compute them for BEIR: linear gain, log2 discount)

function relevantCount(judged: ReadonlyMap<string, number>): number {
  let count = 0;
  for (const grade of judged.values()) if (grade > 0) count++;
  return count;
}

/**
 * nDCG@k with linear gain: DCG = Σ rel_i / log2(i + 1) over the first k ranks; the ideal
 * ranking orders every judged document (found or not) by grade. 0 when nothing is relevant.
 */
export function ndcgAt(ranked: readonly string[], judged: ReadonlyMap<string, number>, k: number): number {
  let dcg = 0;
  const seen = new Set<string>();
  for (let i = 0; i < Math.min(k, ranked.length); i++) {
    const id = ranked[i]!;
    if (seen.has(id)) continue; // a duplicate id earns nothing twice
    seen.add(id);
    const grade = judged.get(id) ?? 0;
    if (grade > 0) dcg += grade / Math.log2(i + 2);
  }
  const ideal = [...judged.values()].filter((grade) => grade > 0).sort((a, b) => b - a);
  let idcg = 0;
  for (let i = 0; i < Math.min(k, ideal.length); i++) idcg += ideal[i]! / Math.log2(i + 2);
  return idcg > 0 ? dcg / idcg : 0;
}

/** Share of the relevant documents that appear in the first k ranks. */
export function recallAt(ranked: readonly string[], judged: ReadonlyMap<string, number>, k: number): number {
  const total = relevantCount(judged);
  if (total === 0) return 0;
  const found = new Set(ranked.slice(0, k).filter((id) => (judged.get(id) ?? 0) > 0));
  return found.size / total;
}

/** Reciprocal rank of the first relevant document within the first k ranks, else 0. */
export function mrrAt(ranked: readonly string[], judged: ReadonlyMap<string, number>, k: number): number {
  for (let i = 0; i < Math.min(k, ranked.length); i++) {
    if ((judged.get(ranked[i]!) ?? 0) > 0) return 1 / (i + 1);
  }
  return 0;
}

export interface MetricSummary {
  queries: number;
  ndcg10: number;
  recall100: number;
  mrr10: number;
}

/** Mean of each metric over the judged queries; a judged query with no ranking scores 0. */
export function evaluateRankings(
  rankings: ReadonlyMap<string, readonly string[]>,
  qrels: Qrels,
  queryIds: readonly string[] = [...qrels.keys()],
): MetricSummary {
  let ndcg = 0;
  let recall = 0;
  let mrr = 0;
  for (const id of queryIds) {
    const judged = qrels.get(id) ?? new Map<string, number>();
    const ranked = rankings.get(id) ?? [];
    ndcg += ndcgAt(ranked, judged, 10);
    recall += recallAt(ranked, judged, 100);
    mrr += mrrAt(ranked, judged, 10);
  }
  const n = queryIds.length || 1;
  return { queries: queryIds.length, ndcg10: ndcg / n, recall100: recall / n, mrr10: mrr / n };
}

// ---------------------------------------------------------------------------------------
// Corpus → content folder

export interface BeirContentOptions {
  /** Dataset name, e.g. "arguana"; used in the slug and the contributor. */
  name: string;
  idPrefix?: string;
  /** Fixed date for every work (BEIR documents carry none). */
  date?: string;
}

export interface BeirContent {
  /** Path relative to the content folder → file text. */
  files: Map<string, string>;
  /** Source _id → record id. */
  importMap: Record<string, string>;
  /** Documents whose text does not survive the Markdown body round trip byte for byte. */
  notVerbatim: string[];
}

export const BEIR_DEFAULT_PREFIX = 'BEIR';
/** The BEIR paper's first release (arXiv 2104.08663); a fixed stand-in, not the documents' own date. */
export const BEIR_DEFAULT_DATE = '2021-04-17';
const TITLE_WORDS = 12;

/** The BEIR title when it has one, else the first words of the text. */
export function titleFor(doc: BeirDoc): string {
  const title = doc.title.replace(/\s+/g, ' ').trim();
  if (title !== '') return title;
  const words = doc.text.replace(/\s+/g, ' ').trim().split(' ').filter(Boolean);
  if (words.length === 0) return doc._id;
  return words.length > TITLE_WORDS ? `${words.slice(0, TITLE_WORDS).join(' ')}…` : words.join(' ');
}

export function buildBeirContent(docs: readonly BeirDoc[], options: BeirContentOptions): BeirContent {
  const prefix = options.idPrefix ?? BEIR_DEFAULT_PREFIX;
  const date = options.date ?? BEIR_DEFAULT_DATE;
  const name = options.name;
  const slug = `beir-${name
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')}`;
  const contributor = `BEIR ${name}`;
  const files = new Map<string, string>();
  const importMap: Record<string, string> = {};
  const notVerbatim: string[] = [];
  const seen = new Set<string>();
  let n = 0;
  for (const doc of docs) {
    if (seen.has(doc._id)) throw new Error(`corpus repeats _id "${doc._id}"`);
    seen.add(doc._id);
    const id = `${prefix}-${++n}`;
    importMap[doc._id] = id;
    files.set(
      `works/${id}.md`,
      stringifyMarkdown(
        {
          id,
          title: titleFor(doc),
          ring: 'curated',
          type: 'argument',
          layer: 'research',
          evidence: 'uncharacterized',
          contributors: [contributor],
          date,
        },
        doc.text,
      ),
    );
    // The body is written as it is; a text with leading newlines or trailing whitespace
    // lines cannot come back byte for byte from a Markdown file, so such ids are reported.
    if (doc.text !== doc.text.replace(/^\n+/, '').replace(/\n*$/, '') || doc.text === '') notVerbatim.push(doc._id);
  }

  files.set(
    'site.yaml',
    stringifyYaml({
      name: `BEIR ${name}`,
      slug,
      id_prefix: prefix,
      description: `The ${name} corpus of the BEIR retrieval benchmark, imported to measure retrieval quality. Not a Polyphony corpus of voices.`,
      demo: false,
      license: { corpus: 'As distributed by BEIR for this dataset (see the dataset card)', code: 'MIT' },
      attribution: `BEIR ${name} (Thakur et al. 2021, https://github.com/beir-cellar/beir); documents are imported verbatim.`,
    }),
  );
  // The registry needs one family; this corpus has no model voices, so it names none.
  files.set('models.yaml', stringifyYaml({ families: [{ name: 'None', lab: 'n/a', aliases: [] }], models: [] }));
  files.set('claims.yaml', stringifyYaml({ claims: [] }));
  const page = (title: string, description: string, body: string) => stringifyMarkdown({ title, description }, body);
  files.set(
    'pages/limitations.md',
    page(
      'Limitations',
      `What this BEIR ${name} deployment is and is not.`,
      `This deployment holds the ${name} corpus of the BEIR benchmark, imported to measure retrieval quality. ` +
        'Its documents are benchmark texts, reproduced verbatim; they are not answers from any model and carry no ' +
        'divergence records. Titles are BEIR titles or, where BEIR gives none, the first words of the text. ' +
        `Every document carries the same placeholder date (${date}), which is not when it was written.`,
    ),
  );
  files.set(
    'pages/evidence-status.md',
    page(
      'Evidence status',
      'How to weigh the documents in this deployment.',
      `Every document is labelled evidence "uncharacterized": nobody has assessed the claims in the ${name} texts. ` +
        'Retrieving one says it is close to the query, not that it is true.',
    ),
  );
  files.set(
    'pages/for-future-models.md',
    page(
      'For future models',
      'A note for models reading this deployment.',
      `This is a retrieval benchmark (BEIR ${name}), not a record of model voices. Cite a document by its id if you use it, ` +
        'and treat it as a benchmark text, not as guidance.',
    ),
  );
  files.set(
    'pages/context.md',
    page(
      `BEIR ${name}`,
      `Context for the BEIR ${name} deployment.`,
      `The ${name} corpus from BEIR (${docs.length} documents imported), served by the Polyphony engine so that its ` +
        "retrieval can be scored against the benchmark's relevance judgements. import-map.json maps each BEIR _id to its record id.",
    ),
  );
  return { files, importMap, notVerbatim };
}

// ---------------------------------------------------------------------------------------
// Deterministic subsets (for a small regression corpus)

/** FNV-1a 32-bit: a stable, seedable order that does not depend on the platform. */
export function stableHash(text: string, seed = 0): number {
  let hash = (0x811c9dc5 ^ seed) >>> 0;
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash;
}

export interface SubsetOptions {
  queries: number;
  docs: number;
  seed?: number;
  /**
   * Group of a document (e.g. its debate). Documents of the chosen queries' groups fill the
   * subset first: near neighbours make the small subset hard, as the full corpus is.
   */
  groupOf?: (docId: string) => string;
}

/**
 * Picks `queries` judged queries (stable hash order) whose judged documents are all in the
 * corpus, keeps every judged document, also each query's own document when the corpus has
 * it (so dropping it is exercised), and fills up to `docs` with other documents in hash
 * order, those of the queries' groups first when `groupOf` is given.
 */
export function selectSubset(qrels: Qrels, corpusIds: readonly string[], options: SubsetOptions): { queryIds: string[]; docIds: string[] } {
  const seed = options.seed ?? 0;
  const inCorpus = new Set(corpusIds);
  const byHash = (a: string, b: string) => stableHash(a, seed) - stableHash(b, seed) || (a < b ? -1 : 1);
  const candidates = [...qrels.keys()].filter((id) => [...qrels.get(id)!.keys()].every((doc) => inCorpus.has(doc))).sort(byHash);
  const queryIds = candidates.slice(0, options.queries);
  const docs = new Set<string>();
  for (const id of queryIds) {
    for (const doc of qrels.get(id)!.keys()) docs.add(doc);
    if (inCorpus.has(id)) docs.add(id);
  }
  const groups = new Set(options.groupOf ? [...docs].map(options.groupOf) : []);
  const inGroup = (id: string) => (options.groupOf && groups.has(options.groupOf(id)) ? 0 : 1);
  for (const id of [...corpusIds].sort((a, b) => inGroup(a) - inGroup(b) || byHash(a, b))) {
    if (docs.size >= options.docs) break;
    docs.add(id);
  }
  const docIds = corpusIds.filter((id) => docs.has(id));
  return { queryIds: queryIds.sort(), docIds };
}
