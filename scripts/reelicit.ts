/** `npm run reelicit -- --stale | <ids…> [--plan] [--write] [--json]`: re-ask stale questions verbatim (issue 15). */
import { parseArgs } from 'node:util';
import { loadPanelConfig } from '../providers/panel-config.ts';
import { createLocalSpendGuard } from './lib/certify/spend-guard.ts';
import { openStoreSpendGuard } from './lib/certify/store-spend-guard.ts';
import { pathsFromEnv } from '../core/paths.ts';
import { reelicit, reelicitJudges, reelicitPanel, type ReelicitReport } from './lib/reelicit/reelicit.ts';

const USAGE = `Usage: npm run reelicit -- --stale | <ids…>  [--plan] [--write] [--json]
  --stale   every stale record (a retired model version answered) not yet re-asked with current models
  <ids…>    these records
  --plan    print the calls and their most cost; send nothing
  --write   write each new record to content/divergences/ (validated; otherwise only printed)
Needs PANEL_CONFIG: the current panel answers; its model versions must be in models.yaml. Models under
\`extra\` judge each family's move since the earlier record (written beside it as <id>.longitudinal.json).`;

function format(report: ReelicitReport): string {
  const lines = [
    `${report.plan ? 'plan: ' : ''}${report.calls} calls, at most $${report.estimatedCostUsd.toFixed(4)}${report.plan ? ' (nothing sent)' : `; spent $${report.spentUsd.toFixed(4)}`}`,
  ];
  for (const record of report.records) {
    const target = record.id ? ` → ${record.id}${record.written ? ` (written: ${record.file})` : ''}` : '';
    lines.push(`${record.original}${target}: ${record.error ? `not written: ${record.error}` : JSON.stringify(record.question)}`);
    if (record.judged)
      lines.push(
        `  judges: ${Object.entries(record.judged)
          .map(([model, label]) => `${model} ${label ?? 'undecided'}`)
          .join(', ')}`,
      );
  }
  for (const skip of report.skipped) lines.push(`${skip.id}: skipped, ${skip.reason}`);
  return lines.join('\n');
}

async function main(): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({
      allowPositionals: true,
      options: { stale: { type: 'boolean' }, plan: { type: 'boolean' }, write: { type: 'boolean' }, json: { type: 'boolean' } },
    });
  } catch (error) {
    console.error(`${(error as Error).message}\n\n${USAGE}`);
    return 64;
  }
  const { values, positionals } = parsed;
  if (Boolean(values.stale) === positionals.length > 0 || (values.plan && values.write)) {
    console.error(`${values.plan && values.write ? '--plan writes nothing; drop --write' : 'name record ids or --stale (exactly one)'}\n\n${USAGE}`);
    return 64;
  }
  const config = loadPanelConfig(process.env.PANEL_CONFIG);
  if (!config) {
    console.error(`PANEL_CONFIG is not set: re-elicitation needs the current panel.\n\n${USAGE}`);
    return 64;
  }
  const spend = values.plan
    ? { guard: createLocalSpendGuard(config.spending_ceiling_usd), close: async () => {} }
    : await openStoreSpendGuard(config, process.env, 'reelicit');
  const report = await reelicit({
    contentDir: pathsFromEnv().contentDir,
    selection: values.stale ? { stale: true } : { ids: positionals },
    panel: reelicitPanel(config, process.env),
    judges: reelicitJudges(config, process.env),
    guard: spend.guard,
    plan: Boolean(values.plan),
    write: Boolean(values.write),
  });
  await spend.close();
  console.log(values.json ? JSON.stringify(report, null, 2) : format(report));
  return report.records.some((record) => record.error !== undefined) ? 2 : 0;
}

main().then(
  (code) => process.stdout.write('', () => process.exit(code)),
  (error: unknown) => {
    console.error(`reelicit: ${(error as Error).message}`);
    process.exit(1);
  },
);
