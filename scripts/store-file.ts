/**
 * `npm run backup -- <file>` and `npm run restore -- <file>` (docs/OPERATIONS.md): an online,
 * consistent copy of the SQLite store while the server writes, and putting one back with the
 * server stopped. The store is STORE_PATH (or --store), as the server's. A PostgreSQL store is
 * backed up with pg_dump and restored with pg_restore (docs/OPERATIONS.md).
 */
import path from 'node:path';
import { parseArgs } from 'node:util';
import { REPO_ROOT } from '../core/paths.ts';
import { isSharedStore } from '../storage/open-store.ts';
import { BackupError, backupStore, restoreStore } from '../storage/sqlite/backup.ts';

export function runStoreFileCommand(command: 'backup' | 'restore', args: string[], env: NodeJS.ProcessEnv = process.env): number {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: { store: { type: 'string', default: env.STORE_PATH ?? path.join(REPO_ROOT, '.data', 'polyphony.db') } },
  });
  const usage = `usage: npm run ${command} -- <file> [--store <store file>]`;
  if (positionals.length !== 1) {
    console.error(usage);
    return 2;
  }
  const file = path.resolve(positionals[0]!);
  const store = values.store;
  if (isSharedStore(store)) {
    console.error(
      `STORE_PATH is a PostgreSQL store: ${command} it with ${command === 'backup' ? 'pg_dump --format=custom' : 'pg_restore into an empty database'} (docs/OPERATIONS.md, "Backup and restore")`,
    );
    return 2;
  }
  try {
    if (command === 'backup') {
      const copy = backupStore(path.resolve(store), file);
      console.log(`backed up ${store} to ${copy.file}: schema version ${copy.version}, ${copy.bytes} bytes`);
    } else {
      const { restored, previous } = restoreStore(file, path.resolve(store));
      console.log(
        `restored ${restored.file} (schema version ${restored.version}) to ${store}` +
          (previous ? `; the store it replaced is kept at ${previous}` : '') +
          '. Start the server: pending migrations run at start.',
      );
    }
    return 0;
  } catch (error) {
    if (error instanceof BackupError) {
      console.error(`${command} refused (${error.code}): ${error.message}`);
      return 1;
    }
    throw error;
  }
}
