/**
 * A build over a previous one (issue 30's incremental build): record twins of unchanged works
 * are taken from it, the full-text index carries its passages over, and what comes out is,
 * file for file, what a build from nothing writes.
 */
import { readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { artifactPaths } from '../core/artifacts.ts';
import { tempDir } from '../devkit/app.ts';
import { repeatedBuilds } from './helpers/build-twice.ts';
import { openPassageFile } from '../api/passage-file.ts';
import type { SearchMeta } from '../core/search/types.ts';
import { decodeIdentities, encodeIdentities, passageIdentity, readPreviousSearch } from '../scripts/lib/previous-search.ts';

function filesUnder(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => path.relative(dir, path.join(entry.parentPath, entry.name)))
    .sort();
}

describe('a build over the previous one', () => {
  it('takes the twins of unchanged works from it and writes the changed ones: the files a new build writes', async () => {
    const { contentDir, artifactsDir, lines, build } = repeatedBuilds('incremental', { now: () => new Date('2026-11-26T12:00:00Z') });
    const first = await build(artifactsDir);

    // Nothing changed: every twin taken, every file's front matter and body text from the content memo,
    // every passage's vector from the previous build (none embedded, the cache not read).
    lines.length = 0;
    const again = await build(artifactsDir);
    expect(lines).toContain(`record twins of ${first.works} unchanged works taken from the previous build, 0 written`);
    expect(lines.find((line) => line.startsWith('validated '))).toMatch(/\((\d+) parsed by an earlier build\)$/);
    const memoised = Number(/\((\d+) parsed by an earlier build\)$/.exec(lines.find((line) => line.startsWith('validated '))!)![1]);
    expect(memoised).toBeGreaterThanOrEqual(first.works);
    expect(again.embedded).toBe(0);
    // The identities the build wrote are the passages' own (record and text), as hashing them gives.
    const previous = readPreviousSearch(artifactsDir, () => {})!;
    const meta = JSON.parse(readFileSync(artifactPaths(artifactsDir).searchMeta, 'utf8')) as SearchMeta;
    const passages = openPassageFile(artifactPaths(artifactsDir).searchPassages);
    const hashed = meta.chunk_records.map((record, chunk) => passageIdentity(meta.records[record]!.id, passages.text(chunk)));
    expect(previous.identities).toEqual(hashed);
    // ...read from identities.bin, which the build wrote (not hashed again from the passages).
    expect(decodeIdentities(readFileSync(artifactPaths(artifactsDir).searchIdentities), hashed.length)).toEqual(hashed);
    expect(decodeIdentities(encodeIdentities(previous.identities), previous.identities.length + 1)).toBeUndefined();

    // The swap leaves one artifacts folder: no staging folder, no previous build moved aside.
    expect(lines.some((line) => /^the previous build removed in \d+ ms$/.test(line))).toBe(true);
    const parent = path.dirname(artifactsDir);
    expect(readdirSync(parent).filter((name) => name.startsWith(`${path.basename(artifactsDir)}.`))).toEqual([]);

    // A previous twin gone (one of a work's two files): that work's twins are written again.
    rmSync(path.join(artifactPaths(artifactsDir).public, 'records', 'PLY-11.json'));
    lines.length = 0;
    await build(artifactsDir);
    expect(lines).toContain(`record twins of ${first.works - 1} unchanged works taken from the previous build, 1 written`);
    expect(JSON.parse(readFileSync(path.join(artifactPaths(artifactsDir).public, 'records', 'PLY-11.json'), 'utf8'))).toMatchObject({ id: 'PLY-11' });

    // One work edited: its twins written again, with the edit.
    const edited = path.join(contentDir, 'works', 'PLY-10.md');
    writeFileSync(edited, `${readFileSync(edited, 'utf8').trimEnd()}\n\nA closing paragraph about *lighthouses* and tides.\n`);
    lines.length = 0;
    await build(artifactsDir);
    expect(lines).toContain(`record twins of ${first.works - 1} unchanged works taken from the previous build, 1 written`);
    const twin = JSON.parse(readFileSync(path.join(artifactPaths(artifactsDir).public, 'records', 'PLY-10.json'), 'utf8')) as { html: string; text: string };
    expect(twin.text).toContain('A closing paragraph about *lighthouses* and tides.');
    expect(twin.html).toContain('<em>lighthouses</em>');

    // The same files, byte for byte, as a build from nothing (no previous build, no cache).
    const fresh = tempDir('incremental-fresh');
    lines.length = 0;
    await build(fresh, tempDir('incremental-fresh-cache'));
    expect(lines.some((line) => line.includes('(0 parsed by an earlier build)'))).toBe(true);
    for (const folder of ['public', 'data']) {
      const grownFiles = filesUnder(path.join(artifactsDir, folder));
      expect(grownFiles).toEqual(filesUnder(path.join(fresh, folder)));
      for (const file of grownFiles) {
        expect(readFileSync(path.join(artifactsDir, folder, file)).equals(readFileSync(path.join(fresh, folder, file))), `${folder}/${file}`).toBe(true);
      }
    }
  }, 180_000);
});
