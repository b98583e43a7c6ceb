/**
 * A search asks for its question's embedding before it scores the words, and lets the
 * embedder send it off first: the server's worker pool dispatches what was asked together
 * from a microtask (providers/embedder.ts), so without a turn of the queue the worker would
 * only start once the words were scored, and embed after them rather than beside them.
 */
import { describe, expect, it } from 'vitest';
import { buildBm25Data, loadBm25Index, type FullTextIndex } from '../core/search/bm25.ts';
import { createSearchIndex } from '../core/search/search-index.ts';
import type { Embedder } from '../core/ports/embedder.ts';
import { createHashedEmbedder } from '../devkit/hashed-embedder.ts';
import { searchRecord } from './helpers/search-record.ts';

describe('the embedding beside the words', () => {
  it('dispatches the question to the embedder (from a microtask, as the worker pool does) before the words are scored', async () => {
    const events: string[] = [];
    const hashed = createHashedEmbedder(32);
    // As WorkerPool.run: the job is queued now and sent from a microtask.
    const embedder: Embedder = {
      id: hashed.id,
      dims: hashed.dims,
      embed: (texts) =>
        new Promise((resolve) => {
          queueMicrotask(() => {
            events.push('sent to the worker');
            resolve(hashed.embed(texts));
          });
        }),
    };
    const records = ['memory and models', 'bread and rivers', 'voices in dissent'].map((title, i) => searchRecord({ id: `r${i}`, title }));
    const chunks = records.map((record, i) => ({ record: i, text: `${record.title}: a passage about ${record.title}` }));
    const vectors = new Float32Array(chunks.length * 32);
    (await hashed.embed(chunks.map((chunk) => chunk.text))).forEach((vector, i) => vectors.set(vector, i * 32));
    const index = await loadBm25Index(await buildBm25Data({ recordCount: records.length, chunks }));
    const fullText: FullTextIndex = {
      ...index,
      passages: index.passages,
      scores: (...args) => {
        events.push('words scored');
        return index.scores(...args);
      },
    };
    const meta = { embedder: { id: hashed.id, dims: 32 }, records, chunk_records: chunks.map((chunk) => chunk.record), built_at: '' };
    const search = createSearchIndex({ meta, vectors, fullText, embedder, tuning: { floors: false } });
    const hits = await search.search('memory of models');
    expect(hits[0]!.record.id).toBe('r0');
    expect(events.slice(0, 2)).toEqual(['sent to the worker', 'words scored']);
  });
});
