/**
 * The content folder as git holds it at a base commit, and as the working tree holds it now,
 * for the change check. Plain git plumbing, nothing fetched: works offline, on a shallow clone
 * whose base commit was fetched, and on a detached HEAD (the base is named, HEAD is not used).
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import type { Snapshot } from '../../content-files/change/report.ts';

export class GitSnapshotError extends Error {}

export function git(cwd: string, args: string[], input?: string): Buffer {
  try {
    return execFileSync('git', args, { cwd, input, maxBuffer: 1 << 30, stdio: ['pipe', 'pipe', 'pipe'] });
  } catch (error) {
    const stderr = (error as { stderr?: Buffer }).stderr?.toString('utf8').trim();
    throw new GitSnapshotError(`git ${args[0]} failed${stderr ? `: ${stderr}` : ''}`);
  }
}

export interface ContentLocation {
  /** The repository's top folder. */
  root: string;
  /** The content folder relative to it, with a trailing slash ('' when it is the top). */
  prefix: string;
}

export function locateContent(contentDir: string): ContentLocation {
  if (!existsSync(contentDir)) throw new GitSnapshotError(`${contentDir} does not exist`);
  const root = git(contentDir, ['rev-parse', '--show-toplevel']).toString('utf8').trim();
  const prefix = git(contentDir, ['rev-parse', '--show-prefix']).toString('utf8').trim();
  return { root, prefix };
}

/** The full commit id of a ref, or an error saying how to fetch it into a shallow clone. */
export function resolveBase(location: ContentLocation, ref: string): string {
  try {
    return git(location.root, ['rev-parse', '--verify', '--quiet', `${ref}^{commit}`])
      .toString('utf8')
      .trim();
  } catch {
    const shallow = git(location.root, ['rev-parse', '--is-shallow-repository']).toString('utf8').trim() === 'true';
    throw new GitSnapshotError(
      `the base ${ref} is not a commit in this clone${shallow ? ' (a shallow clone: fetch it first, e.g. git fetch --depth=1 origin <branch or sha>)' : ''}`,
    );
  }
}

/** Every file under the content folder at `commit`, read in one `git cat-file --batch`. */
export function commitSnapshot(location: ContentLocation, commit: string): Snapshot {
  const listing = git(location.root, ['ls-tree', '-r', '-z', '--full-tree', commit, '--', location.prefix || '.']).toString('utf8');
  const entries = listing
    .split('\0')
    .filter(Boolean)
    .map((line) => {
      const tab = line.indexOf('\t');
      const [, type, oid] = line.slice(0, tab).split(' ');
      return { type, oid: oid!, file: line.slice(tab + 1) };
    })
    .filter((entry) => entry.type === 'blob');
  const snapshot = new Map<string, Buffer>();
  if (entries.length === 0) return snapshot;
  const output = git(location.root, ['cat-file', '--batch'], `${entries.map((entry) => entry.oid).join('\n')}\n`);
  let offset = 0;
  for (const entry of entries) {
    const newline = output.indexOf(10, offset);
    const size = Number(output.subarray(offset, newline).toString('utf8').split(' ')[2]);
    const start = newline + 1;
    snapshot.set(entry.file.slice(location.prefix.length), Buffer.from(output.subarray(start, start + size)));
    offset = start + size + 1;
  }
  return snapshot;
}

/** The content folder as it is on disk: tracked and untracked files, without git-ignored ones. */
export function workingSnapshot(location: ContentLocation): Snapshot {
  const listing = git(location.root, ['ls-files', '-z', '--cached', '--others', '--exclude-standard', '--', location.prefix || '.']).toString('utf8');
  const snapshot = new Map<string, Buffer>();
  for (const file of new Set(listing.split('\0').filter(Boolean))) {
    const absolute = path.join(location.root, file);
    if (!existsSync(absolute) || !statSync(absolute).isFile()) continue; // deleted in the working tree
    snapshot.set(file.slice(location.prefix.length), readFileSync(absolute));
  }
  return snapshot;
}
