import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

export interface BuildPaths {
  contentDir: string;
  artifactsDir: string;
  cacheDir: string;
}

/** Paths from the environment, resolved once: CONTENT_DIR, ARTIFACTS_DIR, EMBEDDING_CACHE_DIR. */
export function pathsFromEnv(env: NodeJS.ProcessEnv = process.env): BuildPaths {
  return {
    contentDir: path.resolve(env.CONTENT_DIR ?? path.join(REPO_ROOT, 'content')),
    artifactsDir: path.resolve(env.ARTIFACTS_DIR ?? path.join(REPO_ROOT, 'artifacts')),
    cacheDir: path.resolve(env.EMBEDDING_CACHE_DIR ?? path.join(REPO_ROOT, '.cache', 'embeddings')),
  };
}
