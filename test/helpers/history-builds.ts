/**
 * Issue 45's scenario for the feeds, the records' history and the MCP changes tool: the fixture
 * committed in a real git repository (test/helpers/git-repo.ts), then one commit that adds an
 * Atlas record (TST-D9) and a work (TST-5), then one that changes TST-D1's tier (C3 → C1); built
 * after each, with a site URL. And the same content copied without .git (a tarball), built too.
 */
import { cpSync } from 'node:fs';
import type { Express } from 'express';
import { createApp } from '../../api/app.ts';
import { loadCorpus } from '../../api/load-artifacts.ts';
import { tempDir } from '../../devkit/app.ts';
import { createHashedEmbedder } from '../../devkit/hashed-embedder.ts';
import { buildArtifacts } from '../../scripts/build.ts';
import { createTestRepo, git, type TestRepo } from './git-repo.ts';

export const SITE_URL = 'https://atlas.example';
export const D1 = 'divergences/TST-D1.md';
export const D9 = 'divergences/TST-D9.md';
export const W5 = 'works/TST-5.md';

const embedder = createHashedEmbedder();

export interface HistoryBuild {
  app: Express;
  artifactsDir: string;
  rev: string;
  lines: string[];
}

export async function buildHistory(contentDir: string, env: NodeJS.ProcessEnv = { PUBLIC_BASE_URL: SITE_URL }): Promise<HistoryBuild> {
  const artifactsDir = tempDir('history-artifacts');
  const lines: string[] = [];
  await buildArtifacts({ contentDir, artifactsDir, cacheDir: tempDir('history-cache'), embedder, env, log: (line) => lines.push(line) });
  const corpus = await loadCorpus(artifactsDir, embedder);
  return { app: createApp({ corpus, log: () => {} }), artifactsDir, rev: corpus.manifest.published_releases.corpus_rev, lines };
}

export interface HistoryScenario {
  repo: TestRepo;
  commits: { fixture: string; added: string; tier: string };
  first: HistoryBuild;
  last: HistoryBuild;
  tarball: HistoryBuild;
}

/** A new Atlas record, TST-D9, made from TST-D1's file: another question, and no tier it did not earn. */
export function newRecordFrom(d1: string): string {
  return d1
    .replace('id: TST-D1', 'id: TST-D9')
    .replace('Can a refusal that came from training still be your own?', 'Is a promise kept under pressure still a promise?')
    .replace(/certification:\n( {2}.*\n)+/, '');
}

export async function historyScenario(): Promise<HistoryScenario> {
  const repo = createTestRepo();
  const fixture = git(repo.root, 'rev-parse', 'HEAD').trim();
  const first = await buildHistory(repo.content);
  repo.write(D9, newRecordFrom(repo.read(D1)));
  repo.write(W5, repo.read('works/TST-1.md').replace('id: TST-1', 'id: TST-5').replace('Tide tables of the northern harbour', 'Charts of the southern reef'));
  const added = repo.commit('Add TST-D9 and TST-5');
  repo.edit(D1, (text) => text.replace('tier: C3', 'tier: C1'));
  const tier = repo.commit('TST-D1: tier C1');
  const last = await buildHistory(repo.content);
  const copy = tempDir('history-tarball');
  cpSync(repo.content, copy, { recursive: true });
  const tarball = await buildHistory(copy);
  return { repo, commits: { fixture, added, tier }, first, last, tarball };
}
