/**
 * What a build can reuse of the previous build's search artifacts (still in place while the
 * new build writes beside them): each passage's identity (its record and text), the full-text
 * index to carry passages over from (bm25-build.ts), and the approximate vector index to grow
 * (vector-index-build.ts). A previous build that is missing a file, or cannot be read, is
 * simply not reused: the new build indexes everything.
 */
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { openPassageFile } from '../../api/passage-file.ts';
import { artifactPaths } from '../../core/artifacts.ts';
import { decodeFullText, type PackedFullText } from '../../core/search/bm25.ts';
import type { SearchMeta } from '../../core/search/types.ts';
import type { PreviousIndex } from './vector-index-build.ts';

export interface PreviousSearch {
  embedderId: string;
  dims: number;
  /** Each previous passage's identity, by its chunk number then. */
  identities: string[];
  /** The previous full-text index, read when first asked for. */
  fullText(): PackedFullText;
  /** The previous approximate index, when there was one. */
  index?: PreviousIndex;
}

/** A passage's identity across builds: its record and its text (the vector follows from them and the embedder). */
export function passageIdentity(recordId: string, text: string): string {
  return createHash('sha256').update(recordId).update('\u0000').update(text).digest('base64');
}

/** Identity → the passages (chunk numbers) that have it, each to be taken once. */
export function byIdentity(identities: readonly string[]): Map<string, number[]> {
  const chunks = new Map<string, number[]>();
  identities.forEach((identity, chunk) => {
    const list = chunks.get(identity);
    if (list) list.push(chunk);
    else chunks.set(identity, [chunk]);
  });
  return chunks;
}

export function readPreviousSearch(artifactsDir: string, log: (line: string) => void): PreviousSearch | undefined {
  const paths = artifactPaths(artifactsDir);
  if (![paths.searchMeta, paths.searchPassages, paths.searchFullText].every((file) => existsSync(file))) return undefined;
  try {
    const meta = JSON.parse(readFileSync(paths.searchMeta, 'utf8')) as SearchMeta;
    const passages = openPassageFile(paths.searchPassages);
    if (passages.count !== meta.chunk_records.length) throw new Error(`${passages.count} passages, meta lists ${meta.chunk_records.length}`);
    const identities = meta.chunk_records.map((record, chunk) => passageIdentity(meta.records[record]!.id, passages.text(chunk)));
    let fullText: PackedFullText | undefined;
    return {
      embedderId: meta.embedder.id,
      dims: meta.embedder.dims,
      identities,
      fullText: () => (fullText ??= decodeFullText(readFileSync(paths.searchFullText))),
      ...(existsSync(paths.searchVectorIndex)
        ? {
            index: {
              file: paths.searchVectorIndex,
              embedderId: meta.embedder.id,
              dims: meta.embedder.dims,
              identities,
              keys: meta.chunk_keys ? Uint32Array.from(meta.chunk_keys) : Uint32Array.from(identities.keys()),
            },
          }
        : {}),
    };
  } catch (error) {
    log(`the previous build's search artifacts cannot be reused (${(error as Error).message}): indexing everything`);
    return undefined;
  }
}
