/**
 * The embedder's worker pool and runtime (providers/embedder.ts): same numbers whichever
 * kernel or thread computes them, and no process-wide patches. Loads the real model, so it
 * runs in the full lane only (vitest.fast.config.ts).
 */
import module from 'node:module';
import { describe, expect, it } from 'vitest';
import { createUseLiteEmbedder } from '../providers/embedder.ts';

describe('embedder off the event loop', () => {
  it('gives the same vectors on worker threads, one call or many at once, in order', async () => {
    const onThread = await createUseLiteEmbedder({ workers: 0 });
    const offThread = await createUseLiteEmbedder({ workers: 1, offThread: true });
    const questions = [
      'What do the models disagree about when asked about memory?',
      'Who wrote the first synthesis?',
      '',
      'How is a tension between two voices named?',
      'What is an epistemic ring?',
    ];
    const expected = await onThread.embed(questions);
    // All at once: the pool merges questions queued behind a busy worker into one batch.
    const separately = await Promise.all(questions.map(async (question) => (await offThread.embed([question]))[0]!));
    const together = await offThread.embed(questions);
    for (const got of [separately, together]) {
      expect(got).toHaveLength(questions.length);
      got.forEach((vector, index) => {
        let dot = 0;
        for (let d = 0; d < vector.length; d++) dot += vector[d]! * expected[index]![d]!;
        expect(dot).toBeGreaterThan(0.99999);
      });
    }
    // different questions, different vectors: the merge did not shuffle them
    let cross = 0;
    for (let d = 0; d < 512; d++) cross += separately[0]![d]! * separately[1]![d]!;
    expect(cross).toBeLessThan(0.99);
  });

  it('runs one model on two threads on the native kernels, one on WebAssembly, with the same vectors, bit for bit', async () => {
    const texts = [
      'Sexual abstinence is the only truly safe method of birth control, and young people should be taught that it is the best choice.',
      'Who wrote the first synthesis?',
      'What is an epistemic ring?',
    ];
    const single = await createUseLiteEmbedder({ workers: 1, offThread: true, threads: 1, kernels: 'auto' });
    const threaded = await createUseLiteEmbedder({ workers: 1, offThread: true, threads: 2, kernels: 'auto' });
    const wasm = await createUseLiteEmbedder({ workers: 1, offThread: true, threads: 2, kernels: 'wasm' });
    await Promise.all([single.embed(['.']), threaded.embed(['.']), wasm.embed(['.'])]);
    expect(single.threadsInUse).toBe(1);
    // The native products' helper thread really runs where the kernels are built; the
    // WebAssembly graph is never threaded (ADR 0012), whatever was asked.
    expect(threaded.threadsInUse).toBe(threaded.kernelsInUse === 'native' ? 2 : 1);
    expect(wasm.kernelsInUse).toBe('wasm');
    expect(wasm.threadsInUse).toBe(1);
    for (const batch of [texts, [texts[0]!], [texts[1]!]]) {
      const [a, b] = await Promise.all([single.embed(batch), threaded.embed(batch)]);
      b.forEach((vector, index) => expect(Array.from(vector)).toEqual(Array.from(a[index]!)));
    }
  });
});

describe('the embedding runtime patches nothing process-wide', () => {
  it('leaves worker_threads.Worker, os.cpus and the global Worker as they were, on either backend, in this thread', async () => {
    const require = module.createRequire(import.meta.url);
    // The CommonJS exports, which a patch would replace (an ESM namespace would not show it).
    const workerThreads = require('node:worker_threads') as { Worker: unknown };
    const os = require('node:os') as { cpus: unknown };
    const before = { Worker: workerThreads.Worker, cpus: os.cpus, globalWorker: (globalThis as { Worker?: unknown }).Worker };
    // On this thread (workers: 0), asking for threads: the model loads here, not in a worker.
    for (const kernels of ['wasm', 'auto'] as const) {
      const embedder = await createUseLiteEmbedder({ workers: 0, threads: 2, kernels });
      expect((await embedder.embed(['What is an epistemic ring?']))[0]).toHaveLength(512);
    }
    expect(workerThreads.Worker).toBe(before.Worker);
    expect(os.cpus).toBe(before.cpus);
    expect((globalThis as { Worker?: unknown }).Worker).toBe(before.globalWorker);
  });
});
