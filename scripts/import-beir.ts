/**
 * Imports a BEIR corpus (corpus.jsonl or corpus.jsonl.gz) into a content folder, one work
 * per document with its text verbatim, so retrieval can be scored on the benchmark:
 *
 *   npm run import:beir -- --from ../shared/benchmarks/arguana --out /tmp/beir-arguana
 *     [--name arguana] [--prefix BEIR] [--limit N] [--ids <file>] [--force]
 *
 * Writes import-map.json (BEIR _id → record id) beside site.yaml. The output must not enter
 * the repository: write it outside, or into a git-ignored folder such as .cache/.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { BEIR_DEFAULT_PREFIX, buildBeirContent, parseCorpus, parseIdList, readMaybeGzip, type BeirDoc } from './lib/beir.ts';

export interface BeirImportOptions {
  /** A BEIR dataset folder (holding corpus.jsonl[.gz]) or the corpus file itself. */
  from: string;
  out: string;
  name?: string;
  prefix?: string;
  limit?: number;
  /** Only these source ids (applied before limit). */
  ids?: readonly string[];
  force?: boolean;
  log?: (line: string) => void;
}

export interface BeirImportSummary {
  corpusFile: string;
  out: string;
  documents: number;
  missingIds: string[];
  notVerbatim: string[];
  durationMs: number;
}

const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const OWNED_FILES = ['site.yaml', 'models.yaml', 'claims.yaml', 'import-map.json'];
const OWNED_FOLDERS = ['works', 'pages'];

export function corpusFileIn(from: string): string {
  const resolved = path.resolve(from);
  if (existsSync(resolved) && statSync(resolved).isFile()) return resolved;
  for (const name of ['corpus.jsonl', 'corpus.jsonl.gz']) {
    const file = path.join(resolved, name);
    if (existsSync(file)) return file;
  }
  throw new Error(`no corpus.jsonl or corpus.jsonl.gz in ${resolved}`);
}

/** "arguana" from /…/arguana/corpus.jsonl.gz or /…/arguana. */
export function datasetName(from: string): string {
  const resolved = path.resolve(from);
  const folder = existsSync(resolved) && statSync(resolved).isFile() ? path.dirname(resolved) : resolved;
  return (
    path
      .basename(folder)
      .toLowerCase()
      .replace(/[^a-z0-9-]+/g, '-') || 'corpus'
  );
}

export function importBeir(options: BeirImportOptions): BeirImportSummary {
  const started = performance.now();
  const log = options.log ?? (() => {});
  const corpusFile = corpusFileIn(options.from);
  const out = path.resolve(options.out);
  assertOutsideTrackedTree(out);
  let docs: BeirDoc[] = parseCorpus(readMaybeGzip(corpusFile));
  let missingIds: string[] = [];
  if (options.ids) {
    const wanted = new Set(options.ids);
    const present = new Set(docs.map((doc) => doc._id));
    missingIds = [...wanted].filter((id) => !present.has(id));
    docs = docs.filter((doc) => wanted.has(doc._id));
  }
  if (options.limit !== undefined) docs = docs.slice(0, options.limit);
  const content = buildBeirContent(docs, { name: options.name ?? datasetName(options.from), idPrefix: options.prefix ?? BEIR_DEFAULT_PREFIX });
  prepareOut(out, options.force ?? false, log);
  for (const folder of ['works', 'pages']) mkdirSync(path.join(out, folder), { recursive: true });
  for (const [file, text] of content.files) writeFileSync(path.join(out, file), text);
  writeFileSync(path.join(out, 'import-map.json'), `${JSON.stringify(content.importMap, null, 1)}\n`);
  const summary: BeirImportSummary = {
    corpusFile,
    out,
    documents: docs.length,
    missingIds,
    notVerbatim: content.notVerbatim,
    durationMs: Math.round(performance.now() - started),
  };
  log(
    `imported ${summary.documents} documents from ${corpusFile} into ${out} in ${summary.durationMs} ms` +
      (missingIds.length > 0 ? `; ${missingIds.length} requested ids are not in the corpus: ${missingIds.slice(0, 5).join(', ')}` : '') +
      (content.notVerbatim.length > 0 ? `; ${content.notVerbatim.length} texts are empty or have edge newlines a Markdown body cannot keep` : ''),
  );
  return summary;
}

function assertOutsideTrackedTree(out: string): void {
  const relative = path.relative(REPO_ROOT, out);
  if (relative.startsWith('..') || path.isAbsolute(relative)) return;
  const check = spawnSync('git', ['check-ignore', '-q', '--no-index', '--', relative === '' ? '.' : relative], { cwd: REPO_ROOT });
  if (check.status === 0) return;
  throw new Error(
    `refusing to write into ${out}: it is inside the repository and not git-ignored. Use a folder outside it, or an ignored one such as .cache/beir.`,
  );
}

function prepareOut(out: string, force: boolean, log: (line: string) => void): void {
  if (!existsSync(out)) return;
  if (!statSync(out).isDirectory()) throw new Error(`${out} exists and is not a folder`);
  if (readdirSync(out).length === 0) return;
  if (!force) throw new Error(`${out} is not empty; choose an empty or new folder, or pass --force to replace an earlier import there`);
  for (const name of OWNED_FILES) rmSync(path.join(out, name), { force: true });
  for (const folder of OWNED_FOLDERS) {
    const dir = path.join(out, folder);
    if (!existsSync(dir)) continue;
    for (const name of readdirSync(dir).filter((entry) => entry.endsWith('.md'))) rmSync(path.join(dir, name));
  }
  const others = readdirSync(out).filter((name) => !OWNED_FILES.includes(name) && !OWNED_FOLDERS.includes(name));
  if (others.length > 0) log(`--force: left in place, not written by this importer: ${others.join(', ')}`);
}

const USAGE = `usage: import-beir --from <beir-dataset-dir | corpus.jsonl[.gz]> --out <content-dir>
                   [--name <dataset>] [--prefix BEIR] [--limit N] [--ids <file>] [--force]

  --from     folder holding corpus.jsonl or corpus.jsonl.gz (or the file itself)
  --out      content folder to create; refused when it exists and is not empty
  --name     dataset name for the slug and contributor (default: the folder name)
  --prefix   record id prefix (default ${BEIR_DEFAULT_PREFIX})
  --limit    keep only the first N documents (after --ids)
  --ids      file with one BEIR doc id per line: import only those
  --force    replace an earlier import in a non-empty --out (removes only what this importer writes)`;

export function runCli(argv: readonly string[]): number {
  let values;
  try {
    ({ values } = parseArgs({
      args: [...argv],
      options: {
        from: { type: 'string' },
        out: { type: 'string' },
        name: { type: 'string' },
        prefix: { type: 'string' },
        limit: { type: 'string' },
        ids: { type: 'string' },
        force: { type: 'boolean', default: false },
        help: { type: 'boolean', short: 'h', default: false },
      },
      strict: true,
      allowPositionals: false,
    }));
  } catch (error) {
    console.error(`import-beir: ${(error as Error).message}\n${USAGE}`);
    return 2;
  }
  if (values.help) {
    console.log(USAGE);
    return 0;
  }
  if (!values.from || !values.out) {
    console.error(`import-beir: --from and --out are required\n${USAGE}`);
    return 2;
  }
  if (values.limit !== undefined && !/^\d+$/.test(values.limit)) {
    console.error(`import-beir: --limit must be a whole number\n${USAGE}`);
    return 2;
  }
  try {
    importBeir({
      from: values.from,
      out: values.out,
      ...(values.name ? { name: values.name } : {}),
      ...(values.prefix ? { prefix: values.prefix } : {}),
      ...(values.limit !== undefined ? { limit: Number(values.limit) } : {}),
      ...(values.ids ? { ids: parseIdList(readFileSync(values.ids, 'utf8')) } : {}),
      force: values.force,
      log: (line) => console.log(line),
    });
    return 0;
  } catch (error) {
    console.error(`import-beir: ${(error as Error).message}`);
    return 1;
  }
}

const invokedDirectly = process.argv[1] !== undefined && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url);
if (invokedDirectly) process.exitCode = runCli(process.argv.slice(2));
