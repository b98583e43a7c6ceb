/**
 * Imports the public data of The Realms of Omnarai (CC BY-SA 4.0) into a content folder,
 * to test the engine against real data. The transform is scripts/lib/omnarai.ts; this file
 * reads the source folder, writes the output and is the CLI:
 *
 *   npx tsx scripts/import-omnarai.ts --from ../shared/omnarai --out /tmp/omnarai-content
 *     [--force] [--retire <model_id>=<superseded_by> ...]
 *
 * The output must never enter the repository: write it outside, or into a git-ignored folder.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { buildOmnaraiContent } from './lib/omnarai.ts';
import { parseRetirement, type Retirement } from './lib/omnarai/registry.ts';
import { formatSummary, type ImportSummary } from './lib/omnarai/report.ts';
import { SOURCE_FILES, type OmnaraiSources } from './lib/omnarai/sources.ts';

export type { ImportSummary } from './lib/omnarai/report.ts';
export type { Retirement } from './lib/omnarai/registry.ts';

export interface ImportOptions {
  /** Folder holding corpus.json, media-corpus.jsonl, divergences.jsonl and concepts.json. */
  from: string;
  /** Content folder to create; must be absent or empty unless `force`. */
  out: string;
  /** Replace an earlier import in a non-empty folder (removes only what this importer writes). */
  force?: boolean;
  retire?: readonly Retirement[];
  log?: (line: string) => void;
}

const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
/** What the importer writes into an output folder; --force removes only these. */
const OWNED_FILES = ['site.yaml', 'models.yaml', 'claims.yaml'];
const OWNED_FOLDERS = ['works', 'divergences', 'concepts', 'pages'];

export function importOmnarai(options: ImportOptions): ImportSummary {
  const started = performance.now();
  const log = options.log ?? (() => {});
  const from = path.resolve(options.from);
  const out = path.resolve(options.out);
  if (out === from || out.startsWith(`${from}${path.sep}`)) throw new Error('--out must not be the source folder or inside it');
  assertOutsideTrackedTree(out);
  const { files, report } = buildOmnaraiContent(readOmnaraiSources(from), { retire: options.retire });
  prepareOut(out, options.force ?? false, log);
  for (const folder of new Set([...files.keys()].map((file) => path.posix.dirname(file)))) {
    mkdirSync(path.join(out, folder), { recursive: true });
  }
  for (const [file, text] of files) writeFileSync(path.join(out, file), text);
  const summary: ImportSummary = { from, out, files: files.size, ...report, durationMs: Math.round(performance.now() - started) };
  log(formatSummary(summary));
  return summary;
}

function readOmnaraiSources(dir: string): OmnaraiSources {
  const read = (name: string): string => {
    const file = path.join(dir, name);
    if (!existsSync(file)) throw new Error(`${file} is missing; --from must be the folder holding ${Object.values(SOURCE_FILES).join(', ')}`);
    return readFileSync(file, 'utf8');
  };
  return {
    corpus: read(SOURCE_FILES.corpus),
    media: read(SOURCE_FILES.media),
    divergences: read(SOURCE_FILES.divergences),
    concepts: read(SOURCE_FILES.concepts),
  };
}

/** The data must never land in the tracked tree: inside the repository only git-ignored folders are accepted. */
function assertOutsideTrackedTree(out: string): void {
  const relative = path.relative(REPO_ROOT, out);
  if (relative.startsWith('..') || path.isAbsolute(relative)) return;
  const check = spawnSync('git', ['check-ignore', '-q', '--no-index', '--', relative === '' ? '.' : relative], { cwd: REPO_ROOT });
  if (check.status === 0) return;
  throw new Error(
    `refusing to write into ${out}: it is inside the repository and not git-ignored, and this CC BY-SA data must never be ` +
      'committed. Use a folder outside the repository, or an ignored one such as .cache/omnarai.',
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

const USAGE = `usage: import-omnarai --from <omnarai-data-dir> --out <content-dir> [--force] [--retire <model_id>=<superseded_by>]...

  --from     folder holding ${Object.values(SOURCE_FILES).join(', ')}
  --out      content folder to create; refused when it exists and is not empty
  --force    replace an earlier import in a non-empty --out (removes only what this importer writes)
  --retire   mark a model version retired, optionally naming its successor; repeatable

Exit status: 0 when every record was written; 1 when some were rejected (the rest is
written and the summary says why) or the import failed; 2 on bad arguments.`;

export function runCli(argv: readonly string[]): number {
  let values;
  try {
    ({ values } = parseArgs({
      args: [...argv],
      options: {
        from: { type: 'string' },
        out: { type: 'string' },
        force: { type: 'boolean', default: false },
        retire: { type: 'string', multiple: true, default: [] },
        help: { type: 'boolean', short: 'h', default: false },
      },
      strict: true,
      allowPositionals: false,
    }));
  } catch (error) {
    console.error(`import-omnarai: ${(error as Error).message}\n${USAGE}`);
    return 2;
  }
  if (values.help) {
    console.log(USAGE);
    return 0;
  }
  if (!values.from || !values.out) {
    console.error(`import-omnarai: --from and --out are required\n${USAGE}`);
    return 2;
  }
  try {
    const retire = values.retire.map(parseRetirement);
    const summary = importOmnarai({ from: values.from, out: values.out, force: values.force, retire, log: (line) => console.log(line) });
    return summary.rejected.length > 0 ? 1 : 0;
  } catch (error) {
    console.error(`import-omnarai: ${(error as Error).message}`);
    return 1;
  }
}

const invokedDirectly = process.argv[1] !== undefined && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url);
if (invokedDirectly) process.exitCode = runCli(process.argv.slice(2));
