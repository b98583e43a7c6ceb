/**
 * The app the stdio server calls in local mode: the same wiring as api/server.ts
 * (artifacts, store, optional live panel), configured by the same environment, without
 * listening on a port. Logs go to stderr: stdout belongs to the MCP protocol.
 */
import type { Express } from 'express';
import { createApp } from '../app.ts';
import { loadConfig } from '../config.ts';
import { createLiveService, type LiveService } from '../live/service.ts';
import { applyPersistedRecords, loadCorpus } from '../load-artifacts.ts';
import { createPanel } from '../../providers/chat.ts';
import { createConfiguredEmbedder } from '../../providers/embeddings-config.ts';
import { createQuestionEmbedder } from '../../providers/question-embedder.ts';
import { loadPanelConfig } from '../../providers/panel-config.ts';
import { openStore } from '../../storage/open-store.ts';
import type { Store } from '../../storage/store.ts';

export interface LocalApp {
  app: Express;
  store: Store;
  summary: string;
}

export async function createLocalApp(env: NodeJS.ProcessEnv, log: (line: string) => void): Promise<LocalApp> {
  const config = loadConfig(env);
  const configured = await createConfiguredEmbedder(env, {
    workers: config.embedWorkers,
    offThread: config.embedWorkers > 0,
    threads: config.embedThreads,
    kernels: config.embedKernels,
  });
  // As the server's (api/server.ts): a question's embedding past its deadline is answered by words.
  const embedder = createQuestionEmbedder(configured, { log });
  const corpus = await loadCorpus(config.artifactsDir, embedder, undefined, { relevanceFloors: config.relevanceFloors });
  const store = await openStore(config.storePath);
  applyPersistedRecords(corpus, await store.listRecords(), new Date());

  let live: LiveService | undefined;
  const panelConfig = loadPanelConfig(config.panelConfig);
  if (panelConfig) {
    const { panel, missing } = createPanel(panelConfig, env);
    for (const problem of missing) log(`panel: ${problem}`);
    if (panel) {
      // No runner.resume(): the store may be shared with a running server, whose
      // interrupted jobs are its own to resume.
      live = createLiveService({ corpus, panel, store, log, concurrency: config.jobConcurrency });
    }
  }

  const app = createApp({
    corpus,
    store,
    log,
    limits: config.limits,
    ...(live ? { live } : {}),
  });
  const summary = `${corpus.site.name}: ${corpus.works.length} works, ${corpus.divergences.length} Atlas records from ${config.artifactsDir}; live panel ${live ? 'wired' : 'not wired'}`;
  return { app, store, summary };
}
