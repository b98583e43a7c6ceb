/**
 * Entry point of `npm start` / `npm run serve`: load the artifacts, serve API and site.
 * WORKERS=<n> forks n processes sharing the port (node:cluster) and the store.
 * Operations (docs/OPERATIONS.md): JSON logs, readiness, metrics and the drain on SIGTERM are in api/ops/.
 */
import cluster from 'node:cluster';
import { createApp } from './app.ts';
import { createHttpServer } from './http/http-server.ts';
import { DEFAULT_WORKERS, loadConfig, type ServerConfig } from './config.ts';
import { createLiveService, type LiveService } from './live/service.ts';
import { applyPersistedRecords, ArtifactsEmbedderMismatchError, ArtifactsMissingError, loadCorpus } from './load-artifacts.ts';
import { createPanel } from '../providers/chat.ts';
import { describeEmbedder } from '../providers/embedder.ts';
import { createConfiguredEmbedder, EmbeddingsConfigError } from '../providers/embeddings-config.ts';
import { createQuestionEmbedder, questionDeadlineOf } from '../providers/question-embedder.ts';
import { loadPanelConfig } from '../providers/panel-config.ts';
import { isSharedStore, openStore } from '../storage/open-store.ts';
import { appendDisposition } from '../content-files/tension-dispositions.ts';
import { createLogger, lineLog } from './ops/logger.ts';
import { createMetrics } from './ops/metrics.ts';
import { answerClusterScrapes, clusterScrape, registryScrape, serveMetrics } from './ops/metrics-server.ts';
import { createReadiness } from './ops/readiness.ts';
import { createIndexHealth } from './ops/index-health.ts';
import { createDrain } from './ops/drain.ts';
import { countStoreErrors } from './ops/instrument-store.ts';
import { warmUp } from './warm-up.ts';

async function main(): Promise<void> {
  const started = Date.now();
  const config = configOrExit();
  const logger = createLogger({ level: config.logLevel });
  const log = lineLog(logger);
  const metrics = createMetrics();
  if (cluster.isWorker && config.metrics) answerClusterScrapes(metrics.registry);
  // Questions are embedded by the endpoint EMBEDDINGS_CONFIG describes, else by USE-lite on worker
  // threads (EMBED_WORKERS), off the event loop, on the native kernels where they were built
  // (EMBED_THREADS threads each), else on WebAssembly.
  const configured = await createConfiguredEmbedder(process.env, {
    workers: config.embedWorkers,
    offThread: config.embedWorkers > 0,
    threads: config.embedThreads,
    kernels: config.embedKernels,
  }).catch((error: unknown) => {
    if (!(error instanceof EmbeddingsConfigError)) throw error;
    logger.fatal(error.message);
    process.exit(1);
  });
  // A question's embedding has a deadline (an endpoint's query_timeout_ms; none for USE-lite):
  // past it, or on a failure, the question is answered from the words alone and says so.
  const deadlineMs = questionDeadlineOf(configured);
  if (configured.kind === 'openai-compatible')
    log(`question embeddings: ${configured.embedder.id} at ${configured.config.base_url} (${configured.source}), deadline ${deadlineMs} ms`);
  else if (config.embedWorkers > 0) log(`question embeddings: ${describeEmbedder(configured.embedder, config)}`);
  const embedder = createQuestionEmbedder(configured, { wrap: metrics.timedEmbedder, log: lineLog(logger, 'warn') });
  let corpus;
  const indexHealth = createIndexHealth(log, (message) => logger.error(message));
  try {
    corpus = await loadCorpus(config.artifactsDir, embedder, undefined, {
      relevanceFloors: config.relevanceFloors,
      searchSlots: config.searchConcurrency,
      onSearchFailure: indexHealth.failed,
      onSearchRecovery: indexHealth.recovered,
    });
  } catch (error) {
    if (error instanceof ArtifactsMissingError || error instanceof ArtifactsEmbedderMismatchError) {
      logger.fatal(error.message);
      process.exit(1);
    }
    throw error;
  }
  // The warm-up's searches go through the index's own search, not the metrics' timed one.
  const untimedSearch = corpus.search.search.bind(corpus.search);
  metrics.timeSearch(corpus.search);
  // Several processes on one store (PostgreSQL, or WORKERS=n on one SQLite file): running jobs
  // hold leases, and queued or handed-back jobs are taken by any process's sweep.
  const shared = isSharedStore(config.storePath) || cluster.isWorker;
  const store = countStoreErrors(await openStore(config.storePath), isSharedStore(config.storePath) ? 'postgres' : 'sqlite', metrics.storeError);
  const readiness = createReadiness({ store, pending: { embedder: 'the question embedder and the search are warming up' } });
  indexHealth.attach(readiness);
  metrics.watch({ store, embeddingQueue: () => configured.embedder.queuedTexts, searchQueue: () => corpus.search.waiting });
  const restored = applyPersistedRecords(corpus, await store.listRecords(), new Date());
  if (restored > 0) log(`${restored} Atlas records persisted from live councils restored from the store`);

  let live: LiveService | undefined;
  const panelConfig = loadPanelConfig(config.panelConfig);
  if (panelConfig) {
    const { panel, missing } = createPanel(panelConfig, process.env);
    for (const problem of missing) logger.warn(`panel: ${problem}`);
    if (panel) {
      metrics.watch({ spendCeilingUsd: panel.config.spending_ceiling_usd });
      // Sharing a store with other processes: running jobs are theirs until the lease ends,
      // and queued jobs of any process are picked up by a periodic sweep.
      live = createLiveService({
        corpus,
        panel,
        store,
        log,
        concurrency: config.jobConcurrency,
        leaseMs: shared ? config.jobLeaseMs : 0,
        onCall: (call) => {
          metrics.observeCall(call.model, call.outcome, call.latency_ms / 1000);
          logger.info({ event: 'provider_call', ...call }, 'model call');
        },
        onJobFinished: (kind, outcome) => metrics.jobFinished(kind, outcome),
      });
      const resumed = await live.runner.resume();
      if (resumed.resumed + resumed.failed > 0) log(`jobs: ${resumed.resumed} resumed, ${resumed.failed} failed after interruption`);
      if (shared)
        setInterval(() => void live!.runner.resume().catch((error: unknown) => log(`job sweep: ${(error as Error).message}`)), config.jobSweepMs).unref();
      log(`live panel: ${panel.members.map((member) => member.name).join(', ')}; chair ${panel.chair.map((member) => member.name).join(' → ')}`);
    } else {
      const reason = 'live panel not wired: it needs at least two members and a chair with keys; live paths answer 503';
      logger.warn(reason);
      readiness.mark('panel', `${reason}${missing.length > 0 ? ` (${missing.join('; ')})` : ''}`);
    }
  }

  const app = createApp({
    corpus,
    store,
    siteDir: config.siteDir,
    log,
    logger,
    metrics,
    readiness,
    ...(config.trustProxy !== undefined ? { trustProxy: config.trustProxy } : {}),
    limits: config.limits,
    ...(config.publicBaseUrl ? { publicBaseUrl: config.publicBaseUrl } : {}),
    federation: config.federation,
    ...(live ? { live } : {}),
    ...(config.ingestSecret ? { ingestSecret: config.ingestSecret } : {}),
    appendDisposition: (key, disposition) => appendDisposition(config.contentDir, key, disposition),
  });
  const server = createHttpServer(app, { requestTimeoutMs: config.bodyTimeoutMs });
  const drain = createDrain({ server, graceMs: config.drainGraceMs, readiness, ...(live ? { runner: live.runner } : {}), close: () => store.close(), log });
  server.listen(config.port, config.host, () => {
    const address = server.address();
    const port = typeof address === 'object' && address ? address.port : config.port;
    logger.info(
      `${corpus.site.name}: ${corpus.works.length} works, ${corpus.divergences.length} Atlas records, ` +
        `listening on http://${config.host}:${port} (up in ${Date.now() - started} ms)`,
    );
  });
  // The first question's model load and first-run code paths are paid here, not by a client;
  // until then GET /api/ready says so (warm-up.ts).
  const searchRecords = corpus.search.records;
  warmUp(embedder, untimedSearch, searchRecords, undefined, { remote: configured.kind === 'openai-compatible' }).then(
    ({ searches, ms }) => {
      log(`warmed up in ${ms} ms (the question embedder, ${searches} searches)`);
      readiness.mark('embedder');
    },
    (error: unknown) => readiness.mark('embedder', (error as Error).message),
  );
  if (config.metrics && !cluster.isWorker) {
    const metricsServer = await serveMetrics(registryScrape(metrics.registry), config.metrics, log);
    const address = metricsServer.address();
    logger.info(`metrics on http://${config.metrics.host}:${typeof address === 'object' && address ? address.port : config.metrics.port}/metrics`);
    metricsServer.unref();
  }
  const shutdown = () =>
    void drain.drain().then(
      () => process.exit(0),
      (error: unknown) => {
        logger.error(`drain failed: ${(error as Error).message}`);
        process.exit(1);
      },
    );
  process.once('SIGTERM', shutdown);
  process.once('SIGINT', shutdown);
}

/** A bad setting is the operator's to fix: its name and the reason, without a stack. */
function configOrExit(): ServerConfig {
  try {
    return loadConfig();
  } catch (error) {
    // Before the logger exists (its level is a setting): the same JSON line shape, by hand.
    console.error(JSON.stringify({ level: 'fatal', time: new Date().toISOString(), pid: process.pid, msg: `[server] ${(error as Error).message}` }));
    process.exit(1);
  }
}

const workers = Number(process.env.WORKERS ?? String(DEFAULT_WORKERS));
if (Number.isInteger(workers) && workers > 1 && cluster.isPrimary) {
  // Checked once here: a worker that exits on a bad setting would be restarted forever.
  const config = configOrExit();
  const logger = createLogger({ level: config.logLevel });
  let stopping = false;
  for (let index = 0; index < workers; index++) cluster.fork();
  cluster.on('exit', (worker, code, signal) => {
    if (stopping) {
      if (Object.keys(cluster.workers ?? {}).length === 0) process.exit(0);
      return;
    }
    logger.warn(`worker ${worker.process.pid} exited (${signal ?? code}); starting another`);
    cluster.fork();
  });
  if (config.metrics) {
    void serveMetrics(clusterScrape(lineLog(logger, 'warn')), config.metrics, lineLog(logger, 'warn')).then((server) =>
      logger.info(`metrics of ${workers} workers on http://${config.metrics!.host}:${(server.address() as { port: number }).port}/metrics`),
    );
  }
  // Each worker drains (api/ops/drain.ts); the primary exits once all of them have.
  const stop = () => {
    if (stopping) return;
    stopping = true;
    logger.info(`stopping: draining ${Object.keys(cluster.workers ?? {}).length} workers`);
    for (const worker of Object.values(cluster.workers ?? {})) worker?.process.kill('SIGTERM');
    if (Object.keys(cluster.workers ?? {}).length === 0) process.exit(0);
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
} else {
  void main();
}
