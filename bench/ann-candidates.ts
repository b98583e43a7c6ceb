/**
 * One candidate index of bench/ann.ts, measured in a process of its own (bench/ann.ts starts
 * it): it loads the vectors (kept as floats for the exact re-scoring, as the server keeps
 * them), builds the index on all but the last 1,000, inserts those, answers the questions
 * (shortlist, then exact re-scoring), saves the index and loads it again. Prints one JSON line.
 */
import { readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { pathToFileURL } from 'node:url';
import { createVectorIndex, DEFAULT_INDEX_PARAMETERS, viewVectorIndex, type IndexQuantization } from '../providers/vector-index.ts';
import { percentile } from './lib.ts';

const DIMS = 512;
const INSERTED = 1000;

export interface CandidateResult {
  parameters: string;
  /** Per question, the ten best rows after re-scoring, best first. */
  found: number[][];
  p50: number;
  p95: number;
  buildMs: number;
  insertMs: number;
  rssAddedBytes: number;
  fileBytes: number;
  /** Reopening the saved index and its first answer (a memory-mapped index faults its pages in as they are touched). */
  loadMs: number;
}

interface Candidate {
  parameters: string;
  add(vectors: Float32Array, firstKey: number): void;
  search(query: Float32Array, k: number): ArrayLike<number>;
  /** Saves to `file`; returns the file written. */
  save(file: string): string;
  /** Reopens what save() wrote; returns its search. */
  load(file: string): Promise<(query: Float32Array, k: number) => ArrayLike<number>>;
}

/** Top `k` rows by score, best first. */
export function topK(scores: Float32Array, k: number): Uint32Array {
  const top: number[] = [];
  for (let row = 0; row < scores.length; row++) {
    const score = scores[row]!;
    if (top.length === k && score <= scores[top[k - 1]!]!) continue;
    let at = top.length === k ? k - 1 : top.length;
    while (at > 0 && score > scores[top[at - 1]!]!) at--;
    top.splice(at, 0, row);
    if (top.length > k) top.pop();
  }
  return Uint32Array.from(top);
}

async function usearch(quantization: IndexQuantization): Promise<Candidate> {
  const parameters = { ...DEFAULT_INDEX_PARAMETERS, quantization };
  const index = await createVectorIndex(DIMS, parameters);
  return {
    parameters: `M ${parameters.connectivity}, ef_construction ${parameters.expansionAdd}, ef_search ${parameters.expansionSearch}`,
    add: (vectors, firstKey) => index.add(vectors, firstKey),
    search: (query, k) => index.search(query, k),
    save(file) {
      index.save(file);
      return file;
    },
    async load(file) {
      const viewed = await viewVectorIndex(file, DIMS, parameters);
      return (query, k) => viewed.search(query, k);
    },
  };
}

interface HnswIndex {
  initIndex(maxElements: number, m: number, efConstruction: number, randomSeed: number): void;
  setEf(ef: number): void;
  addPoint(point: number[], label: number): void;
  searchKnn(query: number[], k: number): { neighbors: number[] };
  writeIndexSync(file: string): void;
  readIndexSync(file: string): void;
}

async function hnswlib(size: number): Promise<Candidate> {
  // Not a dependency (docs/decisions/0018-vector-index.md): loaded by a name the type checker does not resolve.
  const name = 'hnswlib-node';
  type HnswModule = { HierarchicalNSW: new (space: string, dims: number) => HnswIndex };
  const imported = (await import(name)) as HnswModule & { default?: HnswModule };
  const module = imported.default ?? imported;
  const { connectivity: m, expansionAdd, expansionSearch } = DEFAULT_INDEX_PARAMETERS;
  const index = new module.HierarchicalNSW('ip', DIMS);
  index.initIndex(size, m, expansionAdd, 100);
  index.setEf(expansionSearch);
  return {
    parameters: `M ${m}, ef_construction ${expansionAdd}, ef_search ${expansionSearch}, f32`,
    add(vectors, firstKey) {
      for (let row = 0; row < vectors.length / DIMS; row++) index.addPoint(Array.from(vectors.subarray(row * DIMS, (row + 1) * DIMS)), firstKey + row);
    },
    search: (query, k) => index.searchKnn(Array.from(query), k).neighbors,
    save(file) {
      index.writeIndexSync(file);
      return file;
    },
    async load(file) {
      const loaded = new module.HierarchicalNSW('ip', DIMS);
      loaded.readIndexSync(file);
      loaded.setEf(expansionSearch);
      return (query, k) => loaded.searchKnn(Array.from(query), k).neighbors;
    },
  };
}

interface SqlStatement {
  run(...parameters: unknown[]): unknown;
  all(...parameters: unknown[]): { id: number }[];
}
interface SqlDatabase {
  exec(sql: string): void;
  prepare(sql: string): SqlStatement;
  close(): void;
}

/** libSQL's own vector index (DiskANN) in a database file, as the store already uses libSQL. */
async function libsql(work: string): Promise<Candidate> {
  const { default: Database } = (await import('libsql')) as unknown as { default: new (file: string) => SqlDatabase };
  const file = path.join(work, `libsql-${process.pid}.db`);
  const database = new Database(file);
  database.exec(`CREATE TABLE vectors (id INTEGER PRIMARY KEY, embedding F32_BLOB(${DIMS}))`);
  database.exec(`CREATE INDEX vectors_ann ON vectors (libsql_vector_idx(embedding, 'metric=cosine'))`);
  const insert = database.prepare('INSERT INTO vectors (id, embedding) VALUES (?, ?)');
  const searchSql = 'SELECT id FROM vector_top_k(?, ?, ?)';
  const blob = (vector: Float32Array) => Buffer.from(vector.buffer, vector.byteOffset, vector.byteLength);
  const searchOf = (db: SqlDatabase) => {
    const statement = db.prepare(searchSql);
    return (query: Float32Array, k: number) => statement.all('vectors_ann', blob(query), k).map((hit) => hit.id);
  };
  return {
    parameters: 'DiskANN, libsql defaults, f32',
    add(vectors, firstKey) {
      database.exec('BEGIN');
      for (let row = 0; row < vectors.length / DIMS; row++) insert.run(firstKey + row, blob(vectors.subarray(row * DIMS, (row + 1) * DIMS)));
      database.exec('COMMIT');
    },
    search: searchOf(database),
    // The database file is the index: saving is closing it, loading is opening it.
    save() {
      database.close();
      return file;
    },
    load: async (saved) => searchOf(new Database(saved)),
  };
}

function rescore(vectors: Float32Array, query: Float32Array, shortlist: ArrayLike<number>): number[] {
  const scores = new Float32Array(shortlist.length);
  for (let at = 0; at < shortlist.length; at++) {
    const offset = shortlist[at]! * DIMS;
    let dot = 0;
    for (let d = 0; d < DIMS; d++) dot += vectors[offset + d]! * query[d]!;
    scores[at] = dot;
  }
  return [...topK(scores, 10)].map((at) => shortlist[at]!);
}

export async function runCandidate(options: {
  candidate: string;
  vectors: string;
  questions: string;
  size: number;
  shortlist: number;
  work: string;
}): Promise<CandidateResult> {
  const bytes = readFileSync(options.vectors);
  const vectors = new Float32Array(bytes.buffer, bytes.byteOffset, options.size * DIMS);
  const questionBytes = readFileSync(options.questions);
  const questions = new Float32Array(questionBytes.buffer, questionBytes.byteOffset, questionBytes.byteLength / 4);
  const rssBefore = process.memoryUsage().rss;
  const candidate = options.candidate.startsWith('usearch-')
    ? await usearch(options.candidate.slice('usearch-'.length) as IndexQuantization)
    : options.candidate === 'hnswlib'
      ? await hnswlib(options.size)
      : options.candidate === 'libsql'
        ? await libsql(options.work)
        : undefined;
  if (!candidate) throw new Error(`unknown candidate ${options.candidate}`);
  const built = options.size - INSERTED;
  let started = performance.now();
  candidate.add(vectors.subarray(0, built * DIMS), 0);
  const buildMs = performance.now() - started;
  started = performance.now();
  candidate.add(vectors.subarray(built * DIMS), built);
  const insertMs = performance.now() - started;
  const rssAddedBytes = process.memoryUsage().rss - rssBefore;
  const found: number[][] = [];
  const times: number[] = [];
  for (let offset = 0; offset < questions.length; offset += DIMS) {
    const query = questions.subarray(offset, offset + DIMS);
    const begin = performance.now();
    found.push(rescore(vectors, query, candidate.search(query, options.shortlist)));
    times.push(performance.now() - begin);
  }
  const savedFile = candidate.save(path.join(options.work, `${options.candidate}-${process.pid}.index`));
  started = performance.now();
  (await candidate.load(savedFile))(questions.subarray(0, DIMS), options.shortlist);
  const loadMs = performance.now() - started;
  return {
    parameters: candidate.parameters,
    found,
    p50: percentile(times, 50),
    p95: percentile(times, 95),
    buildMs,
    insertMs,
    rssAddedBytes,
    fileBytes: statSync(savedFile).size,
    loadMs,
  };
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const { values } = parseArgs({
    options: {
      candidate: { type: 'string' },
      vectors: { type: 'string' },
      questions: { type: 'string' },
      size: { type: 'string' },
      shortlist: { type: 'string' },
      work: { type: 'string' },
    },
  });
  try {
    const result = await runCandidate({
      candidate: values.candidate!,
      vectors: values.vectors!,
      questions: values.questions!,
      size: Number(values.size),
      shortlist: Number(values.shortlist),
      work: values.work!,
    });
    console.log(JSON.stringify(result));
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    console.log(JSON.stringify({ skipped: message.split('\n')[0] }));
  }
}
