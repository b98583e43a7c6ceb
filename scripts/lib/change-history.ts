/**
 * The content's history as the build reads it from git (issue 45, docs/CHANGES.md): the commits
 * that touched the content folder, newest first along first parents, at most `limit` of them,
 * each with the corpus revision its content has (content-files/revision.ts: what a build of it
 * prints) and what it changed relative to its first parent (content-files/change/record-changes.ts).
 * Each commit's answer is kept in the build's cache folder, so a rebuild reads only new commits.
 * Without history (no git, a tarball, a shallow clone of one commit) it says so and lists nothing.
 */
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { Snapshot } from '../../content-files/change/report.ts';
import { contentChanges } from '../../content-files/change/record-changes.ts';
import { snapshotRevision } from '../../content-files/revision.ts';
import { writeJson } from '../../content-files/write.ts';
import { changesPages } from '../../core/changes.ts';
import type { ArtifactPaths } from '../../core/artifacts.ts';
import type { ChangeHistory, ContentRevision } from '../../schemas/api/changes.ts';
import { commitSnapshot, git, GitSnapshotError, locateContent, workingSnapshot, type ContentLocation } from './git-snapshot.ts';

/** Commits of the content folder read by default (CHANGES_HISTORY_LIMIT). */
export const DEFAULT_HISTORY_LIMIT = 500;
/** The cache's file in the build's cache folder; its format names what its entries depend on. */
export const CHANGE_HISTORY_CACHE_FILE = 'change-history.json';
const CACHE_FORMAT = 'polyphony-change-history@1';

export interface ChangeHistoryOptions {
  contentDir: string;
  cacheDir: string;
  /** This build's corpus_rev: a working tree that differs from the last commit is listed as uncommitted changes. */
  currentRev: string;
  limit?: number;
  log?: (line: string) => void;
}

interface Commit {
  commit: string;
  /** First parent, or null for a root commit. */
  parent: string | null;
  /** The parent was not fetched (the edge of a shallow clone): what the commit changed cannot be told. */
  boundary: boolean;
  date: string;
  author: string;
  subject: string;
}

/** A commit's entry in the cache: its revision, or only its corpus_rev at the edge of a shallow clone. */
type Cached = { revision: ContentRevision; parentEmpty: boolean } | { boundaryRev: string };

/** CHANGES_HISTORY_LIMIT: a whole number of commits, at least 1. */
export function historyLimitFromEnv(env: NodeJS.ProcessEnv): number | undefined {
  const value = env.CHANGES_HISTORY_LIMIT;
  if (value === undefined || value === '') return undefined;
  const parsed = Number(value);
  if (!Number.isInteger(parsed) || parsed < 1)
    throw new Error(`CHANGES_HISTORY_LIMIT must be a whole number of commits (1 or more), not ${JSON.stringify(value)}`);
  return parsed;
}

function unavailable(currentRev: string, reason: string): ChangeHistory {
  return { history: 'unavailable', reason, current_rev: currentRev, oldest_rev: null, revisions: [] };
}

/** The newest `count` commits that touched the content folder along first parents, newest first. */
function listCommits(location: ContentLocation, count: number): Commit[] {
  const format = ['%H', '%P', '%aI', '%an', '%s'].join('%x1f');
  const output = git(location.root, ['log', '--first-parent', `-n${count}`, `--format=${format}%x1e`, 'HEAD', '--', location.prefix || '.']).toString('utf8');
  const shallow = shallowCommits(location);
  return output
    .split('\x1e')
    .map((line) => line.trim())
    .filter(Boolean)
    .map((line) => {
      const [commit = '', parents = '', date = '', author = '', subject = ''] = line.split('\x1f');
      const parent = parents.split(' ').find(Boolean) ?? null;
      return { commit, parent, boundary: parent === null && shallow.has(commit), date, author, subject };
    });
}

/** The commits whose parents a shallow clone did not fetch (none in a full clone). */
function shallowCommits(location: ContentLocation): Set<string> {
  if (git(location.root, ['rev-parse', '--is-shallow-repository']).toString('utf8').trim() !== 'true') return new Set();
  const file = path.resolve(location.root, git(location.root, ['rev-parse', '--git-path', 'shallow']).toString('utf8').trim());
  return new Set(existsSync(file) ? readFileSync(file, 'utf8').split('\n').filter(Boolean) : []);
}

/** The tree the content folder is at each commit (the same tree is the same content), or undefined where it is absent. */
function contentTrees(location: ContentLocation, commits: readonly string[]): Map<string, string | undefined> {
  const folder = location.prefix.replace(/\/$/, '');
  const names = commits.map((commit) => (folder ? `${commit}:${folder}` : `${commit}^{tree}`));
  const lines = git(location.root, ['cat-file', '--batch-check'], `${names.join('\n')}\n`)
    .toString('utf8')
    .split('\n');
  return new Map(commits.map((commit, at) => [commit, /^[0-9a-f]+ tree /.test(lines[at] ?? '') ? lines[at]!.split(' ')[0] : undefined]));
}

function readCache(file: string): Map<string, Cached> {
  try {
    const parsed = JSON.parse(readFileSync(file, 'utf8')) as { format?: string; entries?: Record<string, Cached> };
    return new Map(parsed.format === CACHE_FORMAT ? Object.entries(parsed.entries ?? {}) : []);
  } catch {
    return new Map();
  }
}

/** Only the entries this build used are kept; written to a temporary file renamed into place, so a reader never sees half. */
function writeCache(file: string, entries: Map<string, Cached>): void {
  mkdirSync(path.dirname(file), { recursive: true });
  const temporary = `${file}.${process.pid}-${randomBytes(6).toString('hex')}.tmp`;
  writeFileSync(temporary, JSON.stringify({ format: CACHE_FORMAT, entries: Object.fromEntries(entries) }));
  renameSync(temporary, file);
}

export function readChangeHistory(options: ChangeHistoryOptions): ChangeHistory {
  const log = options.log ?? (() => {});
  const limit = options.limit ?? DEFAULT_HISTORY_LIMIT;
  let location: ContentLocation;
  let commits: Commit[];
  try {
    location = locateContent(options.contentDir);
    commits = listCommits(location, limit + 1);
  } catch (error) {
    if (!(error instanceof GitSnapshotError)) throw error;
    return unavailable(
      options.currentRev,
      `the content folder is not in a git repository the build can read (${error.message}): a tarball or a copy without .git`,
    );
  }
  if (commits.length === 0) return unavailable(options.currentRev, 'git holds no commit of the content folder');
  const capped = commits.length > limit;
  const listed = commits.slice(0, limit);
  const cacheFile = path.join(options.cacheDir, CHANGE_HISTORY_CACHE_FILE);
  const cache = readCache(cacheFile);
  const walk = walkCommits(location, listed, cache);
  writeCache(cacheFile, walk.used);
  log(`change history: ${walk.revisions.length} commits of the content folder (${walk.reused} from the cache)`);
  const oldest = walk.revisions.at(-1);
  if (oldest === undefined) {
    return unavailable(options.currentRev, `a shallow clone: the history of the content folder before ${listed[0]!.commit.slice(0, 12)} was not fetched`);
  }
  const revisions = [...uncommitted(location, listed[0]!.commit, walk.revisions[0]!.corpus_rev, options.currentRev), ...walk.revisions];
  const truncated = capped
    ? `only the newest ${limit} commits of the content folder are read (CHANGES_HISTORY_LIMIT)`
    : walk.boundary
      ? `a shallow clone: commits before ${oldest.commit!.slice(0, 12)} were not fetched`
      : null;
  return {
    history: truncated ? 'truncated' : 'complete',
    reason: truncated,
    current_rev: options.currentRev,
    // A first commit that brought the content from nothing: a delta starts at it, not at the empty folder.
    oldest_rev: walk.oldestParentEmpty && !truncated ? oldest.corpus_rev : oldest.parent_rev,
    revisions,
  };
}

/** Each listed commit's revision, from the cache or read from git; a shallow clone's edge ends the list. */
function walkCommits(location: ContentLocation, listed: readonly Commit[], cache: Map<string, Cached>) {
  const used = new Map<string, Cached>();
  const revisions: ContentRevision[] = [];
  let reused = 0;
  let boundary = false;
  let oldestParentEmpty = false;
  const keyOf = (commit: string) => `${commit}:${location.prefix}`;
  const missing = listed.filter((entry) => !cache.has(keyOf(entry.commit)));
  const trees = contentTrees(location, [...new Set(missing.flatMap((entry) => (entry.parent ? [entry.commit, entry.parent] : [entry.commit])))]);
  const snapshots = snapshotReader(location, trees);
  for (const entry of listed) {
    const key = keyOf(entry.commit);
    let cached = cache.get(key);
    if (cached) reused++;
    else if (entry.boundary) cached = { boundaryRev: snapshots.revision(entry.commit) };
    else {
      // The commit first, then its parent: the parent is usually the next commit listed, read once.
      const { date, author, subject, commit } = entry;
      const head = snapshots.read(commit);
      const corpusRev = snapshots.revision(commit);
      const base = entry.parent ? snapshots.read(entry.parent) : new Map<string, Buffer>();
      const parentRev = entry.parent ? snapshots.revision(entry.parent) : snapshotRevision(base);
      const changes = contentChanges(base, head);
      cached = { revision: { corpus_rev: corpusRev, parent_rev: parentRev, commit, date, author, subject, ...changes }, parentEmpty: base.size === 0 };
    }
    used.set(key, cached);
    if ('boundaryRev' in cached) {
      boundary = true;
      break;
    }
    revisions.push(cached.revision);
    oldestParentEmpty = cached.parentEmpty;
  }
  return { revisions, used, reused, boundary, oldestParentEmpty };
}

/** Snapshots and revisions by the content folder's tree: the last snapshot read is held, and every revision computed. */
function snapshotReader(location: ContentLocation, trees: Map<string, string | undefined>) {
  const revisions = new Map<string, string>();
  let held: { tree: string | undefined; snapshot: Snapshot } | undefined;
  const read = (commit: string): Snapshot => {
    const tree = trees.get(commit);
    if (held && held.tree === tree && tree !== undefined) return held.snapshot;
    const snapshot = tree === undefined ? new Map<string, Buffer>() : commitSnapshot(location, commit);
    held = { tree, snapshot };
    return snapshot;
  };
  const revision = (commit: string): string => {
    const tree = trees.get(commit) ?? '(none)';
    let known = revisions.get(tree);
    if (known === undefined) revisions.set(tree, (known = snapshotRevision(read(commit))));
    return known;
  };
  return { read, revision };
}

/** A build of a working tree that differs from its last commit: those changes, listed first and never cached. */
function uncommitted(location: ContentLocation, head: string, headRev: string, currentRev: string): ContentRevision[] {
  if (headRev === currentRev) return [];
  const changes = contentChanges(commitSnapshot(location, head), workingSnapshot(location));
  return [{ corpus_rev: currentRev, parent_rev: headRev, commit: null, date: null, author: null, subject: null, ...changes }];
}

/** data/changes.json (what GET /api/changes answers from) and /changes/index.json with its pages. */
export function writeChangeFiles(history: ChangeHistory, out: Pick<ArtifactPaths, 'changes' | 'public'>): void {
  writeJson(out.changes, history);
  const { index, pages } = changesPages(history);
  writeJson(path.join(out.public, 'changes', 'index.json'), index);
  for (const page of pages) writeJson(path.join(out.public, 'changes', `page-${page.page}.json`), page);
}
