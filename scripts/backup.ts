/** `npm run backup -- <file>`: an online, consistent copy of the SQLite store (scripts/store-file.ts). */
import { runStoreFileCommand } from './store-file.ts';

process.exitCode = runStoreFileCommand('backup', process.argv.slice(2));
