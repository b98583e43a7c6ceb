/** An approved import's Atlas page names its origin with a link back, and links the origin's bytes. */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { sha256Hex } from '../core/manifest.ts';
import { createSqliteStore } from '../storage/sqlite-store.ts';
import { approveImport } from '../scripts/lib/curation-imports.ts';
import { REPO_ROOT } from '../core/paths.ts';
import { buildApp, tempDir } from '../devkit/app.ts';
import { writeFixtureContent } from '../devkit/fixture-content.ts';

let siteDir: string;

beforeAll(async () => {
  const markdown = readFileSync(path.join(writeFixtureContent({ prefix: 'AAA' }), 'divergences', 'AAA-D1.md'), 'utf8');
  const content = writeFixtureContent({ prefix: 'BBB' });
  const store = createSqliteStore(':memory:');
  const provenance = {
    origin: 'http://a.test',
    origin_node: 'pn1:aa',
    origin_name: 'Alder Atlas',
    origin_prefix: 'AAA',
    original_id: 'AAA-D1',
    original_url: 'http://a.test/records/AAA-D1.md',
    content_hash: sha256Hex(markdown),
    key_id: 'aa',
    public_key: 'AAAA',
    signature: 'c2ln',
    licence: 'CC BY-SA 4.0',
    attribution: 'Alder Atlas contributors',
    pulled_at: '2026-01-01T00:00:00.000Z',
  };
  await store.stageImports({ origin: 'http://a.test', node_id: 'pn1:aa', public_key: 'AAAA', last_signed_at: '2026-01-01T00:00:00.000Z' }, [
    {
      id: 'imp_1',
      origin_node: 'pn1:aa',
      origin: 'http://a.test',
      record_id: 'AAA-D1',
      content_hash: sha256Hex(markdown),
      markdown,
      provenance,
      staged_at: '2026-01-01T00:00:00.000Z',
    },
  ]);
  await approveImport(store, content, 'imp_1', { by: 'cur' });
  await store.close();
  const built = await buildApp(content);
  expect(readFileSync(path.join(built.artifactsDir, 'public', 'records', 'AAA-D1.origin.md'), 'utf8')).toBe(markdown);
  siteDir = tempDir('federation-site');
  const result = spawnSync(process.execPath, [path.join(REPO_ROOT, 'node_modules/astro/astro.js'), 'build', '--silent'], {
    cwd: REPO_ROOT,
    env: { ...process.env, ARTIFACTS_DIR: built.artifactsDir, SITE_OUT_DIR: siteDir, ASTRO_TELEMETRY_DISABLED: '1' },
    encoding: 'utf8',
  });
  if (result.status !== 0) throw new Error(`astro build failed: ${result.stderr}${result.stdout}`);
}, 180_000);

describe('an imported record on the site', () => {
  it('shows the origin with a link back, the licence and attribution, and the origin bytes', () => {
    const page = readFileSync(path.join(siteDir, 'atlas/AAA-D1/index.html'), 'utf8');
    expect(page).toContain('href="http://a.test/records/AAA-D1.md"');
    expect(page).toContain('Alder Atlas (http://a.test)');
    expect(page).toContain('Alder Atlas contributors');
    expect(page).toContain('href="/records/AAA-D1.origin.md"');
    expect(page).toContain('Origin does not settle ownership.');
  });
});
