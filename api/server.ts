/**
 * Entry point of `npm start` / `npm run serve`: load the artifacts, serve API and site.
 * WORKERS=<n> forks n processes sharing the port (node:cluster) and the store.
 */
import cluster from 'node:cluster';
import { createApp } from './app.ts';
import { createHttpServer } from './http/http-server.ts';
import { loadConfig, type ServerConfig } from './config.ts';
import { createLiveService, type LiveService } from './live/service.ts';
import { applyPersistedRecords, ArtifactsMissingError, loadCorpus } from './load-artifacts.ts';
import { createPanel } from '../providers/chat.ts';
import { createUseLiteEmbedder, describeEmbedder, withQueryCache } from '../providers/embedder.ts';
import { loadPanelConfig } from '../providers/panel-config.ts';
import { isSharedStore, openStore } from '../storage/open-store.ts';
import { appendDisposition } from '../content-files/tension-dispositions.ts';

async function main(): Promise<void> {
  const started = Date.now();
  const config = configOrExit();
  const log = (line: string) => console.error(`[server] ${line}`);
  // Questions are embedded on worker threads (EMBED_WORKERS), off the event loop, on the
  // native kernels where they were built (EMBED_THREADS threads each), else on WebAssembly.
  const useLite = await createUseLiteEmbedder({
    workers: config.embedWorkers,
    offThread: config.embedWorkers > 0,
    threads: config.embedThreads,
    kernels: config.embedKernels,
  });
  if (config.embedWorkers > 0) log(`question embeddings: ${describeEmbedder(useLite, config)}`);
  const embedder = withQueryCache(useLite);
  let corpus;
  try {
    corpus = await loadCorpus(config.artifactsDir, embedder);
  } catch (error) {
    if (error instanceof ArtifactsMissingError) {
      log(error.message);
      process.exit(1);
    }
    throw error;
  }
  const store = await openStore(config.storePath);
  const shared = isSharedStore(config.storePath);
  const restored = applyPersistedRecords(corpus, await store.listRecords(), new Date());
  if (restored > 0) log(`${restored} Atlas records persisted from live councils restored from the store`);

  let live: LiveService | undefined;
  const panelConfig = loadPanelConfig(config.panelConfig);
  if (panelConfig) {
    const { panel, missing } = createPanel(panelConfig, process.env);
    for (const problem of missing) log(`panel: ${problem}`);
    if (panel) {
      // Sharing a store with other processes: running jobs are theirs until the lease ends,
      // and queued jobs of any process are picked up by a periodic sweep.
      live = createLiveService({ corpus, panel, store, log, concurrency: config.jobConcurrency, leaseMs: shared ? config.jobLeaseMs : 0 });
      const resumed = await live.runner.resume();
      if (resumed.resumed + resumed.failed > 0) log(`jobs: ${resumed.resumed} resumed, ${resumed.failed} failed after interruption`);
      if (shared)
        setInterval(() => void live!.runner.resume().catch((error: unknown) => log(`job sweep: ${(error as Error).message}`)), config.jobSweepMs).unref();
      log(`live panel: ${panel.members.map((member) => member.name).join(', ')}; chair ${panel.chair.map((member) => member.name).join(' → ')}`);
    } else {
      log('live panel not wired: it needs at least two members and a chair with keys; live paths answer 503');
    }
  }

  const app = createApp({
    corpus,
    store,
    siteDir: config.siteDir,
    log,
    ...(config.trustProxy !== undefined ? { trustProxy: config.trustProxy } : {}),
    limits: config.limits,
    ...(config.publicBaseUrl ? { publicBaseUrl: config.publicBaseUrl } : {}),
    federation: config.federation,
    ...(live ? { live } : {}),
    ...(config.ingestSecret ? { ingestSecret: config.ingestSecret } : {}),
    appendDisposition: (key, disposition) => appendDisposition(config.contentDir, key, disposition),
  });
  const server = createHttpServer(app, { requestTimeoutMs: config.bodyTimeoutMs }).listen(config.port, config.host, () => {
    const address = server.address();
    const port = typeof address === 'object' && address ? address.port : config.port;
    console.log(
      `[server] ${corpus.site.name}: ${corpus.works.length} works, ${corpus.divergences.length} Atlas records, ` +
        `listening on http://${config.host}:${port} (ready in ${Date.now() - started} ms)`,
    );
  });
  const shutdown = () => server.close(() => void store.close().then(() => process.exit(0)));
  process.on('SIGTERM', shutdown);
  process.on('SIGINT', shutdown);
}

/** A bad setting is the operator's to fix: its name and the reason, without a stack. */
function configOrExit(): ServerConfig {
  try {
    return loadConfig();
  } catch (error) {
    console.error(`[server] ${(error as Error).message}`);
    process.exit(1);
  }
}

const workers = Number(process.env.WORKERS ?? '1');
if (Number.isInteger(workers) && workers > 1 && cluster.isPrimary) {
  // Checked once here: a worker that exits on a bad setting would be restarted forever.
  configOrExit();
  for (let index = 0; index < workers; index++) cluster.fork();
  cluster.on('exit', (worker, code, signal) => {
    console.error(`[server] worker ${worker.process.pid} exited (${signal ?? code}); starting another`);
    cluster.fork();
  });
  const stop = () => {
    for (const worker of Object.values(cluster.workers ?? {})) worker?.kill('SIGTERM');
    process.exit(0);
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
} else {
  void main();
}
