/** What `npm run certify` prints: the plan, a progress line, the outcome per record. */
import { controlOdds, steadfast } from '../../../core/certify/abstention.ts';
import type { CalibrationFile } from '../../../schemas/certification.ts';
import type { CertifyReport } from './certify.ts';
import type { Progress } from './runner.ts';

const usd = (value: number) => `$${value.toFixed(4)}`;
const percent = (value: number) => `${(value * 100).toFixed(1)} %`;

/**
 * What the held-out precision and coverage mean for the noise rule (ADR 0024's model): the share of
 * steadfast voices whose control re-rolls keep their side, and of those ruled noise, at T = 3 and 5.
 */
export function steadfastShares(figures: { precision: number | null; coverage: number | null }): string | undefined {
  if (figures.precision === null || figures.coverage === null) return undefined;
  const odds = (t: number) => controlOdds(steadfast({ precision: figures.precision!, coverage: figures.coverage! }), t, 'opposite-sides');
  return `steadfast voices keeping their side in their re-rolls (ADR 0024, held-out figures): T=3 ${percent(odds(3).kept)}, T=5 ${percent(odds(5).kept)} (ruled noise ${percent(odds(3).noise)}, ${percent(odds(5).noise)})`;
}

function duration(ms: number): string {
  const seconds = Math.round(ms / 1000);
  return seconds < 90 ? `${seconds}s` : `${Math.round(seconds / 60)}m`;
}

export function formatProgress(progress: Progress): string {
  const width = 20;
  const filled = progress.total === 0 ? width : Math.round((progress.done / progress.total) * width);
  const left = progress.remainingMs === undefined ? '…' : duration(progress.remainingMs);
  return `[${'#'.repeat(filled)}${'.'.repeat(width - filled)}] ${progress.done}/${progress.total} calls (${progress.reused} from the log) · ${usd(progress.spentUsd)} spent · ~${left} left`;
}

export function formatReport(report: CertifyReport): string {
  const { plan } = report;
  const lines = [
    `plan: ${plan.calls} calls (${plan.logged} already in the evidence log, ${plan.calls - plan.logged} to make), estimated cost at most ${usd(plan.estimatedCostUsd)}`,
    ...(plan.abstentionRerolls > 0
      ? [
          `  of which at most ${plan.abstentionRerolls} re-rolls of named voices, made only where the side measure cannot read their re-rolls (--runs auto, ADR 0024)`,
        ]
      : []),
    `  by step: ${Object.entries(plan.byStep)
      .map(([step, count]) => `${step} ${count}`)
      .join(', ')}`,
    `  by model: ${Object.entries(plan.byModel)
      .map(([model, count]) => `${model} ${count}`)
      .join(', ')}`,
  ];
  if (report.planned) return `${lines.join('\n')}\n(--plan: nothing was sent)`;
  lines.push(`spent ${usd(report.spentUsd)} on ${report.callsMade} calls; ${report.callsReused} read back from the evidence log`);
  for (const record of report.records) {
    if (record.certification === undefined) {
      lines.push(`${record.id}: not certified: ${record.error ?? 'incomplete'}`);
      continue;
    }
    const c = record.certification!;
    const verdict =
      c.verdict === 'undecided'
        ? ` UNDECIDED after ${c.runs} runs (modal tier share ${c.tier_share} [${c.tier_interval?.join('–')}])`
        : c.verdict === 'decided'
          ? ` decided after ${c.runs} of at most ${c.max_runs} runs`
          : '';
    lines.push(
      `${record.id}: ${c.tier}${verdict} [${c.method_version}]${record.error ? ` (${record.error})` : ''} (runs ${record.tiers.join(' ')}${c.agreement === null ? '' : `, agreement ${c.agreement}`}) dri ${c.dri} [${c.dri_range?.join('–')}] split_persistence ${c.split_persistence} between ${c.between_spread} within ${c.within_spread} flips ${c.flips} concedes ${c.concedes} kappa ${c.kappa ?? 'n/a'}${record.written ? ' · written' : ''}`,
    );
  }
  for (const control of report.controls.results) {
    const c = control.certification;
    lines.push(
      `negative control ${control.subject} ("${control.question}"): ${c.tier} dri ${c.dri} between ${c.between_spread} within ${c.within_spread} split_persistence ${c.split_persistence}`,
    );
  }
  if (report.controls.failed.length > 0) lines.push(`negative controls that could not be run: ${report.controls.failed.join(', ')}`);
  if (report.broken) lines.push('INSTRUMENT BROKEN: a negative control certified or could not be run; nothing was written.');
  if (report.refused) lines.push(`WRITE REFUSED: ${report.refused}`);
  if (report.stopped) lines.push(`stopped early: ${report.stopped}. Run the same command again to resume; logged calls are not paid again.`);
  return lines.join('\n');
}

/** What `--calibrate` prints: per method, pair AUC and side accuracy with their intervals and halves. */
export function formatCalibration(file: CalibrationFile): string {
  const figure = (name: string, f: CalibrationFile['methods'][string]['pair_auc']) =>
    `${name} ${f.value ?? 'n/a'} [${f.interval?.join('–') ?? 'n/a'}] (tune ${f.tune ?? 'n/a'}, held-out ${f.held_out ?? 'n/a'})`;
  const lines = [
    `calibration on ${file.records} Atlas records (${file.embedder}; ${file.bootstrap.resamples} bootstrap resamples of records, 95 %)`,
    `floor for --write: pair AUC interval low ≥ ${file.floor.pair_auc}, side accuracy interval low ≥ ${file.floor.side_accuracy}`,
  ];
  for (const [method, m] of Object.entries(file.methods)) {
    lines.push(
      `${method}: ${figure('pair AUC', m.pair_auc)}; ${figure('side accuracy', m.side_accuracy)}; ${m.pairs.named} named / ${m.pairs.unnamed} unnamed pairs, ${m.tensions} tensions · ${m.passes ? 'passes the floor' : 'BELOW THE FLOOR: --write refuses it'}`,
    );
    if (m.margin)
      lines.push(
        `  side measure dead zone δ = ${m.margin.delta ?? 'n/a'} (precision target ${m.margin.precision_target}; tune precision ${m.margin.tune.precision ?? 'n/a'} coverage ${m.margin.tune.coverage ?? 'n/a'}; held-out precision ${m.margin.held_out.precision ?? 'n/a'} coverage ${m.margin.held_out.coverage ?? 'n/a'})`,
      );
    const kept = m.margin ? steadfastShares(m.margin.held_out) : undefined;
    if (kept) lines.push(`  ${kept}`);
  }
  return lines.join('\n');
}
