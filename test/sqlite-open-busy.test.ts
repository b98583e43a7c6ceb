/**
 * Two processes opening one SQLite store at once (WORKERS=n on a file store): a process that
 * opens the file while another holds its lock waits for it (busy timeout) instead of failing at
 * once with SQLITE_BUSY. Seen in the drain test, where a replacement worker died on start.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { REPO_ROOT } from '../core/paths.ts';
import { openDatabase } from '../storage/sqlite/db.ts';

const dir = mkdtempSync(path.join(os.tmpdir(), 'polyphony-sqlite-busy-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

it('opening a store whose file another process has locked waits for the lock instead of failing', async () => {
  const file = path.join(dir, 'store.db');
  // The other process: a fresh file in rollback-journal mode, locked exclusively for a moment.
  const holder = spawn(
    process.execPath,
    [
      '-e',
      `const Libsql = require(${JSON.stringify(path.join(REPO_ROOT, 'node_modules/libsql'))});
       const db = new Libsql(${JSON.stringify(file)});
       db.exec('CREATE TABLE t (x); BEGIN EXCLUSIVE; INSERT INTO t VALUES (1);');
       process.stdout.write('locked\\n');
       Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 700);
       db.exec('COMMIT');
       process.stdout.write('released\\n');`,
    ],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  const output: string[] = [];
  await new Promise<void>((resolve) =>
    holder.stdout.on('data', (chunk: Buffer) => {
      output.push(chunk.toString());
      if (output.join('').includes('locked')) resolve();
    }),
  );
  const { db } = openDatabase(file);
  expect((db.prepare('PRAGMA journal_mode').get() as { journal_mode: string }).journal_mode).toBe('wal');
  expect((db.prepare('SELECT count(*) AS n FROM t').get() as { n: number }).n).toBe(1);
  db.close();
  await new Promise((resolve) => holder.on('exit', resolve));
  expect(output.join('')).toContain('released');
});
