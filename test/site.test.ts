/**
 * The static site builds from the same artifacts as the API and is served by the same app.
 * (Browser tests come with issue #6; this checks the built HTML itself.)
 */
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import request from 'supertest';
import { beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../api/app.ts';
import { REPO_ROOT } from '../scripts/lib/paths.ts';
import { buildApp, tempDir, type BuiltApp } from './helpers/app.ts';
import { writeFixtureContent } from './helpers/fixture-content.ts';

let built: BuiltApp;
let siteDir: string;

function htmlFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    return entry.isDirectory() ? htmlFiles(full) : entry.name.endsWith('.html') ? [full] : [];
  });
}

beforeAll(async () => {
  built = await buildApp(writeFixtureContent());
  siteDir = tempDir('site');
  const result = spawnSync(process.execPath, [path.join(REPO_ROOT, 'node_modules/astro/astro.js'), 'build', '--silent'], {
    cwd: REPO_ROOT,
    env: { ...process.env, ARTIFACTS_DIR: built.artifactsDir, SITE_OUT_DIR: siteDir, ASTRO_TELEMETRY_DISABLED: '1' },
    encoding: 'utf8',
  });
  if (result.status !== 0) throw new Error(`astro build failed: ${result.stderr}${result.stdout}`);
}, 120_000);

describe('static site', () => {
  it('builds one page per record with the verbatim answers', () => {
    const page = readFileSync(path.join(siteDir, 'atlas/TST-D1/index.html'), 'utf8');
    expect(page).toContain('Origin does not settle ownership.\n  Endorsement under pressure does.  ');
    expect(page).toContain('alder-1');
    expect(page).toContain('href="/records/TST-D1.md"');
    expect(page).toContain('/atlas/TST-D2/');
    expect(readFileSync(path.join(siteDir, 'works/TST-1/index.html'), 'utf8')).toContain('Tide tables');
  });

  it('every page has one h1, landmarks, and little JavaScript', () => {
    const files = htmlFiles(siteDir);
    expect(files.length).toBeGreaterThan(10);
    for (const file of files) {
      const html = readFileSync(file, 'utf8');
      expect(html.match(/<h1[\s>]/g), file).toHaveLength(1);
      expect(html, file).toMatch(/<main[\s>]/);
      expect(html, file).toMatch(/<nav[\s>]/);
      const scripts = [...html.matchAll(/<script[^>]*>([\s\S]*?)<\/script>/g)].reduce((sum, match) => sum + match[1]!.length, 0);
      expect(scripts, file).toBeLessThan(200 * 1024);
      expect(statSync(file).size).toBeLessThan(1024 * 1024);
    }
  });

  it('the home page shows the manifest counts', () => {
    const html = readFileSync(path.join(siteDir, 'index.html'), 'utf8');
    const counts = built.corpus.manifest.counts;
    expect(html).toContain(`<dt>Corpus works</dt><dd>${counts.corpus.total_works}</dd>`);
    expect(html).toContain(`<dt>Atlas records</dt><dd>${counts.atlas.live_records}</dd>`);
  });

  it('is served by the API process beside the agent files', async () => {
    const app = createApp({ corpus: built.corpus, siteDir, log: () => {} });
    const home = await request(app).get('/');
    expect(home.status).toBe(200);
    expect(home.headers['content-type']).toMatch(/text\/html/);
    expect(home.headers['content-security-policy']).toContain("frame-ancestors 'none'");
    expect(home.headers['x-content-type-options']).toBe('nosniff');
    const works = await request(app).get('/works/');
    expect(works.headers['content-type']).toMatch(/text\/html/);
    const twin = await request(app).get('/records/TST-1.json');
    expect(twin.body.id).toBe('TST-1');
    const health = await request(app).get('/api/health');
    expect(health.body.capabilities.site).toBe(true);
  });
});
