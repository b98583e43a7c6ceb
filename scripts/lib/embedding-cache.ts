/**
 * Embedding cache keyed by sha256(model id + text): a rebuild only embeds what changed.
 * One append-only binary file per model: [32-byte key][dims × float32] per entry.
 */
import { createHash } from 'node:crypto';
import { appendFileSync, existsSync, mkdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import type { Embedder } from '../../providers/embedder.ts';

export interface EmbedProgress {
  (done: number, total: number): void;
}

export interface CachedEmbedResult {
  vectors: Float32Array[];
  embedded: number;
  cached: number;
}

export function createEmbeddingCache(cacheDir: string, embedder: Embedder) {
  const file = path.join(cacheDir, `${embedder.id.replace(/[^\w.@-]/g, '_')}-${embedder.dims}.bin`);
  const entryBytes = 32 + embedder.dims * 4;
  const entries = new Map<string, Float32Array>();
  if (existsSync(file)) {
    const buffer = readFileSync(file);
    const whole = buffer.length - (buffer.length % entryBytes); // a torn last write is ignored
    for (let offset = 0; offset < whole; offset += entryBytes) {
      const key = buffer.subarray(offset, offset + 32).toString('hex');
      const vector = new Float32Array(embedder.dims);
      new Uint8Array(vector.buffer).set(buffer.subarray(offset + 32, offset + entryBytes));
      entries.set(key, vector);
    }
  }
  const keyOf = (text: string) => createHash('sha256').update(embedder.id).update('\u0000').update(text).digest('hex');

  return {
    file,
    size: () => entries.size,
    async embedAll(texts: readonly string[], onProgress?: EmbedProgress, batchSize = 256): Promise<CachedEmbedResult> {
      const keys = texts.map(keyOf);
      const missing: number[] = [];
      const wanted = new Set<string>();
      keys.forEach((key, index) => {
        if (!entries.has(key) && !wanted.has(key)) {
          wanted.add(key);
          missing.push(index);
        }
      });
      mkdirSync(cacheDir, { recursive: true });
      for (let start = 0; start < missing.length; start += batchSize) {
        const batch = missing.slice(start, start + batchSize);
        const vectors = await embedder.embed(batch.map((index) => texts[index]!));
        const out = Buffer.alloc(batch.length * entryBytes);
        batch.forEach((textIndex, i) => {
          const key = keys[textIndex]!;
          entries.set(key, vectors[i]!);
          Buffer.from(key, 'hex').copy(out, i * entryBytes);
          Buffer.from(vectors[i]!.buffer, vectors[i]!.byteOffset, vectors[i]!.byteLength).copy(out, i * entryBytes + 32);
        });
        appendFileSync(file, out);
        onProgress?.(Math.min(start + batchSize, missing.length), missing.length);
      }
      return { vectors: keys.map((key) => entries.get(key)!), embedded: missing.length, cached: texts.length - missing.length };
    },
  };
}
