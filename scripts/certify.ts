/** `npm run certify`: earn tiers by perturbation (issue 15). Usage: scripts/lib/certify/cli-args.ts. */
import { createConfiguredEmbedder, EmbeddingsConfigError } from '../providers/embeddings-config.ts';
import type { Embedder } from '../providers/embedder.ts';

/**
 * The embedder EMBEDDINGS_CONFIG names, else USE-lite (one worker): the one the build and the
 * server use, so the measured distances are theirs; the calibration records its id.
 */
async function configuredEmbedder(): Promise<Embedder> {
  const { embedder } = await createConfiguredEmbedder(process.env, { workers: 1 });
  console.error(`certify: embedding with ${embedder.id}`);
  return embedder;
}
import { loadPanelConfig } from '../providers/panel-config.ts';
import { certify } from './lib/certify/certify.ts';
import { CALIBRATION_CALLS_VERSION, calibrateContent, planJudgeCalls, type CalibrateOptions, type CalibrationMethod } from './lib/certify/calibrate.ts';
import { createRunner } from './lib/certify/runner.ts';
import { createLimiter } from './lib/certify/spend-guard.ts';
import { createEmbeddingCache } from './lib/embedding-cache.ts';
import { loadContent } from '../content-files/load-content.ts';
import { evidenceFile, loggedCalls } from '../content-files/evidence-log.ts';
import { CERTIFY_USAGE, parseCertifyArgs, UsageError, type CertifyArgs } from './lib/certify/cli-args.ts';
import { certifyPanel } from './lib/certify/panel.ts';
import { formatCalibration, formatProgress, formatReport } from './lib/certify/report.ts';
import { createLocalSpendGuard } from './lib/certify/spend-guard.ts';
import { openStoreSpendGuard } from './lib/certify/store-spend-guard.ts';
import { pathsFromEnv } from '../core/paths.ts';

async function main(): Promise<number> {
  let args;
  try {
    args = parseCertifyArgs(process.argv.slice(2));
  } catch (error) {
    if (error instanceof UsageError) {
      console.error(`${error.message}\n\n${CERTIFY_USAGE}`);
      return 64;
    }
    throw error;
  }
  if (args.calibrate !== undefined) return runCalibration(args.calibrate, args);
  const config = loadPanelConfig(process.env.PANEL_CONFIG);
  if (!config) {
    console.error(`PANEL_CONFIG is not set: certification needs the panel configuration.\n\n${CERTIFY_USAGE}`);
    return 64;
  }
  const models = certifyPanel(config, process.env, { judges: args.judges, paraphraser: args.paraphraser });
  const controller = new AbortController();
  process.once('SIGINT', () => {
    console.error('\ninterrupted: finishing the calls in flight; run the same command to resume');
    controller.abort();
  });
  // --plan spends nothing, so it opens no store; a run reserves in the store shared with the live paths.
  const spend = args.plan
    ? { guard: createLocalSpendGuard(Math.min(args.budget ?? Infinity, config.spending_ceiling_usd)), close: async () => {} }
    : await openStoreSpendGuard(config, process.env, 'certify', args.budget);
  const tty = process.stderr.isTTY;
  let lastLine = 0;
  const report = await certify({
    ...models,
    contentDir: pathsFromEnv().contentDir,
    selection: args.selection,
    settings: args.settings,
    // --plan sends nothing, so it loads no model either.
    embedder: args.plan ? { id: 'none (--plan)', dims: 0, embed: async () => [] } : await configuredEmbedder(),
    guard: spend.guard,
    concurrency: args.concurrency,
    plan: args.plan,
    write: args.write,
    seed: args.seed,
    ...(args.attempt ? { attempt: args.attempt } : {}),
    method: args.method,
    ...(args.maxRuns !== undefined ? { maxRuns: args.maxRuns } : {}),
    floor: args.floor,
    signal: controller.signal,
    onProgress: (progress) => {
      if (tty) process.stderr.write(`\r${formatProgress(progress)}`);
      else if (Date.now() - lastLine > 2000 || progress.done === progress.total) {
        lastLine = Date.now();
        process.stderr.write(`${formatProgress(progress)}\n`);
      }
    },
  });
  await spend.close();
  if (tty && !args.plan) process.stderr.write('\n');
  console.log(args.json ? JSON.stringify(report, null, 2) : formatReport(report));
  if (report.broken) return 1;
  if (report.refused) return 3;
  if (report.stopped || report.records.some((record) => record.error !== undefined)) return 2;
  return 0;
}

/** `--calibrate`: the figures, printed and written beside the records; judges only when configured. */
async function runCalibration(requested: CalibrationMethod[], args: CertifyArgs): Promise<number> {
  const config = process.env.PANEL_CONFIG ? loadPanelConfig(process.env.PANEL_CONFIG) : undefined;
  const judgesConfigured = config !== undefined && config.extra.length > 0;
  const methods: CalibrationMethod[] =
    requested.length > 0 ? requested : ['perturbation-v1', 'perturbation-v2', ...(judgesConfigured ? (['judges'] as const) : [])];
  if (methods.includes('judges') && !judgesConfigured) {
    console.error(`--method judges needs PANEL_CONFIG with judges under extra.\n\n${CERTIFY_USAGE}`);
    return 64;
  }
  const paths = pathsFromEnv();
  if (args.plan) {
    // Embedding costs nothing; only the judges' calls are paid.
    const plan =
      methods.includes('judges') && config
        ? planJudgeCalls(paths.contentDir, certifyPanel(config, process.env, { judges: args.judges }).judges, args.seed)
        : { calls: 0, estimatedCostUsd: 0 };
    console.log(
      `calibration plan: ${methods.join(', ')}; ${plan.calls} judge calls, estimated cost at most $${plan.estimatedCostUsd.toFixed(4)}\n(--plan: nothing was sent)`,
    );
    return 0;
  }
  const embedder = await configuredEmbedder();
  const cache = createEmbeddingCache(paths.cacheDir, embedder);
  let judges: CalibrateOptions['judges'];
  let close = async () => {};
  if (methods.includes('judges') && config) {
    const models = certifyPanel(config, process.env, { judges: args.judges, paraphraser: args.paraphraser });
    const spend = await openStoreSpendGuard(config, process.env, 'certify', args.budget);
    close = spend.close;
    const content = loadContent(paths.contentDir);
    const runner = createRunner({
      ...models,
      embedder,
      settings: args.settings,
      logged: loggedCalls(
        content.divergences.map((entry) => evidenceFile(content.dir, entry.data.id)),
        CALIBRATION_CALLS_VERSION,
      ),
      fileOf: (subject) => evidenceFile(content.dir, subject),
      limit: createLimiter(args.concurrency),
      guard: spend.guard,
      seed: args.seed,
      total: 0,
      now: () => new Date(),
      methodVersion: CALIBRATION_CALLS_VERSION,
    });
    judges = { models: models.judges, runner };
  }
  const file = await calibrateContent({
    contentDir: paths.contentDir,
    embedder,
    methods,
    floor: args.floor,
    write: true,
    embedAll: async (texts) => (await cache.embedAll(texts)).vectors,
    ...(judges ? { judges } : {}),
  });
  await close();
  console.log(args.json ? JSON.stringify(file, null, 2) : formatCalibration(file));
  return 0;
}

main().then(
  // Exit once stdout has drained: a piped report (--json) must not be cut short.
  (code) => process.stdout.write('', () => process.exit(code)),
  (error: unknown) => {
    console.error(`certify: ${(error as Error).message}`);
    // A configuration the embedder cannot start from is the caller's to fix, as for the build (exit 2).
    process.exit(error instanceof EmbeddingsConfigError ? 2 : 1);
  },
);
