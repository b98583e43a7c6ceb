/**
 * One process of test/build-heap.test.ts, started with a small heap: reads a content folder
 * through the content memo and builds its search (passages, vectors, full-text index) as the
 * build does, then prints what it built and the heap it ended with.
 */
import path from 'node:path';
import { openContentMemo } from '../../content-files/content-memo.ts';
import { loadContent } from '../../content-files/load-content.ts';
import { deriveWork } from '../../core/records.ts';
import { encodeFullText } from '../../core/search/fulltext.ts';
import { createHashedEmbedder } from '../../devkit/hashed-embedder.ts';
import { buildSearch } from '../../scripts/lib/search-build.ts';

const [contentDir, cacheDir] = process.argv.slice(2);
const memo = openContentMemo(path.join(cacheDir!, 'memo.jsonl'));
const content = loadContent(contentDir!, { memo });
memo.save();
const works = content.works.map((entry) => deriveWork(entry.data, entry.bodyText ?? entry.body, 'seed'));
const search = await buildSearch(content, works, [], { cacheDir: cacheDir!, embedder: createHashedEmbedder() }, () => {});
const fullText = encodeFullText(search.fullText);
console.log(
  JSON.stringify({
    works: works.length,
    chunks: search.meta.chunk_records.length,
    passageBytes: search.passages.length,
    fullTextBytes: fullText.length,
    heapMb: Math.round(process.memoryUsage().heapUsed / 2 ** 20),
  }),
);
