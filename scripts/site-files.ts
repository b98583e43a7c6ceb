/**
 * After `astro build`: puts the files the API process otherwise serves from
 * `artifacts/public/` (record and concept twins, /llms.txt, /limitations.md, audio and its
 * transcripts, /<slug>.context.md ...) into the site's output folder, so that the folder alone
 * can go on any static host (docs/OPERATIONS.md). A file the site itself produced is never
 * replaced. Part of `npm run build`.
 *
 * Hard links where the two folders share a file system (copies where they do not): builds never
 * change a file of the artifacts in place (a new build writes a new folder, and links the twins
 * it keeps, scripts/lib/twin-reuse.ts), and at 250,000 works copying the 13 GB took 178 s.
 */
import { copyFileSync, existsSync, linkSync, mkdirSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { artifactPaths } from '../core/artifacts.ts';
import { pathsFromEnv, REPO_ROOT } from '../core/paths.ts';

export function copySiteFiles(artifactsDir: string, siteDir: string): { linked: number; copied: number } {
  const publicDir = artifactPaths(artifactsDir).public;
  if (!existsSync(publicDir)) throw new Error(`no ${publicDir}: run npm run build:data first`);
  const counts = { linked: 0, copied: 0 };
  let canLink = true;
  const place = (from: string, to: string) => {
    if (existsSync(to)) return; // the site's own file wins
    if (canLink) {
      try {
        linkSync(from, to);
        counts.linked++;
        return;
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EXDEV' && (error as NodeJS.ErrnoException).code !== 'EPERM') throw error;
        canLink = false; // another file system (or one without links): copy from now on
      }
    }
    copyFileSync(from, to);
    counts.copied++;
  };
  const walk = (from: string, to: string) => {
    mkdirSync(to, { recursive: true });
    for (const entry of readdirSync(from, { withFileTypes: true })) {
      const source = path.join(from, entry.name);
      const target = path.join(to, entry.name);
      if (entry.isDirectory()) walk(source, target);
      else place(source, target);
    }
  };
  walk(publicDir, siteDir);
  return counts;
}

if (process.argv[1] && path.resolve(process.argv[1]) === path.resolve(import.meta.filename)) {
  const siteDir = path.resolve(process.env.SITE_OUT_DIR ?? path.join(REPO_ROOT, 'dist'));
  const { linked, copied } = copySiteFiles(pathsFromEnv().artifactsDir, siteDir);
  console.log(
    `${linked} files linked and ${copied} copied from ${path.relative(process.cwd(), artifactPaths(pathsFromEnv().artifactsDir).public) || '.'} into ${path.relative(process.cwd(), siteDir) || '.'}`,
  );
}
