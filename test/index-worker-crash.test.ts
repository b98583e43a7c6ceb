/**
 * The vector index's worker thread dying while the server serves: the adapter tells once
 * (api/server.ts then marks `/api/ready` not ready), not when it is closed on purpose; every
 * search fails rather than hangs (the server's take the exact scan) until a new thread has
 * opened the index, with the memories shared with the old one shared again; none is started
 * after close or when the file changed under it. The thread is ended as a crash would end it,
 * through the Worker this file's mock of node:worker_threads keeps (which needs a module graph
 * of its own: the fast lane, sharing one, leaves this file out). Last, the same through the
 * server's wiring: artifacts built with the index, `/api/ready` and `/api/query` over HTTP.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type * as WorkerThreads from 'node:worker_threads';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { createVectorIndex } from '../providers/vector-index.ts';
import { openVectorIndexWorker } from '../providers/vector-index-worker.ts';
import { createVectorScanner } from '../core/search/vector-scan.ts';
import request from 'supertest';
import { createApp } from '../api/app.ts';
import { loadCorpus } from '../api/load-artifacts.ts';
import { createIndexHealth } from '../api/ops/index-health.ts';
import { createReadiness } from '../api/ops/readiness.ts';
import { REPO_ROOT } from '../core/paths.ts';
import { createHashedEmbedder } from '../devkit/hashed-embedder.ts';
import { buildArtifacts } from '../scripts/build.ts';

const threads = vi.hoisted(() => [] as WorkerThreads.Worker[]);
vi.mock('node:worker_threads', async (original) => {
  const actual = await original<typeof WorkerThreads>();
  class Kept extends actual.Worker {
    constructor(...args: ConstructorParameters<typeof actual.Worker>) {
      super(...args);
      threads.push(this);
    }
  }
  return { ...actual, Worker: Kept };
});

const DIMS = 16;
const dir = mkdtempSync(path.join(os.tmpdir(), 'index-crash-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function savedIndex(name: string) {
  const parameters = { quantization: 'f32' as const, connectivity: 16, expansionAdd: 64, expansionSearch: 64, addThreads: 1 };
  const index = await createVectorIndex(DIMS, parameters);
  const vectors = Float32Array.from({ length: 40 * DIMS }, (_, i) => Math.sin(i * 1.7));
  index.add(vectors, 0);
  const file = path.join(dir, name);
  index.save(file);
  return { file, vectors, parameters, index };
}

/** Resolves when `check` holds, polling; fails the test after `ms`. */
async function until(check: () => boolean | Promise<boolean>, ms = 5_000): Promise<void> {
  const started = Date.now();
  while (!(await check())) {
    if (Date.now() - started > ms) throw new Error('timed out');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

describe('the vector index worker thread dying', () => {
  it('tells once when its thread dies while serving (not when closed); searches fail until a new thread has opened the index, then answer as before', async () => {
    const { file, vectors, parameters, index } = await savedIndex('vectors.usearch');
    const failures: Error[] = [];
    let recoveries = 0;
    const worker = await openVectorIndexWorker(file, DIMS, parameters, {
      onFailure: (error) => failures.push(error),
      onRecovery: () => recoveries++,
      restartDelays: [50],
    });
    const query = vectors.slice(0, DIMS);
    const scanner = createVectorScanner(vectors, DIMS);
    const products = worker.shareScan(scanner.shared!);
    const rows = Uint32Array.of(1, 5, 9);
    expect(await worker.search(query, 3)).toHaveLength(3);
    const first = threads.at(-1)!;
    await first.terminate(); // as a crash of the thread would end it
    await expect(worker.search(query, 3)).rejects.toThrow(/exited/);
    await expect(products(query, rows)).rejects.toThrow(/exited/);
    expect(failures.map((error) => error.message)).toEqual([expect.stringMatching(/vector index worker exited/)]);
    // A new thread, with the scan memory shared again: the same answers as before the crash.
    await until(() => recoveries === 1);
    expect(threads.at(-1)).not.toBe(first);
    expect([...(await worker.search(query, 3))]).toEqual([...index.search(query, 3)]);
    expect([...(await products(query, rows))]).toEqual([...scanner.dotsOf(query, rows)]);
    // It dies again: told again, replaced again.
    await threads.at(-1)!.terminate();
    await until(() => recoveries === 2);
    expect(failures).toHaveLength(2);
    expect([...(await worker.search(query, 3))]).toEqual([...index.search(query, 3)]);
    await worker.close();
    await expect(worker.search(query, 3)).rejects.toThrow(/closed/);
    expect(failures).toHaveLength(2);
    const closed = await openVectorIndexWorker(file, DIMS, parameters, { onFailure: (error) => failures.push(error) });
    await closed.close();
    expect(failures).toHaveLength(2);
  });

  it('starts no new thread after close, nor when the file changed under it (a new build: the process must restart)', async () => {
    const { file, vectors, parameters } = await savedIndex('replaced.usearch');
    let recoveries = 0;
    const failures: Error[] = [];
    const options = { onFailure: (error: Error) => failures.push(error), onRecovery: () => recoveries++, restartDelays: [30] };
    const query = vectors.slice(0, DIMS);

    const closing = await openVectorIndexWorker(file, DIMS, parameters, options);
    await threads.at(-1)!.terminate();
    await closing.close();
    await new Promise((resolve) => setTimeout(resolve, 150));
    expect(recoveries).toBe(0);

    const replaced = await openVectorIndexWorker(file, DIMS, parameters, options);
    const { index: rebuilt } = await savedIndex('replaced.usearch'); // the same path, written again
    expect(rebuilt.size).toBe(40);
    await threads.at(-1)!.terminate();
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(recoveries).toBe(0);
    await expect(replaced.search(query, 3)).rejects.toThrow(/exited/);
    await replaced.close();
  });

  it('through the server: /api/ready not ready while the thread is down, ready again once replaced; /api/query answers the same throughout', async () => {
    const artifactsDir = path.join(dir, 'artifacts');
    const embedder = createHashedEmbedder();
    await buildArtifacts({ contentDir: path.join(REPO_ROOT, 'content'), artifactsDir, cacheDir: path.join(dir, 'cache'), embedder, approximateFrom: 0 });
    const errors: string[] = [];
    const health = createIndexHealth(
      () => {},
      (line) => errors.push(line),
    );
    const before = threads.length;
    // The graph index (not the codes' scan), searched in the index's thread as at a million
    // passages, for a shortlist well below the passages; the `max` fusion reads each record's own
    // cosine, so the exact scan gives the same answers (vector-index.test.ts).
    const corpus = await loadCorpus(
      artifactsDir,
      embedder,
      { fusion: 'max', approximateFrom: 0, approximateShortlist: 32, approximateCodesBelow: 0 },
      { onSearchFailure: health.failed, onSearchRecovery: health.recovered },
    );
    expect(threads.length).toBe(before + 1);
    const readiness = createReadiness({ store: { spendStatus: async () => ({}) } as unknown as Parameters<typeof createReadiness>[0]['store'] });
    health.attach(readiness);
    const app = createApp({ corpus, readiness, log: () => {} });
    const questions = ['memory and forgetting across conversations', 'is honesty more important than kindness'];
    const answers = async () =>
      Promise.all(
        questions.map(async (q) => {
          const response = await request(app).get('/api/query').query({ q });
          expect(response.status).toBe(200);
          return (response.body as { records?: { id: string; match: unknown }[] }).records?.map((record) => [record.id, record.match]);
        }),
      );
    expect((await request(app).get('/api/ready')).status).toBe(200);
    const expected = await answers();
    expect(expected.every((sources) => sources && sources.length > 0)).toBe(true);

    await threads.at(-1)!.terminate(); // as a crash of the thread would end it
    await until(() => errors.length === 1);
    const down = await request(app).get('/api/ready');
    expect(down.status).toBe(503);
    expect(JSON.stringify(down.body)).toMatch(/vector index's worker thread failed/);
    // Meanwhile the exact scan, slower: the same answers.
    const meanwhile = await answers();
    expect(meanwhile).toEqual(expected);

    // Replaced after a second (RESTART_DELAYS): ready again, and the approximate path's answers again.
    await until(async () => (await request(app).get('/api/ready')).status === 200, 10_000);
    expect(threads.length).toBe(before + 2);
    expect(await answers()).toEqual(expected);
  }, 60_000);
});
