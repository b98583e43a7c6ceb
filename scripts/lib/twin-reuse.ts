/**
 * Record twins a build can take from the previous one. A work's twins (/records/<id>.md, its
 * source bytes, and /records/<id>.json, its record with the rendered HTML and its revisions) follow
 * from its file, its derived record, the renderer and its history; their key hashes the four. A build writes each work's key
 * to data/record-twins.json, and the next build hard-links (or copies, across file systems) the
 * twins whose key is unchanged instead of rendering and writing them again: at 250,000 works
 * that is most of the data build's time (bench/README.md, issue 30).
 */
import { createHash } from 'node:crypto';
import { copyFileSync, existsSync, linkSync, readFileSync, unlinkSync } from 'node:fs';
import path from 'node:path';
import type { WorkRecord } from '../../core/records.ts';
import { RENDER_VERSION } from './render.ts';

export const TWIN_KEYS_FORMAT = 'polyphony-record-twins@1';

export interface TwinReuse {
  /** The previous build's public folder (its records/ holds the twins). */
  previousPublic: string;
  /** Each work's twin key in the previous build. */
  keys: ReadonlyMap<string, string>;
}

/** `history`: the work's revisions the JSON twin carries (a new commit that touched it is a new key). */
export function twinKey(work: WorkRecord, raw: string, history?: unknown): string {
  const hash = createHash('sha256').update(RENDER_VERSION).update('\u0000').update(JSON.stringify(work)).update('\u0000').update(raw);
  if (history !== undefined) hash.update('\u0000').update(JSON.stringify(history));
  return hash.digest('base64');
}

/** The keys a previous build wrote (none when there was no build, or it predates them). */
export function readTwinKeys(file: string): Map<string, string> {
  if (!existsSync(file)) return new Map();
  try {
    const parsed = JSON.parse(readFileSync(file, 'utf8')) as { format?: unknown; keys?: Record<string, string> };
    return parsed.format === TWIN_KEYS_FORMAT && parsed.keys ? new Map(Object.entries(parsed.keys)) : new Map();
  } catch {
    return new Map();
  }
}

export function twinKeysFile(keys: ReadonlyMap<string, string>): { format: string; keys: Record<string, string> } {
  return { format: TWIN_KEYS_FORMAT, keys: Object.fromEntries(keys) };
}

/**
 * Takes the previous build's twins of `id` into `publicDir` (its records/ folder made) when its
 * key is the same: true when both files were taken, false when they must be written (the key
 * changed, or a previous twin is missing).
 */
export function reuseTwins(reuse: TwinReuse | undefined, id: string, key: string, publicDir: string): boolean {
  if (!reuse || reuse.keys.get(id) !== key) return false;
  const names = [`${id}.md`, `${id}.json`];
  const taken: string[] = [];
  for (const name of names) {
    const to = path.join(publicDir, 'records', name);
    if (!linkOrCopy(path.join(reuse.previousPublic, 'records', name), to)) {
      // The twin is written instead: a link left here would carry that write into the previous build's file.
      for (const file of taken) unlinkSync(file);
      return false;
    }
    taken.push(to);
  }
  return true;
}

/** A hard link (a copy across file systems); false when the source is not there. */
function linkOrCopy(from: string, to: string): boolean {
  try {
    linkSync(from, to);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return false;
    copyFileSync(from, to);
    return true;
  }
}
