/**
 * `npm run certify`: selects records, plans, runs the protocol on them and on negative
 * controls, and (with write) writes each record's certification block, unless a control
 * certified, in which case the instrument is broken and nothing is written.
 */
import { setMaxListeners } from 'node:events';
import path from 'node:path';
import { combineRuns, type RunOutcome } from '../../../core/certify/evaluate.ts';
import { controlSubject, planCalls, summarisePlan, type PlanSummary } from '../../../core/certify/plan.ts';
import { CONTROL_QUESTIONS, METHOD_VERSION, type CertifySettings, type Tier } from '../../../core/certify/protocol.ts';
import { negativeControlVerdict, type ControlVerdict } from '../../../core/certify/tiers.ts';
import type { Embedder } from '../../../providers/embedder.ts';
import { EVIDENCE_FILE_SUFFIX } from '../../../schemas/certification.ts';
import type { Certification } from '../../../schemas/content.ts';
import { loadContent } from '../../../content-files/load-content.ts';
import { appendEvidence, evidenceFile, loggedCalls, NEGATIVE_CONTROLS } from '../../../content-files/evidence-log.ts';
import type { CertifyPanel } from './panel.ts';
import { blockOf, resultLine } from './outcome.ts';
import { createRunner, CertifyAbortedError, type Progress } from './runner.ts';
import { createLimiter, SpendCeilingError, type SpendGuard } from './spend-guard.ts';
import { writeCertificationBlock } from './write-block.ts';

export interface Selection {
  ids?: string[] | undefined;
  all?: boolean | undefined;
  tier?: Tier | undefined;
}

export interface CertifyOptions extends CertifyPanel {
  contentDir: string;
  selection: Selection;
  settings: CertifySettings;
  embedder: Embedder;
  guard: SpendGuard;
  concurrency: number;
  plan?: boolean;
  write?: boolean;
  seed?: number;
  /** Names a fresh measurement: answers logged under another attempt are not reused. */
  attempt?: string;
  controlQuestions?: readonly string[];
  now?: () => Date;
  signal?: AbortSignal;
  onProgress?: (progress: Progress) => void;
}

export interface RecordReport {
  id: string;
  tiers: Tier[];
  certification?: Certification;
  /** Why the record could not be certified this time (a provider failure), or why its block was not written. */
  error?: string;
  written: boolean;
}

export interface ControlReport {
  subject: string;
  question: string;
  certification: Certification;
}

export interface CertifyReport {
  plan: PlanSummary;
  planned: boolean;
  records: RecordReport[];
  controls: ControlVerdict & { tiers: { subject: string; tier: Tier }[]; failed: string[]; results: ControlReport[] };
  /** True when a control certified or could not be run: nothing was written. */
  broken: boolean;
  /** Set when the run stopped early (interrupted, or the spending ceiling). */
  stopped?: string;
  spentUsd: number;
  callsMade: number;
  callsReused: number;
}

export class SelectionError extends Error {}

function selectRecords(records: { data: { id: string; question: string; certification: { tier: Tier } }; file: string }[], selection: Selection) {
  if (selection.ids && selection.ids.length > 0) {
    const byId = new Map(records.map((record) => [record.data.id, record]));
    const unknown = selection.ids.filter((id) => !byId.has(id));
    if (unknown.length > 0) throw new SelectionError(`no divergence record with id ${unknown.join(', ')}`);
    return [...new Set(selection.ids)].map((id) => byId.get(id)!);
  }
  if (selection.tier) return records.filter((record) => record.data.certification.tier === selection.tier);
  if (selection.all) return records;
  throw new SelectionError('name record ids, --all, or --tier <C0|C1|C2|C3>');
}

export async function certify(options: CertifyOptions): Promise<CertifyReport> {
  const now = options.now ?? (() => new Date());
  const content = loadContent(options.contentDir);
  const records = selectRecords(content.divergences, options.selection);
  const questions = options.controlQuestions ?? CONTROL_QUESTIONS;
  const controls = Array.from({ length: options.settings.controls }, (_, i) => ({ subject: controlSubject(i), question: questions[i % questions.length]! }));
  const subjects = [...records.map((record) => ({ subject: record.data.id, question: record.data.question })), ...controls];
  const fileOf = (subject: string) => evidenceFile(content.dir, subject);
  const logged = loggedCalls(
    subjects.map((s) => fileOf(s.subject)),
    METHOD_VERSION,
  );
  const calls = planCalls({
    subjects,
    panel: options.panel,
    paraphraser: options.paraphraser,
    judges: options.judges,
    settings: options.settings,
    attempt: options.attempt,
  });
  const prices = Object.fromEntries([...options.panel, options.paraphraser, ...options.judges].map((model) => [model.name, model.price]));
  // The plan counts a step as logged when its model version answered it; the runner also checks the prompt.
  const modelIds = new Map([...options.panel, options.paraphraser, ...options.judges].map((model) => [model.name, model.modelId]));
  const plan = summarisePlan(
    calls,
    prices,
    new Set(calls.filter((call) => logged.get(call.key)?.some((line) => line.model_id === modelIds.get(call.model))).map((call) => call.key)),
  );
  const empty = {
    records: [],
    controls: { broken: false, certified: [], tiers: [], failed: [], results: [] },
    broken: false,
    spentUsd: 0,
    callsMade: 0,
    callsReused: 0,
  };
  if (options.plan) return { plan, planned: true, ...empty };

  // One signal for every call: the caller's (Ctrl-C), or ours when the ceiling is reached.
  const controller = new AbortController();
  setMaxListeners(0, controller.signal); // the SDK adds a listener per request
  const abort = () => controller.abort();
  if (options.signal?.aborted) abort();
  options.signal?.addEventListener('abort', abort, { once: true });
  const runner = createRunner({
    ...options,
    logged,
    fileOf,
    limit: createLimiter(options.concurrency),
    seed: options.seed ?? 0,
    total: calls.length,
    now,
    signal: controller.signal,
    onProgress: options.onProgress,
  });
  let stopped: string | undefined;
  const start = (subject: string, question: string, run: number) =>
    runner.runOnce(subject, question, run).catch((error: unknown) => {
      if (error instanceof SpendCeilingError) {
        stopped ??= error.message;
        abort();
      }
      throw error;
    });
  const jobs = subjects.flatMap(({ subject, question }) =>
    Array.from({ length: options.settings.runs }, (_, run) => ({ subject, run, result: start(subject, question, run) })),
  );
  const settled = await Promise.allSettled(jobs.map((job) => job.result));
  options.signal?.removeEventListener('abort', abort);
  const outcomes = new Map<string, { runs: RunOutcome[]; error?: string }>();
  jobs.forEach((job, i) => {
    const entry = outcomes.get(job.subject) ?? { runs: [] };
    const result = settled[i]!;
    if (result.status === 'fulfilled') entry.runs.push(result.value);
    else {
      const error = result.reason as Error;
      if (error instanceof CertifyAbortedError || error instanceof SpendCeilingError) stopped ??= error.message;
      entry.error ??= error.message;
    }
    outcomes.set(job.subject, entry);
  });

  const controlTiers = controls.flatMap(({ subject }) => (outcomes.get(subject)?.runs ?? []).map((run) => ({ subject, tier: run.tier })));
  const failed = controls.filter(({ subject }) => outcomes.get(subject)?.error !== undefined).map(({ subject }) => subject);
  const verdict = negativeControlVerdict(controlTiers);
  const broken = verdict.broken || failed.length > 0;
  const date = now().toISOString().slice(0, 10);
  // The controls' own measures go to their log either way: when the instrument is broken they say why.
  const controlResults: ControlReport[] = [];
  for (const { subject, question } of controls) {
    const outcome = outcomes.get(subject)!;
    if (outcome.error !== undefined || outcome.runs.length < options.settings.runs) continue;
    const certification = blockOf(combineRuns(outcome.runs), options, `${NEGATIVE_CONTROLS}${EVIDENCE_FILE_SUFFIX}`, date);
    appendEvidence(fileOf(subject), resultLine(subject, outcome.runs, certification, false, now().toISOString()));
    controlResults.push({ subject, question, certification });
  }
  const reports: RecordReport[] = records.map((record) => {
    const outcome = outcomes.get(record.data.id)!;
    const tiers = outcome.runs.map((run) => run.tier);
    if (outcome.error !== undefined || outcome.runs.length < options.settings.runs)
      return { id: record.data.id, tiers, error: outcome.error ?? 'incomplete', written: false };
    const certification = blockOf(combineRuns(outcome.runs), options, `${record.data.id}${EVIDENCE_FILE_SUFFIX}`, date);
    const wanted = Boolean(options.write) && !broken && stopped === undefined;
    const refused = wanted ? writeCertificationBlock(path.join(content.dir, record.file), certification, content.site.id_prefix) : undefined;
    const write = wanted && refused === undefined;
    const error = refused === undefined ? undefined : `measured, but the block was not written: ${refused}`;
    if (!broken) appendEvidence(fileOf(record.data.id), resultLine(record.data.id, outcome.runs, certification, write, now().toISOString()));
    return { id: record.data.id, tiers, certification, written: write, ...(error ? { error } : {}) };
  });
  const { made, reused } = runner.counts();
  return {
    plan,
    planned: false,
    records: reports,
    controls: { ...verdict, tiers: controlTiers, failed, results: controlResults },
    broken,
    ...(stopped ? { stopped } : {}),
    spentUsd: options.guard.spentUsd(),
    callsMade: made,
    callsReused: reused,
  };
}
