/**
 * An incremental build at size (issue 30: +1,000 passages on a million in at most 2 minutes):
 * new works added to a corpus that `bench/scale.ts --keep <dir>` built and kept, then
 * `buildArtifacts` run again over the same artifacts and cache folders, as a deployment's
 * build after a merge. New works are ~640 words of ArguAna sentences (4 passages each), drawn
 * with a seed of their own so their passages are new to the embedding cache; vectors are the
 * scale benchmark's (each sentence embedded by the real model once, a passage the sum of its
 * sentences'), so embedding the new passages costs what it costs there.
 *
 * The same-run reference is the machine's own speed at the one thing no build can skip: reading
 * every content file (`cat`-like, before the build; the second of two reads, from the page cache). Run it twice: the first run over a
 * build made by an older engine also fills the caches that engine did not keep.
 *
 *   node --max-old-space-size=14000 --import tsx bench/grow.ts --root /tmp/scale-keep/1000000 [--add 250]
 */
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { createUseLiteEmbedder } from '../providers/embedder.ts';
import { buildArtifacts } from '../scripts/build.ts';
import { buildBeirContent } from '../scripts/lib/beir.ts';
import { ratio } from './lib.ts';
import { sentencePool, sentenceVectorEmbedder, syntheticDocs } from './scale.ts';

/** Every file of the content folder read once: the reference. */
function readEveryFile(dir: string): { files: number; bytes: number; ms: number } {
  const started = performance.now();
  let files = 0;
  let bytes = 0;
  for (const entry of readdirSync(dir, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue;
    bytes += readFileSync(path.join(entry.parentPath, entry.name)).length;
    files++;
  }
  return { files, bytes, ms: performance.now() - started };
}

async function main() {
  const { values } = parseArgs({
    options: {
      root: { type: 'string' },
      add: { type: 'string', default: '250' },
      cache: { type: 'string', default: path.join(os.tmpdir(), 'polyphony-scale-cache') },
    },
  });
  const root = values.root;
  if (!root || !existsSync(path.join(root, 'content', 'works')) || !existsSync(path.join(root, 'artifacts'))) {
    console.log('usage: bench/grow.ts --root <a folder kept by bench/scale.ts --keep, with content/ and artifacts/> [--add 250]');
    process.exitCode = 2;
    return;
  }
  const works = path.join(root, 'content', 'works');
  // New ids after the largest, and a seed of their own: the new works' passages are new.
  const largest = readdirSync(works).reduce((most, name) => Math.max(most, Number(/^SYN-(\d+)\.md$/.exec(name)?.[1] ?? -1)), -1);
  const add = Number(values.add);
  const pool = sentencePool();
  const embedder = await sentenceVectorEmbedder(await createUseLiteEmbedder({ workers: 2 }), pool, values.cache, () => {});
  const content = buildBeirContent(syntheticDocs(add, pool, 1_000_000 + largest), { name: 'synthetic', idPrefix: 'SYN' });
  let written = 0;
  for (const [file, text] of content.files) {
    if (!/^works\/SYN-\d+\.md$/.test(file)) continue;
    const id = `SYN-${largest + 1 + written}`;
    writeFileSync(path.join(works, `${id}.md`), text.replace(/^id: SYN-\d+$/m, `id: ${id}`));
    written++;
  }
  // Read twice, the second read reported: the first measures how much of the folder the page cache held.
  readEveryFile(path.join(root, 'content'));
  const reference = readEveryFile(path.join(root, 'content'));
  console.log(
    `reference: every content file read once, ${reference.files} files, ${(reference.bytes / 2 ** 20).toFixed(0)} MB, in ${(reference.ms / 1000).toFixed(1)} s`,
  );
  console.log(`added ${written} works (${largest + 1}…${largest + written})`);
  const started = performance.now();
  const log = (line: string) => {
    const memory = process.memoryUsage();
    console.log(
      `  [${((performance.now() - started) / 1000).toFixed(1)} s, heap ${(memory.heapUsed / 2 ** 20).toFixed(0)} MB, RSS ${(memory.rss / 2 ** 20).toFixed(0)} MB] ${line}`,
    );
  };
  const built = await buildArtifacts({
    contentDir: path.join(root, 'content'),
    artifactsDir: path.join(root, 'artifacts'),
    cacheDir: path.join(root, 'cache'),
    embedder,
    log,
  });
  const seconds = (performance.now() - started) / 1000;
  console.log(
    `incremental build: +${written} works, ${built.embedded} passages embedded, ${built.chunks} passages in all: ${seconds.toFixed(1)} s (${ratio(seconds * 1000, reference.ms)} the reference)`,
  );
  process.exit(0);
}

void main();
