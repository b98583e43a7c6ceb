/**
 * A merged tension on the static site (issue 29 item 4): the surviving tension's page names the
 * merged key, and the merged key keeps a page that points to it. Demo content copied to a
 * temporary folder, one merge decided as content, `astro build` in a child process.
 */
import { spawnSync } from 'node:child_process';
import { cpSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../core/paths.ts';
import { trackTensions } from '../core/tension-identity.ts';
import { deriveDivergence } from '../core/records.ts';
import { loadContent } from '../content-files/load-content.ts';
import { decideTensionMerge } from '../scripts/lib/curate-tension.ts';
import { buildApp, tempDir } from '../devkit/app.ts';

let siteDir: string;
let from: string;
let into: string;

beforeAll(async () => {
  const content = path.join(tempDir('tension-merge-pages'), 'content');
  cpSync(path.join(REPO_ROOT, 'content'), content, { recursive: true });
  const loaded = loadContent(content);
  const tensions = trackTensions(
    loaded.divergences.flatMap((entry) => deriveDivergence(entry.data, entry.body, loaded.registry).tensions),
    {},
  );
  const pair = tensions.flatMap((a) => tensions.filter((b) => b !== a && b.voices.join() === a.voices.join()).map((b) => [a, b] as const))[0]!;
  [into, from] = [pair[0].id, pair[1].id];
  decideTensionMerge(content, from, into, 'merged', 'curator');
  const built = await buildApp(content);
  siteDir = tempDir('tension-merge-site');
  const result = spawnSync(process.execPath, [path.join(REPO_ROOT, 'node_modules/astro/astro.js'), 'build', '--silent'], {
    cwd: REPO_ROOT,
    env: { ...process.env, ARTIFACTS_DIR: built.artifactsDir, SITE_OUT_DIR: siteDir, ASTRO_TELEMETRY_DISABLED: '1' },
    encoding: 'utf8',
  });
  if (result.status !== 0) throw new Error(`astro build failed: ${result.stderr}${result.stdout}`);
}, 300_000);

describe('a merged tension on the site', () => {
  it('the surviving page names the merged key; the merged key has a page pointing to the surviving one', () => {
    const surviving = readFileSync(path.join(siteDir, 'tensions', into, 'index.html'), 'utf8');
    expect(surviving).toContain(`merged from <code>${from}</code>`);
    const old = readFileSync(path.join(siteDir, 'tensions', from, 'index.html'), 'utf8');
    expect(old).toContain(`The tension <code>${from}</code> was merged into this one`);
    expect(old).toContain(`href="/tensions/${into}/"`);
    // the index lists the surviving tension only
    const index = readFileSync(path.join(siteDir, 'tensions', 'index.html'), 'utf8');
    expect(index).toContain(`data-key="${into}"`);
    expect(index).not.toContain(`data-key="${from}"`);
  });
});
