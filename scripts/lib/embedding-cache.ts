/**
 * Embedding cache keyed by sha256(model id + text): a rebuild only embeds what changed.
 * One append-only binary file per model: [32-byte key][dims × float32] per entry.
 *
 * The file is read when vectors are asked for, and only the entries asked for are kept: at a
 * million passages the file is 2 GB, and a map of every vector in it cost an incremental build
 * more than the passages it added (bench/README.md, issue 30).
 */
import { createHash } from 'node:crypto';
import { appendFileSync, closeSync, existsSync, fstatSync, mkdirSync, openSync, statSync, truncateSync } from 'node:fs';
import path from 'node:path';
import type { Embedder } from '../../providers/embedder.ts';
import { maxInputTokens } from '../../providers/openai-embedder.ts';
import { withFileLock } from '../../content-files/file-lock.ts';
import { readAt } from '../../content-files/read-large.ts';

/** Texts by number: an array, or a list that reads each when asked. */
export interface TextList {
  readonly length: number;
  at(index: number): string | undefined;
}

export interface EmbedProgress {
  (done: number, total: number): void;
}

export interface CachedEmbedResult {
  vectors: Float32Array[];
  embedded: number;
  cached: number;
}

/** What a build would send to the embedder: the texts the cache lacks (`npm run build -- --plan`). */
export interface EmbeddingPlan {
  texts: number;
  characters: number;
  /** The most tokens they can be billed for (openai-embedder.ts maxInputTokens: a token covers at least a byte). */
  maxTokens: number;
}

/**
 * An embedder that plans instead of embedding: a cache over it (createEmbeddingCache) counts what it
 * lacks into `plan`, answers zero vectors for it and appends nothing, so nothing is sent and the
 * cache stays true. Its own embed() is never reached through a cache; called directly, it refuses.
 */
export function planningEmbedder(embedder: Embedder): Embedder & { plan: EmbeddingPlan } {
  return {
    id: embedder.id,
    dims: embedder.dims,
    plan: { texts: 0, characters: 0, maxTokens: 0 },
    embed: () => Promise.reject(new Error('a planning embedder embeds nothing: ask through the embedding cache')),
  };
}

/** Entries read per block while looking for the wanted keys. */
const BLOCK_ENTRIES = 16_384;

export function createEmbeddingCache(cacheDir: string, embedder: Embedder) {
  const file = path.join(cacheDir, `${embedder.id.replace(/[^\w.@-]/g, '_')}-${embedder.dims}.bin`);
  const entryBytes = 32 + embedder.dims * 4;
  const keyOf = (text: string) => createHash('sha256').update(embedder.id).update('\u0000').update(text).digest('hex');

  /** The cached vectors of `wanted` keys (a torn last entry is ignored). */
  function lookUp(wanted: ReadonlySet<string>): Map<string, Float32Array> {
    const found = new Map<string, Float32Array>();
    if (wanted.size === 0 || !existsSync(file)) return found;
    // A key's first four bytes sift the entries before its hex is compared.
    const prefixes = new Set<number>();
    for (const key of wanted) prefixes.add(Buffer.from(key.slice(0, 8), 'hex').readUInt32LE(0));
    const fd = openSync(file, 'r');
    try {
      const whole = Math.floor(fstatSync(fd).size / entryBytes);
      const block = Buffer.alloc(BLOCK_ENTRIES * entryBytes);
      for (let first = 0; first < whole && found.size < wanted.size; first += BLOCK_ENTRIES) {
        // Entries cut by another process's torn-entry repair since the size was read are not read.
        const count = Math.floor(readAt(fd, block.subarray(0, Math.min(BLOCK_ENTRIES, whole - first) * entryBytes), first * entryBytes) / entryBytes);
        for (let at = 0; at < count; at++) {
          const offset = at * entryBytes;
          if (!prefixes.has(block.readUInt32LE(offset))) continue;
          const key = block.toString('hex', offset, offset + 32);
          if (!wanted.has(key) || found.has(key)) continue;
          const vector = new Float32Array(embedder.dims);
          new Uint8Array(vector.buffer).set(block.subarray(offset + 32, offset + entryBytes));
          found.set(key, vector);
        }
      }
    } finally {
      closeSync(fd);
    }
    return found;
  }

  return {
    file,
    /**
     * Every text's vector: the cache's, else embedded now (in batches, each appended as it comes).
     * `texts` may be a list that reads each text when asked (`at`), so a million passages are not
     * held as strings at once (issue 44); a text is asked for once to key it, and once more if embedded.
     */
    async embedAll(texts: TextList, onProgress?: EmbedProgress, batchSize = embedder.roundTexts ?? 256): Promise<CachedEmbedResult> {
      const keys = Array.from({ length: texts.length }, (_, index) => keyOf(texts.at(index)!));
      const entries = lookUp(new Set(keys));
      const missing: number[] = [];
      const wanted = new Set<string>();
      keys.forEach((key, index) => {
        if (!entries.has(key) && !wanted.has(key)) {
          wanted.add(key);
          missing.push(index);
        }
      });
      const plan = (embedder as Partial<ReturnType<typeof planningEmbedder>>).plan;
      if (plan) {
        for (const index of missing) {
          const text = texts.at(index)!;
          plan.texts++;
          plan.characters += text.length;
          plan.maxTokens += maxInputTokens([text]);
        }
        for (const index of missing) entries.set(keys[index]!, new Float32Array(embedder.dims));
        return { vectors: keys.map((key) => entries.get(key)!), embedded: missing.length, cached: texts.length - missing.length };
      }
      mkdirSync(cacheDir, { recursive: true });
      for (let start = 0; start < missing.length; start += batchSize) {
        const batch = missing.slice(start, start + batchSize);
        const vectors = await embedder.embed(batch.map((index) => texts.at(index)!));
        const out = Buffer.alloc(batch.length * entryBytes);
        batch.forEach((textIndex, i) => {
          const key = keys[textIndex]!;
          entries.set(key, vectors[i]!);
          Buffer.from(key, 'hex').copy(out, i * entryBytes);
          Buffer.from(vectors[i]!.buffer, vectors[i]!.byteOffset, vectors[i]!.byteLength).copy(out, i * entryBytes + 32);
        });
        // Under a lock shared by every process appending to this cache (test runs share one):
        // a torn last entry (a build stopped mid-write) is cut before appending, or every later
        // entry would be misread, and no append of another process is mistaken for one.
        withFileLock(`${file}.lock`, () => {
          const size = existsSync(file) ? statSync(file).size : 0;
          if (size % entryBytes !== 0) truncateSync(file, size - (size % entryBytes));
          appendFileSync(file, out);
        });
        onProgress?.(Math.min(start + batchSize, missing.length), missing.length);
      }
      return { vectors: keys.map((key) => entries.get(key)!), embedded: missing.length, cached: texts.length - missing.length };
    },
  };
}

/** The embedder through the on-disk cache: a text embedded once (by a build, a probe, an eval) is never embedded again. */
export function cachedEmbedder(embedder: Embedder, cacheDir: string): Embedder {
  const cache = createEmbeddingCache(cacheDir, embedder);
  return { id: embedder.id, dims: embedder.dims, embed: async (texts) => (await cache.embedAll(texts)).vectors };
}
