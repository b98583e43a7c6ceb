/**
 * Run as its own process (`node --import tsx store-probe.ts <location>`): opens the store at
 * the location through openStore, as the server does, and prints whether the PostgreSQL
 * client (`pg`) was loaded into the process, as JSON on stdout.
 */
import { createRequire } from 'node:module';
import { openStore } from '../../storage/open-store.ts';

const location = process.argv[2]!;
let opened = false;
try {
  const store = await openStore(location);
  await store.secret('probe');
  await store.close();
  opened = true;
} catch {
  // A PostgreSQL URL nobody listens on: the driver was still loaded to try it.
}
const loaded = Object.keys(createRequire(import.meta.url).cache).filter((file) => /[\\/]node_modules[\\/](pg|pg-pool|pg-protocol)[\\/]/.test(file));
process.stdout.write(JSON.stringify({ opened, pgLoaded: loaded.length > 0 }));
