/** `npm run certify`: earn tiers by perturbation (issue 15). Usage: scripts/lib/certify/cli-args.ts. */
import { createUseLiteEmbedder } from '../providers/embedder.ts';
import { loadPanelConfig } from '../providers/panel-config.ts';
import { certify } from './lib/certify/certify.ts';
import { CERTIFY_USAGE, parseCertifyArgs, UsageError } from './lib/certify/cli-args.ts';
import { certifyPanel } from './lib/certify/panel.ts';
import { formatProgress, formatReport } from './lib/certify/report.ts';
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
    embedder: args.plan ? { id: 'none (--plan)', dims: 0, embed: async () => [] } : await createUseLiteEmbedder({ workers: 1 }),
    guard: spend.guard,
    concurrency: args.concurrency,
    plan: args.plan,
    write: args.write,
    seed: args.seed,
    ...(args.attempt ? { attempt: args.attempt } : {}),
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
  if (report.stopped || report.records.some((record) => record.error !== undefined)) return 2;
  return 0;
}

main().then(
  // Exit once stdout has drained: a piped report (--json) must not be cut short.
  (code) => process.stdout.write('', () => process.exit(code)),
  (error: unknown) => {
    console.error(`certify: ${(error as Error).message}`);
    process.exit(1);
  },
);
