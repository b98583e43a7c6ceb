/**
 * The build's embedding cache appended to by several processes at once (test runs share one in
 * .cache/, builds may overlap): every entry of every process stays readable, none is cut as if
 * torn (scripts/lib/embedding-cache.ts appends under a lock shared by them).
 */
import { spawn } from 'node:child_process';
import { statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../core/paths.ts';
import { tempDir } from '../devkit/app.ts';
import { createHashedEmbedder } from '../devkit/hashed-embedder.ts';
import { createEmbeddingCache } from '../scripts/lib/embedding-cache.ts';

const PER_PROCESS = 400;

function child(cacheDir: string, name: string, startFile: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const proc = spawn(
      process.execPath,
      [
        path.join(REPO_ROOT, 'node_modules/tsx/dist/cli.mjs'),
        path.join(REPO_ROOT, 'test/helpers/append-embeddings.ts'),
        cacheDir,
        name,
        String(PER_PROCESS),
        startFile,
      ],
      { cwd: REPO_ROOT },
    );
    let out = '';
    proc.stdout.on('data', (chunk) => (out += chunk));
    proc.stderr.on('data', (chunk) => (out += chunk));
    proc.on('error', reject);
    proc.on('exit', (code) => (code === 0 ? resolve(out) : reject(new Error(`child ${name} exited ${code}: ${out}`))));
  });
}

describe('the embedding cache appended to by processes at once', () => {
  it('keeps every entry of each, aligned and readable', async () => {
    const dir = tempDir('embedding-cache-processes');
    const startFile = path.join(dir, 'start');
    const names = ['a', 'b', 'c'];
    const running = names.map((name) => child(dir, name, startFile));
    writeFileSync(startFile, '');
    const outputs = await Promise.all(running);
    for (const out of outputs) expect(JSON.parse(out.trim().split('\n').at(-1)!)).toEqual({ embedded: PER_PROCESS });

    const embedder = createHashedEmbedder();
    const cache = createEmbeddingCache(dir, embedder);
    expect(statSync(cache.file).size).toBe(names.length * PER_PROCESS * (32 + embedder.dims * 4));
    const texts = names.flatMap((name) => Array.from({ length: PER_PROCESS }, (_, at) => `${name} passage ${at} about tides and harbours`));
    const read = await cache.embedAll(texts);
    expect(read).toMatchObject({ embedded: 0, cached: texts.length });
    expect(read.vectors).toEqual(await embedder.embed(texts));
  }, 120_000);
});
