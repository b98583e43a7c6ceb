/** Builds a content folder into temporary artifacts and returns the in-process app. */
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Express } from 'express';
import { createApp, type AppOptions } from '../api/app.ts';
import { loadCorpus, type Corpus } from '../api/load-artifacts.ts';
import { createUseLiteEmbedder, withQueryCache, type Embedder } from '../providers/embedder.ts';
import { buildArtifacts, type BuildResult } from '../scripts/build.ts';
import { REPO_ROOT } from '../core/paths.ts';
import { createHashedEmbedder } from './hashed-embedder.ts';

/**
 * Which embedder the test apps build with: `TEST_EMBEDDER=hashed` (set by vitest.fast.config.ts,
 * the fast lane) picks the deterministic stand-in of hashed-embedder.ts; unset or `use-lite`,
 * the real model (the full lane, `npm test`).
 */
export function testEmbedderKind(env: NodeJS.ProcessEnv = process.env): 'use-lite' | 'hashed' {
  const value = env.TEST_EMBEDDER?.trim() || 'use-lite';
  if (value === 'use-lite' || value === 'hashed') return value;
  throw new Error(`TEST_EMBEDDER=${value}: expected use-lite or hashed`);
}

let sharedEmbedder: Promise<Embedder> | undefined;

/** One embedder per test process: loading the model once keeps suites fast. */
export function testEmbedder(): Promise<Embedder> {
  sharedEmbedder ??=
    testEmbedderKind() === 'hashed' ? Promise.resolve(createHashedEmbedder()) : createUseLiteEmbedder().then((embedder) => withQueryCache(embedder));
  return sharedEmbedder;
}

export function tempDir(prefix: string): string {
  return mkdtempSync(path.join(os.tmpdir(), `polyphony-${prefix}-`));
}

/** Embedding cache shared across test runs in the repo's .cache, so reruns embed nothing new. */
export const TEST_CACHE_DIR = path.join(REPO_ROOT, '.cache', 'embeddings');

export interface BuiltApp {
  app: Express;
  corpus: Corpus;
  contentDir: string;
  artifactsDir: string;
  build: BuildResult;
}

export async function buildApp(contentDir: string, options: Partial<AppOptions> = {}): Promise<BuiltApp> {
  const artifactsDir = tempDir('artifacts');
  const embedder = await testEmbedder();
  const build = await buildArtifacts({ contentDir, artifactsDir, cacheDir: TEST_CACHE_DIR, embedder });
  const corpus = await loadCorpus(artifactsDir, embedder);
  const app = createApp({ corpus, log: () => {}, ...options });
  return { app, corpus, contentDir, artifactsDir, build };
}
