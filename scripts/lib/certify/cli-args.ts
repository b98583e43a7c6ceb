/** Arguments of `npm run certify`, parsed and checked once; a bad value fails with its name. */
import { parseArgs } from 'node:util';
import {
  DEFAULT_FLOOR,
  DEFAULT_MAX_RUNS,
  DEFAULT_METHOD,
  DEFAULT_SETTINGS,
  METHODS,
  type CalibrationFloor,
  type CertifySettings,
  type Method,
  type Tier,
} from '../../../core/certify/protocol.ts';
import { CALIBRATION_METHODS, type CalibrationMethod } from './calibrate.ts';
import { TIERS } from '../../../schemas/vocab.ts';
import type { Selection } from './certify.ts';

export const CERTIFY_USAGE = `Usage: npm run certify -- <ids…> | --all | --tier C0  [options]
       npm run certify -- --calibrate [--method perturbation-v1,perturbation-v2,judges] [--plan]
  --calibrate         measure how well each split measure recovers the splits this Atlas names (pair AUC,
                      side accuracy, 95 % bootstrap intervals) and write content/certification-calibration.json
  --method NAME       certify with perturbation-v2 (default: stance on the named claims) or perturbation-v1
                      (whole-answer distance); with --calibrate, a comma list (default: both, and judges when configured)
  --floor-auc X       calibration floor: the low end of pair AUC's interval a method needs before --write (default ${DEFAULT_FLOOR.pair_auc})
  --floor-side X      calibration floor for side accuracy's interval low (default ${DEFAULT_FLOOR.side_accuracy})
  --plan              print the number of calls and the estimated cost; send nothing
  --write             write each record's certification block (never when a negative control certifies)
  --runs N|auto       independent runs of the whole protocol (default ${DEFAULT_SETTINGS.runs}); auto: add runs while the
                      tier is undecided, up to --max-runs, then report the record undecided (ADR 0015); in each run
                      re-roll a named voice again (up to --t more) while the side measure cannot read its re-rolls (ADR 0024)
  --max-runs N        the cap of --runs auto (default ${DEFAULT_MAX_RUNS})
  --t N               re-rolls of the verbatim question per model, the noise floor (default ${DEFAULT_SETTINGS.t}, at least 2)
  --k N               paraphrases (default ${DEFAULT_SETTINGS.k})
  --controls N        negative-control questions per run (default ${DEFAULT_SETTINGS.controls}, at least 1)
  --concurrency N     model calls at once (default 4)
  --judges a,b,c      judge models (default: every model under extra in PANEL_CONFIG)
  --paraphraser NAME  model that writes the rewordings (default: the first model under extra)
  --budget USD        spend at most this much (never more than the panel's spending_ceiling_usd)
  --seed N            seed of the judges' blinding (default 0)
  --attempt NAME      measure afresh under this name (logged answers of other attempts are not reused); the same name resumes
  --json              print the report as JSON
Environment: PANEL_CONFIG (required), CONTENT_DIR, the key variables the panel names.`;

export interface CertifyArgs {
  selection: Selection;
  settings: CertifySettings;
  plan: boolean;
  write: boolean;
  json: boolean;
  concurrency: number;
  judges: string[] | undefined;
  paraphraser: string | undefined;
  budget: number | undefined;
  seed: number;
  attempt: string | undefined;
  method: Method;
  /** `--runs auto`: the cap; undefined for a fixed number of runs. */
  maxRuns: number | undefined;
  floor: CalibrationFloor;
  /** `--calibrate`: the methods to calibrate (undefined: certify instead). */
  calibrate: CalibrationMethod[] | undefined;
}

export class UsageError extends Error {}

function integer(name: string, value: string | undefined, fallback: number, min: number, max: number): number {
  if (value === undefined) return fallback;
  const number = Number(value);
  if (!/^\d+$/.test(value) || number < min || number > max)
    throw new UsageError(`--${name} must be a whole number from ${min} to ${max}, not ${JSON.stringify(value)}`);
  return number;
}

export function parseCertifyArgs(argv: readonly string[]): CertifyArgs {
  let parsed;
  try {
    parsed = parseArgs({
      args: [...argv],
      allowPositionals: true,
      options: {
        all: { type: 'boolean' },
        tier: { type: 'string' },
        plan: { type: 'boolean' },
        write: { type: 'boolean' },
        json: { type: 'boolean' },
        runs: { type: 'string' },
        t: { type: 'string' },
        k: { type: 'string' },
        controls: { type: 'string' },
        concurrency: { type: 'string' },
        judges: { type: 'string' },
        paraphraser: { type: 'string' },
        budget: { type: 'string' },
        seed: { type: 'string' },
        attempt: { type: 'string' },
        calibrate: { type: 'boolean' },
        method: { type: 'string' },
        'max-runs': { type: 'string' },
        'floor-auc': { type: 'string' },
        'floor-side': { type: 'string' },
      },
    });
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
  const { values, positionals } = parsed;
  const tier = values.tier;
  if (tier !== undefined && !(TIERS as readonly string[]).includes(tier))
    throw new UsageError(`--tier must be one of ${TIERS.join(', ')}, not ${JSON.stringify(tier)}`);
  const chosen = [positionals.length > 0, Boolean(values.all), tier !== undefined].filter(Boolean).length;
  if (values.calibrate && chosen > 0) throw new UsageError('--calibrate measures the whole Atlas: drop record ids, --all and --tier');
  if (!values.calibrate && chosen !== 1) throw new UsageError('name record ids, or --all, or --tier <tier> (exactly one)');
  const methodList = values.method
    ?.split(',')
    .map((name) => name.trim())
    .filter((name) => name !== '');
  let calibrate: CalibrationMethod[] | undefined;
  let method: Method = DEFAULT_METHOD;
  if (values.calibrate) {
    for (const name of methodList ?? [])
      if (!(CALIBRATION_METHODS as readonly string[]).includes(name))
        throw new UsageError(`--method must name ${CALIBRATION_METHODS.join(', ')}, not ${JSON.stringify(name)}`);
    calibrate = (methodList as CalibrationMethod[] | undefined) ?? [];
  } else if (methodList !== undefined) {
    if (methodList.length !== 1 || !(METHODS as readonly string[]).includes(methodList[0]!))
      throw new UsageError(`--method must be one of ${METHODS.join(', ')}, not ${JSON.stringify(values.method)}`);
    method = methodList[0] as Method;
  }
  const share = (name: string, value: string | undefined, fallback: number) => {
    if (value === undefined) return fallback;
    const number = Number(value);
    if (!/^\d*\.?\d+$/.test(value) || number > 1) throw new UsageError(`--${name} must be a number from 0 to 1, not ${JSON.stringify(value)}`);
    return number;
  };
  const floor = {
    pair_auc: share('floor-auc', values['floor-auc'], DEFAULT_FLOOR.pair_auc),
    side_accuracy: share('floor-side', values['floor-side'], DEFAULT_FLOOR.side_accuracy),
  };
  const auto = values.runs === 'auto';
  if (values['max-runs'] !== undefined && !auto) throw new UsageError('--max-runs is the cap of --runs auto');
  const maxRuns = auto ? integer('max-runs', values['max-runs'], DEFAULT_MAX_RUNS, 2, 20) : undefined;
  if (values.plan && values.write) throw new UsageError('--plan sends nothing and writes nothing; drop --write');
  const budget = values.budget === undefined ? undefined : Number(values.budget);
  if (budget !== undefined && !(Number.isFinite(budget) && budget > 0))
    throw new UsageError(`--budget must be a positive number of USD, not ${JSON.stringify(values.budget)}`);
  if (values.attempt !== undefined && !/^[a-z0-9][a-z0-9-]{0,39}$/.test(values.attempt))
    throw new UsageError(`--attempt must be a lower-case slug (a-z, 0-9, -), not ${JSON.stringify(values.attempt)}`);
  const names = (value: string | undefined) =>
    value === undefined
      ? undefined
      : value
          .split(',')
          .map((name) => name.trim())
          .filter((name) => name !== '');
  return {
    selection: { ids: positionals.length > 0 ? positionals : undefined, all: values.all, tier: tier as Tier | undefined },
    settings: {
      ...DEFAULT_SETTINGS,
      t: integer('t', values.t, DEFAULT_SETTINGS.t, 2, 20),
      k: integer('k', values.k, DEFAULT_SETTINGS.k, 1, 20),
      runs: auto ? 1 : integer('runs', values.runs, DEFAULT_SETTINGS.runs, 1, 10),
      controls: integer('controls', values.controls, DEFAULT_SETTINGS.controls, 1, 10),
    },
    plan: Boolean(values.plan),
    write: Boolean(values.write),
    json: Boolean(values.json),
    concurrency: integer('concurrency', values.concurrency, 4, 1, 64),
    judges: names(values.judges),
    paraphraser: values.paraphraser,
    budget,
    seed: integer('seed', values.seed, 0, 0, 2 ** 31 - 1),
    attempt: values.attempt,
    method,
    maxRuns,
    floor,
    calibrate,
  };
}
