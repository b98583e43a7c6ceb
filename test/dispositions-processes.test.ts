/**
 * Dispositions from several processes (issue 29 item 6): two processes appending to one
 * tension's history at the same time both land, every entry once; the lock between them waits
 * for a live holder, names it when it gives up, and takes over a lock whose owner died.
 */
import { execFile } from 'node:child_process';
import { cpSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../core/paths.ts';
import { LockTimeoutError, withFileLock } from '../content-files/file-lock.ts';
import { loadContent } from '../content-files/load-content.ts';
import { DISPOSITIONS_LOCK } from '../content-files/tension-dispositions.ts';
import { tempDir } from '../devkit/app.ts';

const run = promisify(execFile);
const KEY = 'kestrel__orrery__where-beliefs-are-located';
const PER_PROCESS = 12;

function demoCopy(): string {
  const dir = path.join(tempDir('dispositions-processes'), 'content');
  cpSync(path.join(REPO_ROOT, 'content'), dir, { recursive: true });
  return dir;
}

function child(contentDir: string, by: string, startFile: string) {
  return run(
    process.execPath,
    [
      path.join(REPO_ROOT, 'node_modules/tsx/dist/cli.mjs'),
      path.join(REPO_ROOT, 'test/helpers/append-dispositions.ts'),
      contentDir,
      KEY,
      by,
      String(PER_PROCESS),
      startFile,
    ],
    { cwd: REPO_ROOT },
  );
}

describe('dispositions recorded by two processes at once', () => {
  it('keeps every entry of both, once, in a history that validates', async () => {
    const content = demoCopy();
    const before = loadContent(content).tensions.find((entry) => entry.data.key === KEY)!.data.dispositions.length;
    const startFile = path.join(path.dirname(content), 'start');
    const children = [child(content, 'curator-ana', startFile), child(content, 'curator-ben', startFile)];
    // Both children are up and polling before the start file appears.
    await new Promise((resolve) => setTimeout(resolve, 1500));
    writeFileSync(startFile, '');
    await Promise.all(children);

    const history = loadContent(content).tensions.find((entry) => entry.data.key === KEY)!.data.dispositions;
    expect(history).toHaveLength(before + 2 * PER_PROCESS);
    const reasons = history.flatMap((entry) => (entry.kind === 'held' ? [entry.reason] : []));
    for (const by of ['curator-ana', 'curator-ben']) {
      const mine = reasons.filter((reason) => reason.startsWith(`${by} `));
      // each process's entries, all there and in its own order
      expect(mine).toEqual(Array.from({ length: PER_PROCESS }, (_, index) => `${by} entry ${index}`));
    }
    expect(existsSync(path.join(content, DISPOSITIONS_LOCK))).toBe(false);
  }, 120_000);
});

describe('the lock file', () => {
  it('waits for a live holder, then gives up naming it, and writes nothing', () => {
    const lock = path.join(tempDir('file-lock'), 'held.lock');
    // This process is alive: its lock is not taken over.
    withFileLock(lock, () => {
      let ran = false;
      expect(() => withFileLock(lock, () => (ran = true), { waitMs: 50 })).toThrow(LockTimeoutError);
      expect(() => withFileLock(lock, () => (ran = true), { waitMs: 0 })).toThrow(new RegExp(`held by another writer \\(${process.pid} on `));
      expect(ran).toBe(false);
    });
    expect(existsSync(lock)).toBe(false);
  });

  it('takes over a lock whose owner on this host is gone, and releases it after a failure too', async () => {
    const dir = tempDir('file-lock');
    const lock = path.join(dir, 'stale.lock');
    // A process that has exited: its pid is free (not reused within this test).
    const { stdout } = await run(process.execPath, ['-e', 'process.stdout.write(String(process.pid))']);
    const { hostname } = await import('node:os');
    writeFileSync(lock, `${stdout}\n${hostname()}\n2026-01-01T00:00:00.000Z\n`);
    expect(withFileLock(lock, () => readFileSync(lock, 'utf8').split('\n')[0], { waitMs: 0 })).toBe(String(process.pid));
    expect(() =>
      withFileLock(lock, () => {
        throw new Error('the work failed');
      }),
    ).toThrow('the work failed');
    expect(existsSync(lock)).toBe(false);
  });
});
