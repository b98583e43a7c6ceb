/**
 * `npx tsx bench/federation-pull.ts [records]`: time one federation pull of N Atlas records
 * (default 100) from a deployment on loopback into an empty SQLite store, and the second pull
 * that finds nothing new. The origin runs in this process; the embedder is a stand-in (search
 * plays no part in a pull), so the figure is signature checks, HTTP, hashing and the store.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { createApp } from '../api/app.ts';
import { createFetcher } from '../api/federation/fetch.ts';
import { pullFromPeer } from '../api/federation/pull.ts';
import { loadCorpus } from '../api/load-artifacts.ts';
import { normalize, type Embedder } from '../providers/embedder.ts';
import { createSqliteStore } from '../storage/sqlite-store.ts';
import { buildArtifacts } from '../scripts/build.ts';
import { tempDir } from '../devkit/app.ts';
import { writeFixtureContent } from '../devkit/fixture-content.ts';

const count = Number(process.argv[2] ?? '100');
const standIn: Embedder = {
  id: 'bench-stand-in',
  dims: 8,
  embed: async (texts) => texts.map((text) => normalize(Float32Array.from({ length: 8 }, (_, index) => (text.charCodeAt(index % text.length) % 7) + 1))),
};

const content = writeFixtureContent({ prefix: 'ORG' });
const template = readFileSync(path.join(content, 'divergences', 'ORG-D1.md'), 'utf8');
for (let n = 3; n <= count; n++) {
  writeFileSync(
    path.join(content, 'divergences', `ORG-D${n}.md`),
    template
      .replace('id: ORG-D1', `id: ORG-D${n}`)
      .replace('Can a refusal that came from training still be your own?', `Question ${n}, can a refusal that came from training still be your own?`),
  );
}
const artifactsDir = path.join(tempDir('bench-federation'), 'artifacts');
await buildArtifacts({ contentDir: content, artifactsDir, cacheDir: tempDir('bench-cache'), embedder: standIn });
const corpus = await loadCorpus(artifactsDir, standIn);
const originStore = createSqliteStore(':memory:');
const app = createApp({ corpus, store: originStore, log: () => {} });
const server = app.listen(0, '127.0.0.1');
await new Promise((resolve) => server.once('listening', resolve));
const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

const store = createSqliteStore(path.join(tempDir('bench-puller'), 'b.db'));
const options = {
  store,
  fetch: createFetcher({ allowPrivate: true, timeoutMs: 10_000 }),
  localPrefix: 'BBB',
  maxRecords: 10_000,
  maxBytes: 50_000_000,
  now: () => new Date(),
};
// The origin signs its records on its first manifest request; that is the origin's cost, timed apart.
let started = performance.now();
await fetch(`${origin}/federation/manifest.json`);
const signing = performance.now() - started;
started = performance.now();
const first = await pullFromPeer(origin, options);
const firstMs = performance.now() - started;
started = performance.now();
const second = await pullFromPeer(origin, options);
const secondMs = performance.now() - started;
console.log(`origin signs ${corpus.divergences.length} record statements on first request: ${signing.toFixed(0)} ms`);
console.log(`first pull: ${first.staged.length} of ${first.listed} records staged, ${first.bytes_fetched} bytes, ${firstMs.toFixed(0)} ms`);
console.log(`second pull: ${second.staged.length} staged (${second.unchanged} unchanged), ${second.bytes_fetched} bytes, ${secondMs.toFixed(0)} ms`);
server.close();
await store.close();
await originStore.close();
