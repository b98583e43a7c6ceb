/**
 * A build over a previous one (issue 30's incremental build): record twins of unchanged works
 * are taken from it, the full-text index carries its passages over, and what comes out is,
 * file for file, what a build from nothing writes.
 */
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { artifactPaths } from '../core/artifacts.ts';
import { tempDir } from '../devkit/app.ts';
import { repeatedBuilds } from './helpers/build-twice.ts';

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

    // Nothing changed: every twin taken.
    lines.length = 0;
    await build(artifactsDir);
    expect(lines).toContain(`record twins of ${first.works} unchanged works taken from the previous build, 0 written`);

    // One work edited: its twins written again, with the edit.
    const edited = path.join(contentDir, 'works', 'PLY-10.md');
    writeFileSync(edited, `${readFileSync(edited, 'utf8').trimEnd()}\n\nA closing paragraph about *lighthouses* and tides.\n`);
    lines.length = 0;
    await build(artifactsDir);
    expect(lines).toContain(`record twins of ${first.works - 1} unchanged works taken from the previous build, 1 written`);
    const twin = JSON.parse(readFileSync(path.join(artifactPaths(artifactsDir).public, 'records', 'PLY-10.json'), 'utf8')) as { html: string; text: string };
    expect(twin.text).toContain('A closing paragraph about *lighthouses* and tides.');
    expect(twin.html).toContain('<em>lighthouses</em>');

    // The same files, byte for byte, as a build from nothing.
    const fresh = tempDir('incremental-fresh');
    await build(fresh);
    for (const folder of [path.join('public', 'records'), path.join('data', 'search')]) {
      const grownFiles = filesUnder(path.join(artifactsDir, folder));
      expect(grownFiles).toEqual(filesUnder(path.join(fresh, folder)));
      for (const file of grownFiles) {
        expect(readFileSync(path.join(artifactsDir, folder, file)).equals(readFileSync(path.join(fresh, folder, file))), `${folder}/${file}`).toBe(true);
      }
    }
  }, 180_000);
});
