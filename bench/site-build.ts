/**
 * The build at size (issue 30, part 5): `scripts/build.ts` (data, record twins) and then the
 * Astro site (`astro build` + `scripts/site-files.ts`, as `npm run build` runs them) over N
 * synthetic works, timed beside the same two steps over the demo content in the same run (the
 * reference: absolute times differ 2–3× between machines here). Works are ~640 words of
 * ArguAna sentences (bench/scale.ts's corpus), 4 passages each; vectors are the stand-in
 * embedder's (embedding is measured by bench/embed.ts), so the figures are the build's own.
 *
 *   npx tsx bench/site-build.ts [--works 25000] [--keep]
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { REPO_ROOT } from '../core/paths.ts';
import { createUseLiteEmbedder } from '../providers/embedder.ts';
import { buildArtifacts } from '../scripts/build.ts';
import { buildBeirContent } from '../scripts/lib/beir.ts';
import { ms, ratio, time } from './lib.ts';
import { sentencePool, standInEmbedder, syntheticDocs } from './scale.ts';

interface BuildTimes {
  dataMs: number;
  siteMs: number;
  pages: number;
  peakMb: number;
}

/** Files under a folder, recursively: the pages the site build wrote. */
function countFiles(dir: string): number {
  let count = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) count += entry.isDirectory() ? countFiles(path.join(dir, entry.name)) : 1;
  return count;
}

/** `astro build` then the site files step, in child processes, with their peak memory (GNU time). */
function buildSite(artifactsDir: string, outDir: string): { ms: number; peakMb: number } {
  const env = { ...process.env, ARTIFACTS_DIR: artifactsDir, SITE_OUT_DIR: outDir, ASTRO_TELEMETRY_DISABLED: '1' };
  const started = performance.now();
  let peakKb = 0;
  for (const command of [
    [path.join(REPO_ROOT, 'node_modules', '.bin', 'astro'), 'build', '--silent'],
    [process.execPath, '--import', 'tsx', path.join(REPO_ROOT, 'scripts', 'site-files.ts')],
  ]) {
    const result = spawnSync('/usr/bin/time', ['-f', '%M', ...command], { cwd: REPO_ROOT, env, encoding: 'utf8', maxBuffer: 64 << 20 });
    if (result.status !== 0) throw new Error(`${command.join(' ')} failed:\n${result.stderr.slice(-2000)}`);
    peakKb = Math.max(peakKb, Number(result.stderr.trim().split('\n').pop()));
  }
  return { ms: performance.now() - started, peakMb: peakKb / 1024 };
}

async function measure(label: string, contentDir: string, root: string): Promise<BuildTimes> {
  const real = await createUseLiteEmbedder();
  const artifactsDir = path.join(root, `${label}-artifacts`);
  const outDir = path.join(root, `${label}-site`);
  const [, dataMs] = await time(() =>
    buildArtifacts({ contentDir, artifactsDir, cacheDir: path.join(root, 'cache'), embedder: standInEmbedder(real), log: () => {} }),
  );
  const site = buildSite(artifactsDir, outDir);
  return { dataMs, siteMs: site.ms, pages: countFiles(outDir), peakMb: site.peakMb };
}

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { works: { type: 'string', default: '25000' }, keep: { type: 'boolean', default: false } } });
  const works = Number(values.works);
  const root = mkdtempSync(path.join(os.tmpdir(), 'polyphony-bench-site-'));
  try {
    const reference = await measure('demo', path.join(REPO_ROOT, 'content'), root);
    const contentDir = path.join(root, 'content');
    mkdirSync(path.join(contentDir, 'works'), { recursive: true });
    mkdirSync(path.join(contentDir, 'pages'), { recursive: true });
    const content = buildBeirContent(syntheticDocs(works, sentencePool(), works), { name: 'synthetic', idPrefix: 'SYN' });
    for (const [file, text] of content.files) writeFileSync(path.join(contentDir, file), text);
    const large = await measure('large', contentDir, root);
    console.log(
      `demo content (reference): data build ${ms(reference.dataMs)}, site ${ms(reference.siteMs)}, ${reference.pages} files, site peak ${Math.round(reference.peakMb)} MB`,
    );
    console.log(
      `${works} works: data build ${ms(large.dataMs)} (${ratio(large.dataMs, reference.dataMs)} of the demo's), ` +
        `site ${ms(large.siteMs)} (${ratio(large.siteMs, reference.siteMs)}), ${large.pages} files, site peak ${Math.round(large.peakMb)} MB; ` +
        `${(large.siteMs / works).toFixed(1)} ms of site build a work`,
    );
  } finally {
    if (values.keep) console.log(`kept ${root}`);
    else rmSync(root, { recursive: true, force: true });
  }
}

void main();
