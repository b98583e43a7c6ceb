/** scripts/site-files.ts: the artifacts' public files put into the built site, the site's own files kept. */
import { mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { tempDir } from '../devkit/app.ts';
import { copySiteFiles } from '../scripts/site-files.ts';

describe('site files', () => {
  it('links every public file into the site (nested folders too), never replacing a file the site produced', () => {
    const artifacts = tempDir('site-files-artifacts');
    const site = tempDir('site-files-site');
    const pub = path.join(artifacts, 'public');
    mkdirSync(path.join(pub, 'records', 'deep'), { recursive: true });
    writeFileSync(path.join(pub, 'llms.txt'), 'from the artifacts');
    writeFileSync(path.join(pub, 'records', 'PLY-1.md'), '# one');
    writeFileSync(path.join(pub, 'records', 'deep', 'x.json'), '{}');
    writeFileSync(path.join(site, 'llms.txt'), 'the site’s own');
    const counts = copySiteFiles(artifacts, site);
    expect(counts.linked + counts.copied).toBe(2);
    expect(readFileSync(path.join(site, 'llms.txt'), 'utf8')).toBe('the site’s own');
    expect(readFileSync(path.join(site, 'records', 'PLY-1.md'), 'utf8')).toBe('# one');
    expect(readFileSync(path.join(site, 'records', 'deep', 'x.json'), 'utf8')).toBe('{}');
    // One file system here: links, not second copies of the bytes.
    expect(counts).toEqual({ linked: 2, copied: 0 });
    expect(statSync(path.join(site, 'records', 'PLY-1.md')).ino).toBe(statSync(path.join(pub, 'records', 'PLY-1.md')).ino);
  });

  it('says what to run when the artifacts have no public folder', () => {
    expect(() => copySiteFiles(tempDir('site-files-empty'), tempDir('site-files-out'))).toThrow(/build:data/);
  });
});
