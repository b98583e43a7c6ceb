/**
 * One of the processes of test/embedding-cache-processes.test.ts: embeds `count` texts of its own
 * through the embedding cache in `cacheDir` (the hashed embedder, small batches: many appends),
 * once the start file exists, so the processes append at the same time.
 */
import { existsSync } from 'node:fs';
import { createHashedEmbedder } from '../../devkit/hashed-embedder.ts';
import { createEmbeddingCache } from '../../scripts/lib/embedding-cache.ts';

const [cacheDir, name, count, startFile] = process.argv.slice(2);
while (!existsSync(startFile!)) await new Promise((resolve) => setTimeout(resolve, 5));
const texts = Array.from({ length: Number(count) }, (_, at) => `${name} passage ${at} about tides and harbours`);
const result = await createEmbeddingCache(cacheDir!, createHashedEmbedder()).embedAll(texts, undefined, 7);
console.log(JSON.stringify({ embedded: result.embedded }));
