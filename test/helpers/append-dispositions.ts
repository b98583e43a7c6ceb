/**
 * Child process of test/dispositions-processes.test.ts: waits until the start file exists (so
 * the two children write at the same time), then appends `count` held dispositions by `by` to
 * one tension through appendDisposition, as the server and the curator CLI do.
 * Usage: tsx append-dispositions.ts <contentDir> <key> <by> <count> <startFile>
 */
import { existsSync } from 'node:fs';
import { appendDisposition } from '../../content-files/tension-dispositions.ts';

const [contentDir, key, by, count, startFile] = process.argv.slice(2);
if (!contentDir || !key || !by || !count || !startFile) throw new Error('usage: append-dispositions.ts <contentDir> <key> <by> <count> <startFile>');
const pause = new Int32Array(new SharedArrayBuffer(4));
while (!existsSync(startFile)) Atomics.wait(pause, 0, 0, 5);
for (let index = 0; index < Number(count); index++) {
  const at = new Date(Date.UTC(2026, 0, 1, 0, 0, index)).toISOString();
  appendDisposition(contentDir, key, { kind: 'held', by, at, reason: `${by} entry ${index}` });
}
