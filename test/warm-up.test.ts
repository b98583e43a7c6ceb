/** The server's warm-up (api/warm-up.ts): the model loaded first, then searches for titles spread through the corpus. */
import { describe, expect, it } from 'vitest';
import { warmUp, warmUpQuestions } from '../api/warm-up.ts';
import type { Embedder } from '../core/ports/embedder.ts';

describe('warm-up', () => {
  it('asks for distinct titles spread evenly through the records, at most the count', () => {
    const records = Array.from({ length: 100 }, (_, i) => ({ title: `Title ${Math.floor(i / 2)}` }));
    expect(warmUpQuestions(records, 5)).toEqual(['Title 0', 'Title 10', 'Title 20', 'Title 30', 'Title 40']);
    expect(warmUpQuestions([{ title: ' ' }, { title: 'Only' }, { title: 'Only' }], 12)).toEqual(['Only']);
    expect(warmUpQuestions([], 12)).toEqual([]);
  });

  it('loads the model before the first search, then runs each search in turn', async () => {
    const calls: string[] = [];
    const embedder = { embed: async (texts: string[]) => (calls.push(`embed ${texts.length}`), texts.map(() => new Float32Array(2))) } as unknown as Embedder;
    let running = 0;
    const search = async (query: string) => {
      expect(running).toBe(0); // one at a time
      running++;
      await new Promise((resolve) => setTimeout(resolve, 1));
      running--;
      calls.push(`search ${query}`);
      return [];
    };
    const records = Array.from({ length: 30 }, (_, i) => ({ title: `T${i}` }));
    const done = await warmUp(embedder, search, records, 3);
    expect(calls).toEqual(['embed 1', 'search T0', 'search T10', 'search T20']);
    expect(done.searches).toBe(3);
    await expect(warmUp({ embed: () => Promise.reject(new Error('no model')) } as unknown as Embedder, search, records)).rejects.toThrow(
      'the question embedder failed: no model',
    );
    const broken = () => Promise.reject(new Error('index gone'));
    await expect(warmUp(embedder, broken, records)).rejects.toThrow('a warm-up search failed: index gone');
  });

  it('with an embeddings endpoint, a slow or failing endpoint fails no step: the searches answer by words', async () => {
    const down = { embed: () => Promise.reject(new Error('no answer within 400 ms')) } as unknown as Embedder;
    const asked: { query: string; byWords: boolean }[] = [];
    const search: Parameters<typeof warmUp>[1] = async (query, options) => {
      asked.push({ query, byWords: typeof options?.onVectorsUnavailable === 'function' });
      return [];
    };
    const done = await warmUp(down, search, [{ title: 'A' }, { title: 'B' }], 2, { remote: true });
    expect(done.searches).toBe(2);
    expect(asked).toEqual([
      { query: 'A', byWords: true },
      { query: 'B', byWords: true },
    ]);
  });
});
