/**
 * Writes a curator's disposition into content/tensions/<key>.yaml: appended to the history in
 * place (never rewritten: no other line of the file changes), then the whole content folder is
 * validated; a write that would break the build is rolled back. Used by the curator CLI and,
 * through the server's wiring, the API. Read, append, validate and roll back run under one
 * lock file per content folder, so two processes recording dispositions at once (the server
 * and a curator's CLI, or two servers on one folder) both land: neither reads a history the
 * other is about to replace, nor rolls back over the other's entry.
 */
import { existsSync, readFileSync, renameSync, unlinkSync } from 'node:fs';
import path from 'node:path';
import { TENSION_KEY_PATTERN, type TensionDisposition, type TensionFile, type TensionMergeDecision, type TensionMergesFile } from '../schemas/content.ts';
import { TENSION_MERGES_FILE } from './tension-files.ts';
import { parseYaml, stringifyYaml } from './frontmatter.ts';
import { withFileLock } from './file-lock.ts';
import { ContentError } from './issues.ts';
import { loadContent } from './load-content.ts';
import { writeFile } from './write.ts';
import { appendToSequence } from './yaml-edit.ts';

export interface AppendedDisposition {
  /** Path relative to the content folder. */
  file: string;
  dispositions: TensionDisposition[];
  /** The entry as written: its `at` is never earlier than the entry before it (see stampAfter). */
  disposition: TensionDisposition;
}

function timeOf(value: unknown): number {
  return value instanceof Date ? value.getTime() : Date.parse(String(value));
}

/**
 * A history is oldest first. Two writers stamp their entries before taking the lock, so the
 * later stamp can land first; the other entry is then stamped with the time of the entry
 * before it (the moment it could be recorded) rather than refused or lost.
 */
function stampAfter(previous: string | null, disposition: TensionDisposition): TensionDisposition {
  if (previous === null) return disposition;
  const history = (parseYaml(previous) as { dispositions?: { at?: unknown }[] } | null)?.dispositions ?? [];
  const last = history.at(-1)?.at;
  if (last === undefined || !(timeOf(last) > timeOf(disposition.at))) return disposition;
  return { ...disposition, at: new Date(timeOf(last)).toISOString() };
}

/** The lock file of a content folder's tension histories (not content: never committed, gone once released). */
export const DISPOSITIONS_LOCK = '.tensions.lock';

/** Replaces the file whole (a reader sees the old history or the new one, never half of it). */
function replaceFile(file: string, data: string): void {
  const temporary = `${file}.${process.pid}.tmp`;
  writeFile(temporary, data);
  renameSync(temporary, file);
}

/**
 * The content folder would not validate with the disposition: typically its tension is sighted
 * only in records the server keeps in its store (persisted councils), which the content folder
 * does not hold until they are exported. Nothing was written.
 */
export class DispositionNotWritableError extends Error {}

export function appendDisposition(contentDir: string, key: string, disposition: TensionDisposition): AppendedDisposition {
  // The key becomes a file name: only the key alphabet may reach the disk.
  if (!TENSION_KEY_PATTERN.test(key)) throw new Error(`"${key}" is not a tension key`);
  return withFileLock(path.join(contentDir, DISPOSITIONS_LOCK), () => appendLocked(contentDir, key, disposition));
}

function appendLocked(contentDir: string, key: string, disposition: TensionDisposition): AppendedDisposition {
  const relative = `tensions/${key}.yaml`;
  const file = path.join(contentDir, relative);
  const previous = existsSync(file) ? readFileSync(file, 'utf8') : null;
  const entry = stampAfter(previous, disposition);
  // An existing history grows by the new entry's lines only; its other lines keep their bytes.
  replaceFile(
    file,
    previous === null ? stringifyYaml({ key, dispositions: [entry] } satisfies TensionFile) : appendToSequence(previous, ['dispositions'], entry),
  );
  try {
    const content = loadContent(contentDir);
    const written = content.tensions.find((tension) => tension.file === relative)!;
    return { file: relative, dispositions: written.data.dispositions, disposition: entry };
  } catch (error) {
    if (previous === null) unlinkSync(file);
    else replaceFile(file, previous);
    if (error instanceof ContentError)
      throw new DispositionNotWritableError(`the disposition would make the content invalid, nothing was written:\n${error.message}`, { cause: error });
    throw error;
  }
}

/**
 * Appends a curator's merge decision to content/tension-merges.yaml (issue 29 item 4), under the
 * same lock as dispositions: the file grows by the new entry's lines only; the whole content is
 * validated (both keys name tensions between the same two voices, no circle) and a decision that
 * would break the build is rolled back.
 */
export function appendTensionMerge(contentDir: string, decision: TensionMergeDecision): { file: string; decisions: TensionMergeDecision[] } {
  return withFileLock(path.join(contentDir, DISPOSITIONS_LOCK), () => {
    const file = path.join(contentDir, TENSION_MERGES_FILE);
    const previous = existsSync(file) ? readFileSync(file, 'utf8') : null;
    replaceFile(
      file,
      previous === null ? stringifyYaml({ decisions: [decision] } satisfies TensionMergesFile) : appendToSequence(previous, ['decisions'], decision),
    );
    try {
      return { file: TENSION_MERGES_FILE, decisions: loadContent(contentDir).tensionMerges };
    } catch (error) {
      if (previous === null) unlinkSync(file);
      else replaceFile(file, previous);
      if (error instanceof ContentError)
        throw new Error(`the decision would make the content invalid, nothing was written:\n${error.message}`, { cause: error });
      throw error;
    }
  });
}
