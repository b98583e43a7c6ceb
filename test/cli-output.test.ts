/**
 * CLIs other than the curator's that can print a lot (issue 13, item 4). `npm run validate`
 * lists every problem of a content folder on stderr; with thousands of broken files that is
 * far more than one 64 KiB pipe buffer, and process.exit(1) used to cut it there for a slow
 * reader. `npm run export:records | head` must still write every record, and quietly.
 */
import { readdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { createSqliteStore } from '../storage/sqlite-store.ts';
import { tempDir } from '../devkit/app.ts';
import { writeFixtureContent } from '../devkit/fixture-content.ts';
import { runCliSlowly } from './helpers/slow-reader.ts';

describe('npm run validate', () => {
  it('a slow reader gets every problem of a badly broken content folder', async () => {
    const contentDir = writeFixtureContent();
    const broken = Array.from({ length: 2000 }, (_, n) => `BROKEN-${String(n).padStart(4, '0')}`);
    for (const name of broken) writeFileSync(path.join(contentDir, 'works', `${name}.md`), '---\ntitle: 1\n---\nbody\n');
    const run = await runCliSlowly('scripts/validate.ts', [contentDir], { slow: 'stderr' });
    expect(run.code).toBe(1);
    expect(Buffer.byteLength(run.stderr)).toBeGreaterThan(2 * 65_536);
    const named = new Set(run.stderr.match(/BROKEN-\d{4}/g));
    expect(named.size).toBe(broken.length);
  });
});

describe('npm run export:records', () => {
  const RECORDS = 1500;
  async function storeWithRecords(): Promise<string> {
    const storePath = path.join(tempDir('export-many'), 'store.db');
    const store = createSqliteStore(storePath);
    for (let n = 0; n < RECORDS; n++) {
      const id = `TST-D${String(n).padStart(6, '0')}`;
      await store.saveRecord({
        id,
        frontmatter: { id, question: `Question ${n}?` },
        body: 'Synthesis.',
        persisted_at: new Date(Date.UTC(2026, 1, 1, 0, 0, n)).toISOString(),
      });
    }
    await store.close();
    return storePath;
  }

  it('a slow reader gets a line for every one of well over 64 KiB of exported records', async () => {
    const contentDir = tempDir('export-many-content');
    const run = await runCliSlowly('scripts/export-records.ts', ['--store', await storeWithRecords(), '--content', contentDir]);
    expect(run.code, run.stderr).toBe(0);
    expect(Buffer.byteLength(run.stdout)).toBeGreaterThan(65_536);
    expect(run.stdout.match(/^wrote .*TST-D\d{6}\.md$/gm)).toHaveLength(RECORDS);
    expect(run.stdout).toMatch(new RegExp(`${RECORDS} records exported`));
  });

  it('a reader that stops early (head -c) still gets every record written, with no EPIPE error', async () => {
    const contentDir = tempDir('export-many-content');
    const run = await runCliSlowly('scripts/export-records.ts', ['--store', await storeWithRecords(), '--content', contentDir], { stopAfter: 100 });
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    expect(readdirSync(path.join(contentDir, 'divergences'))).toHaveLength(RECORDS);
  });
});
