/**
 * Backup and restore of the SQLite store (storage/sqlite/backup.ts): what a restore refuses
 * (not a store, a damaged or unknown-version one, a store in use) and what it keeps. The
 * online backup under a server's write load is test/backup.test.ts.
 */
import { spawn } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { tempDir } from '../devkit/app.ts';
import { LATEST_VERSION } from '../storage/migrations.ts';
import { BackupError, backupStore, inspectStoreFile, restoreStore } from '../storage/sqlite/backup.ts';
import type { Database } from '../storage/sqlite/db.ts';
import { createSqliteStore } from '../storage/sqlite-store.ts';

const Libsql = createRequire(import.meta.url)('libsql') as new (file: string) => Database;

function refusal(work: () => unknown): BackupError {
  try {
    work();
  } catch (error) {
    if (error instanceof BackupError) return error;
    throw error;
  }
  throw new Error('not refused');
}

/**
 * A store file with a marker row. Made by the driver in a template file that is then copied:
 * libsql releases a connection's file lock only once its statements are collected, so a store
 * closed in this process would still look open to the in-use check (a stopped server's
 * process has exited: nothing of it holds the file).
 */
async function storeWithSecret(file: string, value: string): Promise<void> {
  const template = path.join(tempDir('store-template'), 'template.db');
  const store = createSqliteStore(template);
  await store.secret('client-hash-salt');
  await store.close();
  backupStore(template, file);
  const db = new Libsql(file);
  db.prepare("INSERT INTO secrets (name, value) VALUES ('marker', ?)").run(value);
  db.close();
}

function marker(file: string): string | undefined {
  const db = new Libsql(file);
  try {
    return (db.prepare("SELECT value FROM secrets WHERE name = 'marker'").get() as { value: string } | undefined)?.value;
  } finally {
    db.close();
  }
}

describe('backup and restore of the SQLite store', () => {
  it('backs up to a new file only, and restores it, keeping the store it replaces', async () => {
    const dir = tempDir('store-backup');
    const live = path.join(dir, 'live.db');
    await storeWithSecret(live, 'before the backup');
    const copy = path.join(dir, 'copy.db');
    const info = backupStore(live, copy);
    expect(info).toMatchObject({ file: copy, version: LATEST_VERSION });
    expect(refusal(() => backupStore(live, copy)).code).toBe('TARGET_EXISTS');

    const db = new Libsql(live);
    db.prepare("UPDATE secrets SET value = 'after the backup' WHERE name = 'marker'").run();
    db.close();
    const { restored, previous } = restoreStore(copy, live, new Date('2026-11-26T10:00:00Z'));
    expect(restored.version).toBe(LATEST_VERSION);
    expect(marker(live)).toBe('before the backup');
    expect(previous).toBe(`${live}.before-restore-2026-11-26T10-00-00-000Z`);
    expect(marker(previous!)).toBe('after the backup');
    expect(existsSync(`${live}.restoring`)).toBe(false);
    // The restored store opens as a store.
    const reopened = createSqliteStore(live);
    expect(await reopened.secret('client-hash-salt')).toMatch(/\S/);
    await reopened.close();
  });

  it('refuses a file that is not a store, and one of a schema version this engine does not know', async () => {
    const dir = tempDir('store-restore-refusals');
    const target = path.join(dir, 'live.db');
    await storeWithSecret(target, 'kept');

    const text = path.join(dir, 'notes.txt');
    writeFileSync(text, 'SQLite format 2, honestly\n'.repeat(4));
    expect(refusal(() => restoreStore(text, target))).toMatchObject({ code: 'NOT_A_STORE', message: expect.stringMatching(/is not a SQLite database/) });

    const empty = path.join(dir, 'empty.db');
    const other = new Libsql(empty);
    other.exec('CREATE TABLE notes (body TEXT)');
    other.close();
    expect(refusal(() => restoreStore(empty, target))).toMatchObject({
      code: 'NOT_A_STORE',
      message: expect.stringMatching(/no table schema_migrations, jobs, contributions, secrets/),
    });

    const newer = path.join(dir, 'newer.db');
    backupStore(target, newer);
    const future = new Libsql(newer);
    future.prepare('INSERT INTO schema_migrations (version, applied_at) VALUES (?, ?)').run(LATEST_VERSION + 1, new Date().toISOString());
    future.close();
    expect(refusal(() => restoreStore(newer, target))).toMatchObject({
      code: 'UNKNOWN_SCHEMA_VERSION',
      message: expect.stringContaining(`schema version ${LATEST_VERSION + 1}, which this engine does not know`),
    });
    expect(refusal(() => inspectStoreFile(path.join(dir, 'absent.db'))).code).toBe('NO_STORE');
    // Nothing was replaced by a refused restore.
    expect(marker(target)).toBe('kept');
  });

  it('refuses to restore over a store another process has open', async () => {
    const dir = tempDir('store-in-use');
    const target = path.join(dir, 'live.db');
    await storeWithSecret(target, 'in use');
    const copy = path.join(dir, 'copy.db');
    backupStore(target, copy);
    // Another process with the store open, in WAL mode as the driver opens it.
    const holder = spawn(
      process.execPath,
      [
        '-e',
        `const Libsql = require(${JSON.stringify(createRequire(import.meta.url).resolve('libsql'))}); const db = new Libsql(process.argv[1]); db.exec('PRAGMA journal_mode=WAL'); db.prepare('SELECT count(*) FROM secrets').get(); console.log('open'); setInterval(() => {}, 1000);`,
        target,
      ],
      { stdio: ['ignore', 'pipe', 'inherit'] },
    );
    await new Promise<void>((resolve) => holder.stdout!.once('data', () => resolve()));
    expect(refusal(() => restoreStore(copy, target))).toMatchObject({
      code: 'STORE_IN_USE',
      message: expect.stringMatching(/stop the server before restoring/),
    });
    holder.kill('SIGKILL');
    await new Promise((resolve) => holder.once('exit', resolve));
    // Once it has exited (the server stopped), the restore goes ahead and keeps what it replaces.
    const { previous } = restoreStore(copy, target);
    expect(marker(previous!)).toBe('in use');
  });
});
