/**
 * The vector index's worker thread dying while the server serves: the adapter tells once
 * (api/server.ts then marks `/api/ready` not ready), not when it is closed on purpose, and every
 * search fails from then on rather than hanging. The thread is ended as a crash would end it,
 * through the Worker this file's mock of node:worker_threads keeps (which needs a module graph
 * of its own: the fast lane, sharing one, leaves this file out).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type * as WorkerThreads from 'node:worker_threads';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { createVectorIndex } from '../providers/vector-index.ts';
import { openVectorIndexWorker } from '../providers/vector-index-worker.ts';

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

describe('the vector index worker thread dying', () => {
  it('tells once when its thread dies while serving (not when closed), and every search then fails', async () => {
    const parameters = { quantization: 'f32' as const, connectivity: 16, expansionAdd: 64, expansionSearch: 64, addThreads: 1 };
    const index = await createVectorIndex(DIMS, parameters);
    const vectors = Float32Array.from({ length: 40 * DIMS }, (_, i) => Math.sin(i * 1.7));
    index.add(vectors, 0);
    const file = path.join(dir, 'vectors.usearch');
    index.save(file);
    const failures: Error[] = [];
    const worker = await openVectorIndexWorker(file, DIMS, parameters, { onFailure: (error) => failures.push(error) });
    const query = vectors.slice(0, DIMS);
    expect(await worker.search(query, 3)).toHaveLength(3);
    await threads.at(-1)!.terminate(); // as a crash of the thread would end it
    await expect(worker.search(query, 3)).rejects.toThrow(/exited/);
    expect(failures.map((error) => error.message)).toEqual([expect.stringMatching(/vector index worker exited/)]);
    await worker.close();
    expect(failures).toHaveLength(1);
    const closed = await openVectorIndexWorker(file, DIMS, parameters, { onFailure: (error) => failures.push(error) });
    await closed.close();
    expect(failures).toHaveLength(1);
  });
});
