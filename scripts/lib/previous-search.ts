/**
 * What a build can reuse of the previous build's search artifacts (still in place while the
 * new build writes beside them): each passage's identity (its record and text), the full-text
 * index to carry passages over from (bm25-build.ts), and the approximate vector index to grow
 * (vector-index-build.ts). A previous build that is missing a file, or cannot be read, is
 * simply not reused: the new build indexes everything.
 */
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { readLargeFile } from '../../content-files/read-large.ts';
import { openPassageFile } from '../../api/passage-file.ts';
import { artifactPaths } from '../../core/artifacts.ts';
import { decodeFullText, type PackedFullText } from '../../core/search/bm25.ts';
import type { SearchMeta } from '../../core/search/types.ts';
import type { PassageText } from '../../core/search/passages.ts';
import type { PreviousIndex } from './vector-index-build.ts';

export interface PreviousSearch {
  embedderId: string;
  dims: number;
  /** Each previous passage's identity, by its chunk number then. */
  identities: string[];
  /** The previous full-text index, read when asked for. */
  fullText(): PackedFullText;
  /** The previous passages' vectors (chunk-major), read when asked for. */
  vectors(): Float32Array;
  /** The previous approximate index, when there was one. */
  index?: PreviousIndex;
}

/** A passage's identity across builds: its record and its text (the vector follows from them and the embedder). */
export function passageIdentity(recordId: string, text: string): string {
  return createHash('sha256').update(recordId).update('\u0000').update(text).digest('base64');
}

/** Identities as the build writes them (data/search/identities.bin): each one's 32 bytes, in chunk order. */
export function encodeIdentities(identities: readonly string[]): Buffer {
  const bytes = Buffer.alloc(identities.length * 32);
  identities.forEach((identity, chunk) => bytes.write(identity, chunk * 32, 32, 'base64'));
  return bytes;
}

/** The identities of a file of `count` passages, or undefined when it holds another number. */
export function decodeIdentities(bytes: Buffer, count: number): string[] | undefined {
  if (bytes.length !== count * 32) return undefined;
  return Array.from({ length: count }, (_, chunk) => bytes.toString('base64', chunk * 32, chunk * 32 + 32));
}

/** Each passage's identity from its record and its text (the passages file must hold meta's passages). */
function hashIdentities(meta: SearchMeta, passages: PassageText): string[] {
  if (passages.count !== meta.chunk_records.length) throw new Error(`${passages.count} passages, meta lists ${meta.chunk_records.length}`);
  return meta.chunk_records.map((record, chunk) => passageIdentity(meta.records[record]!.id, passages.text(chunk)));
}

/** A vectors file as floats; a file of the wrong size is an error: that build is not reused. */
function readVectors(file: string, floats: number): Float32Array {
  const bytes = readLargeFile(file);
  if (bytes.length !== floats * 4) throw new Error(`${file} holds ${bytes.length} bytes, meta lists ${floats} floats`);
  return bytes.byteOffset % 4 === 0 ? new Float32Array(bytes.buffer, bytes.byteOffset, floats) : new Float32Array(Uint8Array.from(bytes).buffer);
}

export function readPreviousSearch(artifactsDir: string, log: (line: string) => void): PreviousSearch | undefined {
  const paths = artifactPaths(artifactsDir);
  if (![paths.searchMeta, paths.searchPassages, paths.searchFullText].every((file) => existsSync(file))) return undefined;
  try {
    const meta = JSON.parse(readFileSync(paths.searchMeta, 'utf8')) as SearchMeta;
    // Written by the build; hashed again from the passages where an older build did not write them.
    const identities =
      (existsSync(paths.searchIdentities) ? decodeIdentities(readFileSync(paths.searchIdentities), meta.chunk_records.length) : undefined) ??
      hashIdentities(meta, openPassageFile(paths.searchPassages));
    return {
      embedderId: meta.embedder.id,
      dims: meta.embedder.dims,
      identities,
      // Read each time they are asked for (once a build), and not held: at a million passages they are 3 GB.
      fullText: () => decodeFullText(readLargeFile(paths.searchFullText)),
      vectors: () => readVectors(paths.searchVectors, meta.chunk_records.length * meta.embedder.dims),
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
