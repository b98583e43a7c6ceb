/**
 * Backup and restore of the SQLite store (docs/OPERATIONS.md).
 *
 * Backup is online: `VACUUM INTO` copies the database as one read transaction sees it, so the
 * copy is consistent (every write committed before it began, none half-written) while the
 * server keeps writing (WAL: writers are not blocked by the reader). A file copy of a live
 * WAL database is not a backup: the WAL may hold committed writes the main file does not.
 * (libsql's better-sqlite3-style `backup()` is not implemented; VACUUM INTO is SQLite's own.)
 *
 * Restore puts a backup in place of the store with the server stopped: it refuses a file that
 * is not a store (not SQLite, damaged, or no schema_migrations), one of a schema version this
 * engine does not know, and a store that another process has open. The store it replaces is
 * kept beside it, renamed, so a restore never loses data either.
 */
import { closeSync, copyFileSync, existsSync, fsyncSync, openSync, readSync, renameSync, rmSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { LATEST_VERSION, MIGRATIONS } from '../migrations.ts';
import type { Database } from './db.ts';

const SQLITE_HEADER = 'SQLite format 3\0';
/** Tables every store of version 1 or later has; a SQLite file without them is not a store. */
const STORE_TABLES = ['schema_migrations', 'jobs', 'contributions', 'secrets'];

export class BackupError extends Error {
  constructor(
    readonly code: 'NOT_A_STORE' | 'UNKNOWN_SCHEMA_VERSION' | 'STORE_IN_USE' | 'TARGET_EXISTS' | 'NO_STORE',
    message: string,
  ) {
    super(message);
    this.name = 'BackupError';
  }
}

export interface StoreFileInfo {
  file: string;
  /** The highest schema migration applied. */
  version: number;
  bytes: number;
}

function openRaw(file: string): Database {
  const Libsql = createRequire(import.meta.url)('libsql') as new (file: string) => Database;
  return new Libsql(file);
}

function isSqliteFile(file: string): boolean {
  const descriptor = openSync(file, 'r');
  try {
    const header = Buffer.alloc(16);
    return readSync(descriptor, header, 0, 16, 0) === 16 && header.toString('latin1') === SQLITE_HEADER;
  } finally {
    closeSync(descriptor);
  }
}

/** What a file holds, if it is a store of a schema version this engine knows; BackupError otherwise. Opens it read-only in effect (reads only). */
export function inspectStoreFile(file: string): StoreFileInfo {
  if (!existsSync(file)) throw new BackupError('NO_STORE', `no file at ${file}`);
  if (!isSqliteFile(file)) throw new BackupError('NOT_A_STORE', `${file} is not a SQLite database`);
  const db = openRaw(file);
  try {
    const integrity = db.prepare('PRAGMA integrity_check').all() as { integrity_check: string }[];
    if (integrity.length !== 1 || integrity[0]!.integrity_check !== 'ok') {
      throw new BackupError('NOT_A_STORE', `${file} is damaged: ${integrity.map((row) => row.integrity_check).join('; ')}`);
    }
    const tables = new Set((db.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").all() as { name: string }[]).map((row) => row.name));
    const missing = STORE_TABLES.filter((table) => !tables.has(table));
    if (missing.length > 0) throw new BackupError('NOT_A_STORE', `${file} is not a Polyphony store: no table ${missing.join(', ')}`);
    const versions = (db.prepare('SELECT version FROM schema_migrations').all() as { version: number }[]).map((row) => Number(row.version));
    const known = new Set(MIGRATIONS.map((migration) => migration.version));
    const unknown = versions.filter((version) => !known.has(version));
    if (unknown.length > 0) {
      throw new BackupError(
        'UNKNOWN_SCHEMA_VERSION',
        `${file} has schema version ${Math.max(...unknown)}, which this engine does not know (it knows 1 to ${LATEST_VERSION}): restore it with the engine version that made it`,
      );
    }
    if (versions.length === 0) throw new BackupError('NOT_A_STORE', `${file} records no schema version`);
    return { file, version: Math.max(...versions), bytes: statSync(file).size };
  } catch (error) {
    if (error instanceof BackupError) throw error;
    throw new BackupError('NOT_A_STORE', `${file} cannot be read as a store: ${(error as Error).message}`);
  } finally {
    db.close();
  }
}

/** A consistent copy of the live store at `source` into the new file `target` (never overwritten). */
export function backupStore(source: string, target: string): StoreFileInfo {
  if (!existsSync(source)) throw new BackupError('NO_STORE', `no store at ${source}`);
  if (existsSync(target)) throw new BackupError('TARGET_EXISTS', `${target} exists; name a new file (a backup never overwrites one)`);
  const db = openRaw(source);
  try {
    // The live server's own busy_timeout: a checkpoint in progress does not fail the backup.
    db.exec('PRAGMA busy_timeout=5000');
    db.prepare('VACUUM INTO ?').run(path.resolve(target));
  } finally {
    db.close();
  }
  const descriptor = openSync(target, 'r+');
  try {
    fsyncSync(descriptor);
  } finally {
    closeSync(descriptor);
  }
  return inspectStoreFile(target);
}

/**
 * Replaces the store at `target` by the backup `source`, with the server stopped. Returns
 * where the replaced store was kept (undefined when there was none).
 */
export function restoreStore(source: string, target: string, now = new Date()): { restored: StoreFileInfo; previous: string | undefined } {
  const restored = inspectStoreFile(source);
  let previous: string | undefined;
  if (existsSync(target)) {
    assertNotInUse(target);
    previous = `${target}.before-restore-${now.toISOString().replace(/[:.]/g, '-')}`;
  }
  const staging = `${target}.restoring`;
  rmSync(staging, { force: true });
  copyFileSync(source, staging);
  const descriptor = openSync(staging, 'r+');
  try {
    fsyncSync(descriptor);
  } finally {
    closeSync(descriptor);
  }
  if (previous) renameSync(target, previous);
  // A WAL or shared-memory file of the replaced store must not be applied to the restored one.
  for (const suffix of ['-wal', '-shm']) rmSync(`${target}${suffix}`, { force: true });
  renameSync(staging, target);
  return { restored, previous };
}

/**
 * SQLite cannot leave WAL mode while another connection has the database open: the one
 * reliable sign, without a lock file, that a server (or any process) is using the store. Its
 * WAL is checkpointed into the file on the way, so the renamed store is whole.
 */
function assertNotInUse(file: string): void {
  const db = openRaw(file);
  try {
    db.exec('PRAGMA busy_timeout=0');
    // exec, not a prepared statement: libsql keeps a connection whose statement failed until
    // that statement is collected, and this process's own check would then hold the file.
    db.exec('PRAGMA journal_mode=DELETE');
    const mode = (db.prepare('PRAGMA journal_mode').get() as { journal_mode: string }).journal_mode;
    if (mode !== 'delete') throw new Error(`journal mode stayed ${mode}`);
  } catch (error) {
    throw new BackupError('STORE_IN_USE', `the store ${file} is open in another process (${(error as Error).message}): stop the server before restoring`);
  } finally {
    db.close();
  }
}
