/** `npm run restore -- <file>`: puts a backup in place of the SQLite store, server stopped (scripts/store-file.ts). */
import { runStoreFileCommand } from './store-file.ts';

process.exitCode = runStoreFileCommand('restore', process.argv.slice(2));
