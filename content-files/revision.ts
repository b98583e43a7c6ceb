/**
 * The corpus revision (manifest.published_releases.corpus_rev): a sha256 over the name and bytes
 * of every file the loader reads (load-content.ts), in byte order of their paths. The build hashes
 * the files it loaded; the change history (scripts/lib/change-history.ts) hashes the same files of
 * a commit as git holds them, chosen by `countsForRevision`, so a revision read from history is the
 * one a build of that commit printed. test/changes.test.ts holds the two together.
 */
import { createHash } from 'node:crypto';
import { CALIBRATION_FILE } from '../schemas/certification.ts';
import { REQUIRED_PAGES } from '../schemas/content.ts';
import { RELEVANCE_CALIBRATION_FILE } from '../core/search/relevance.ts';
import { TENSION_MERGES_FILE } from './tension-files.ts';

export interface RevisionFile {
  /** Path relative to the content folder, with forward slashes. */
  file: string;
  bytes: Uint8Array;
}

/** Folders whose markdown files (directly inside, not below) the loader reads. */
const MARKDOWN_FOLDERS = new Set(['works', 'proposals', 'divergences', 'concepts', 'audio']);
const TOP_FILES = new Set(['site.yaml', 'models.yaml', 'claims.yaml', CALIBRATION_FILE, RELEVANCE_CALIBRATION_FILE, TENSION_MERGES_FILE]);
const PAGES = new Set<string>(REQUIRED_PAGES.map((name) => `pages/${name}.md`));

/** Whether the loader reads this file of a content folder, and so whether it counts for the revision. */
export function countsForRevision(file: string): boolean {
  const parts = file.split('/');
  if (parts.length === 1) return TOP_FILES.has(file);
  if (parts.length !== 2) return false;
  const [folder, name] = parts as [string, string];
  if (MARKDOWN_FOLDERS.has(folder)) return name.endsWith('.md');
  if (folder === 'tensions') return name.endsWith('.yaml');
  return PAGES.has(file);
}

const byPath = (a: RevisionFile, b: RevisionFile) => (a.file < b.file ? -1 : a.file > b.file ? 1 : 0);

/** The revision of a set of files already chosen (the loader's `files`). */
export function corpusRevision(files: readonly RevisionFile[]): string {
  const hash = createHash('sha256');
  for (const file of [...files].sort(byPath)) hash.update(`${file.file}\n`).update(file.bytes);
  return hash.digest('hex').slice(0, 16);
}

/** The revision of a whole content folder's files (a git snapshot): only those the loader reads count. */
export function snapshotRevision(snapshot: ReadonlyMap<string, Uint8Array>): string {
  return corpusRevision([...snapshot].filter(([file]) => countsForRevision(file)).map(([file, bytes]) => ({ file, bytes })));
}
