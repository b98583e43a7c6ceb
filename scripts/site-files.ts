/**
 * After `astro build`: copies the files the API process otherwise serves from
 * `artifacts/public/` (record and concept twins, /llms.txt, /limitations.md, audio and its
 * transcripts, /<slug>.context.md ...) into the site's output folder, so that the folder alone
 * can go on any static host (docs/OPERATIONS.md). A file the site itself produced is never
 * replaced. Part of `npm run build`.
 */
import { cpSync, existsSync } from 'node:fs';
import path from 'node:path';
import { artifactPaths } from '../core/artifacts.ts';
import { pathsFromEnv, REPO_ROOT } from '../core/paths.ts';

export function copySiteFiles(artifactsDir: string, siteDir: string): void {
  const publicDir = artifactPaths(artifactsDir).public;
  if (!existsSync(publicDir)) throw new Error(`no ${publicDir}: run npm run build:data first`);
  cpSync(publicDir, siteDir, { recursive: true, force: false, errorOnExist: false });
}

if (process.argv[1] && path.resolve(process.argv[1]) === path.resolve(import.meta.filename)) {
  const siteDir = path.resolve(process.env.SITE_OUT_DIR ?? path.join(REPO_ROOT, 'dist'));
  copySiteFiles(pathsFromEnv().artifactsDir, siteDir);
  console.log(
    `copied ${path.relative(process.cwd(), artifactPaths(pathsFromEnv().artifactsDir).public) || '.'} into ${path.relative(process.cwd(), siteDir) || '.'}`,
  );
}
