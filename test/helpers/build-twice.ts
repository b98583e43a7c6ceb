/**
 * A copy of the demo content and the folders to build it over and over (incremental-build
 * tests): each build's log lines collected, the hashed embedder, one cache for every build.
 */
import { cpSync } from 'node:fs';
import path from 'node:path';
import { REPO_ROOT } from '../../core/paths.ts';
import { tempDir } from '../../devkit/app.ts';
import { createHashedEmbedder } from '../../devkit/hashed-embedder.ts';
import { buildArtifacts, type BuildOptions } from '../../scripts/build.ts';

export function repeatedBuilds(prefix: string, options: Partial<BuildOptions> = {}) {
  const contentDir = tempDir(`${prefix}-content`);
  cpSync(path.join(REPO_ROOT, 'content'), contentDir, { recursive: true });
  const artifactsDir = tempDir(`${prefix}-artifacts`);
  const cacheDir = tempDir(`${prefix}-cache`);
  const embedder = createHashedEmbedder();
  const lines: string[] = [];
  /** A build of the content into `dir` (the artifacts folder by default; with its own cache folder: `cache`), its lines added to `lines`. */
  const build = (dir = artifactsDir, cache = cacheDir) =>
    buildArtifacts({ contentDir, artifactsDir: dir, cacheDir: cache, embedder, ...options, log: (line) => lines.push(line) });
  return { contentDir, artifactsDir, cacheDir, embedder, lines, build };
}
