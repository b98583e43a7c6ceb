/**
 * The search's admission (core/search/admission.ts): at most `slots` questions scored at once,
 * the others let in first come first served as slots free, a failed one freeing its slot; and
 * through the search index, questions asked together with one slot answer as when asked alone.
 */
import { describe, expect, it } from 'vitest';
import { createAdmission } from '../core/search/admission.ts';
import { loadConfig } from '../api/config.ts';
import { loadCorpus } from '../api/load-artifacts.ts';
import { REPO_ROOT } from '../core/paths.ts';
import { buildApp } from '../devkit/app.ts';
import path from 'node:path';

const tick = () => new Promise<void>((resolve) => setImmediate(resolve));

describe('search admission', () => {
  it('runs at most its slots at once, the others in order of arrival, a failure freeing its slot', async () => {
    const admission = createAdmission(2);
    const started: number[] = [];
    const finish = new Map<number, { resolve: () => void; reject: (error: Error) => void }>();
    const tasks = [0, 1, 2, 3, 4].map((n) =>
      admission.run(
        () =>
          new Promise<number>((resolve, reject) => {
            started.push(n);
            finish.set(n, { resolve: () => resolve(n), reject });
          }),
      ),
    );
    tasks.forEach((task) => task.catch(() => undefined));
    await tick();
    expect(started).toEqual([0, 1]);
    expect([admission.running, admission.waiting]).toEqual([2, 3]);
    finish.get(1)!.reject(new Error('failed'));
    await expect(tasks[1]).rejects.toThrow('failed');
    await tick();
    expect(started).toEqual([0, 1, 2]);
    finish.get(0)!.resolve();
    finish.get(2)!.resolve();
    await tick();
    expect(started).toEqual([0, 1, 2, 3, 4]);
    finish.get(3)!.resolve();
    finish.get(4)!.resolve();
    expect(await Promise.all([tasks[0], tasks[2], tasks[3], tasks[4]])).toEqual([0, 2, 3, 4]);
    expect([admission.running, admission.waiting]).toEqual([0, 0]);
    // A task that throws before its first await frees its slot too.
    await expect(admission.run(() => Promise.reject(new Error('at once')))).rejects.toThrow('at once');
    expect(admission.running).toBe(0);
  });

  it('refuses a slot count that is not a whole number of at least 1; SEARCH_CONCURRENCY is read and checked by name', () => {
    for (const slots of [0, -1, 1.5, Number.NaN]) expect(() => createAdmission(slots)).toThrow(/search slots/);
    expect(loadConfig({}).searchConcurrency).toBe(2);
    expect(loadConfig({ SEARCH_CONCURRENCY: '1' }).searchConcurrency).toBe(1);
    expect(() => loadConfig({ SEARCH_CONCURRENCY: '0' })).toThrow(/SEARCH_CONCURRENCY/);
    expect(() => loadConfig({ SEARCH_CONCURRENCY: 'many' })).toThrow(/SEARCH_CONCURRENCY/);
  });

  it('through the search index, one slot or the default two: questions asked together answer as when asked one by one', async () => {
    const built = await buildApp(path.join(REPO_ROOT, 'content'));
    const single = await loadCorpus(built.artifactsDir, built.corpus.search.embedder, undefined, { searchSlots: 1 });
    const questions = [
      'memory and forgetting across conversations',
      'is honesty more important than kindness',
      'the ethics of persuasion',
      'what is a tension',
    ];
    const alone = [];
    for (const question of questions) alone.push(await built.corpus.search.search(question, { limit: 6 }));
    // An embedder that takes its time: the first question holds the one slot while it waits, the
    // others wait their turn, counted (polyphony_search_waiting_questions reads it).
    const embedder = built.corpus.search.embedder;
    const slow = { ...embedder, embed: async (texts: string[]) => (await new Promise((resolve) => setTimeout(resolve, 30)), embedder.embed(texts)) };
    const queued = await loadCorpus(built.artifactsDir, slow, undefined, { searchSlots: 1 });
    const pending = questions.map((question) => queued.search.search(question, { limit: 6 }));
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(queued.search.waiting).toBe(questions.length - 1);
    expect(await Promise.all(pending)).toEqual(alone);
    expect(queued.search.waiting).toBe(0);
    for (const corpus of [single, built.corpus]) {
      const together = await Promise.all([...questions, ...questions].map((question) => corpus.search.search(question, { limit: 6 })));
      expect(together).toEqual([...alone, ...alone]);
    }
  });
});
