/**
 * `npm run certify`: selects records, plans, runs the protocol on them and on negative
 * controls, and (with write) writes each record's certification block, unless a control
 * certified, in which case the instrument is broken and nothing is written.
 */
import { setMaxListeners } from 'node:events';
import path from 'node:path';
import { combineRuns, type RunOutcome } from '../../../core/certify/evaluate.ts';
import { controlSubject, planCalls, summarisePlan, type PlanSummary } from '../../../core/certify/plan.ts';
import {
  CONTROL_CLAIMS,
  CONTROL_QUESTIONS,
  DEFAULT_DELTA,
  DEFAULT_FLOOR,
  DEFAULT_METHOD,
  type CalibrationFloor,
  type CertifySettings,
  type Method,
  type Tier,
} from '../../../core/certify/protocol.ts';
import { runsVerdict, type RunsVerdict } from '../../../core/certify/tiers.ts';
import { writeRefusal } from './calibrate.ts';
import { negativeControlVerdict, type ControlVerdict } from '../../../core/certify/tiers.ts';
import type { Embedder } from '../../../providers/embedder.ts';
import { EVIDENCE_FILE_SUFFIX } from '../../../schemas/certification.ts';
import type { Certification, DivergenceFrontmatter } from '../../../schemas/content.ts';
import { loadContent } from '../../../content-files/load-content.ts';
import { appendEvidence, evidenceFile, loggedCalls, NEGATIVE_CONTROLS } from '../../../content-files/evidence-log.ts';
import type { CertifyPanel } from './panel.ts';
import { blockOf, resultLine } from './outcome.ts';
import { createRunner, CertifyAbortedError, type NamedTension, type Progress } from './runner.ts';
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
  /** perturbation-v2 (default) or perturbation-v1. */
  method?: Method;
  /** `--runs auto`: runs are added while the tier is undecided, up to this cap (settings.runs is ignored). */
  maxRuns?: number;
  /** Calibration floor `--write` checks against this Atlas's calibration (default DEFAULT_FLOOR). */
  floor?: CalibrationFloor;
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
  /** Why --write wrote nothing: this Atlas's calibration does not back the method. */
  refused?: string;
  method: Method;
  /** Set when the run stopped early (interrupted, or the spending ceiling). */
  stopped?: string;
  spentUsd: number;
  callsMade: number;
  callsReused: number;
}

export class SelectionError extends Error {}

function selectRecords<R extends { data: { id: string; certification: { tier: Tier } } }>(records: R[], selection: Selection): R[] {
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

/** The panel voices a subject's named tensions put in a split: those v2 reads for a side, and re-rolls further where readings abstain. */
function splitVoices(tensions: readonly NamedTension[], panelNames: readonly string[]): string[] {
  const onPanel = tensions.filter((t) => t.voiceA !== t.voiceB && panelNames.includes(t.voiceA) && panelNames.includes(t.voiceB));
  return [...new Set(onPanel.flatMap((t) => [t.voiceA, t.voiceB]))];
}

/** What certify measures: the selected records, then the negative controls (with a decoy split when the panel has two models). */
function certificationSubjects(records: readonly { data: DivergenceFrontmatter }[], options: CertifyOptions) {
  const questions = options.controlQuestions ?? CONTROL_QUESTIONS;
  const panelNames = options.panel.map((model) => model.name);
  // A control's decoy split: the true claim to the first panel model, a false one to the second.
  const decoy = (question: string): NamedTension[] => {
    const claims = (CONTROL_CLAIMS as Record<string, { true: string; false: string } | undefined>)[question];
    return claims && panelNames.length >= 2 ? [{ voiceA: panelNames[0]!, voiceB: panelNames[1]!, claimA: claims.true, claimB: claims.false }] : [];
  };
  const controls = Array.from({ length: options.settings.controls }, (_, i) => {
    const question = questions[i % questions.length]!;
    return { subject: controlSubject(i), question, tensions: decoy(question) };
  });
  const subjects = [
    ...records.map((record) => ({
      subject: record.data.id,
      question: record.data.question,
      tensions: record.data.tensions.map((t) => ({ voiceA: t.voice_a, voiceB: t.voice_b, claimA: t.claim_a, claimB: t.claim_b })),
    })),
    ...controls,
  ].map((subject) => ({ ...subject, voices: splitVoices(subject.tensions, panelNames) }));
  return { controls, subjects };
}

/** The plan's calls priced, those already answered by the same model version counted as logged. */
function planOf(calls: Parameters<typeof summarisePlan>[0], options: CertifyOptions, logged: ReturnType<typeof loggedCalls>) {
  const prices = Object.fromEntries([...options.panel, options.paraphraser, ...options.judges].map((model) => [model.name, model.price]));
  // The plan counts a step as logged when its model version answered it; the runner also checks the prompt.
  const modelIds = new Map([...options.panel, options.paraphraser, ...options.judges].map((model) => [model.name, model.modelId]));
  const plan = summarisePlan(
    calls,
    prices,
    new Set(calls.filter((call) => logged.get(call.key)?.some((line) => line.model_id === modelIds.get(call.model))).map((call) => call.key)),
  );
  return plan;
}

/** The report of a run that measured nothing (a plan, or a write refused before any call). */
function nothingMeasured(method: Method) {
  return {
    method,
    records: [],
    controls: { broken: false, certified: [], tiers: [], failed: [], results: [] },
    broken: false,
    spentUsd: 0,
    callsMade: 0,
    callsReused: 0,
  };
}

export async function certify(options: CertifyOptions): Promise<CertifyReport> {
  const now = options.now ?? (() => new Date());
  const method = options.method ?? DEFAULT_METHOD;
  const content = loadContent(options.contentDir);
  const records = selectRecords(content.divergences, options.selection);
  const { controls, subjects } = certificationSubjects(records, options);
  const calibration = content.calibration;
  const delta = calibration?.methods['perturbation-v2']?.margin?.delta ?? DEFAULT_DELTA;
  const runsCap = options.maxRuns ?? options.settings.runs;
  // --runs auto (v2) re-rolls a named voice further where its readings abstain (ADR 0024).
  const abstentionRerolls = options.maxRuns !== undefined && method === 'perturbation-v2';
  const fileOf = (subject: string) => evidenceFile(content.dir, subject);
  const logged = loggedCalls(
    subjects.map((s) => fileOf(s.subject)),
    method,
  );
  const calls = planCalls({
    subjects,
    panel: options.panel,
    paraphraser: options.paraphraser,
    judges: options.judges,
    // --runs auto plans for its cap: the most it can spend.
    settings: { ...options.settings, runs: runsCap },
    attempt: options.attempt,
    abstentionRerolls,
  });
  const plan = planOf(calls, options, logged);
  const empty = nothingMeasured(method);
  if (options.plan) return { plan, planned: true, ...empty };
  // A write this Atlas's calibration does not back is refused before a cent is spent.
  const refusal = options.write ? writeRefusal(calibration, method, options.floor ?? DEFAULT_FLOOR) : undefined;
  if (refusal !== undefined) return { plan, planned: false, ...empty, refused: refusal };

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
    method,
    methodVersion: method,
    delta,
    abstentionRerolls,
  });
  let stopped: string | undefined;
  const start = (subject: string, question: string, tensions: readonly NamedTension[], run: number) =>
    runner.runOnce(subject, question, run, tensions).catch((error: unknown) => {
      if (error instanceof SpendCeilingError) {
        stopped ??= error.message;
        abort();
      }
      throw error;
    });
  // Fixed: every run at once. Auto: one run after another per subject, while the tier is undecided.
  const runSubject = async ({
    subject,
    question,
    tensions,
  }: (typeof subjects)[number]): Promise<{ runs: RunOutcome[]; error?: string; verdict?: RunsVerdict }> => {
    const runs: RunOutcome[] = [];
    const fail = (error: unknown) => {
      if (error instanceof CertifyAbortedError || error instanceof SpendCeilingError) stopped ??= (error as Error).message;
      return { runs, error: (error as Error).message };
    };
    if (options.maxRuns === undefined) {
      const settled = await Promise.allSettled(Array.from({ length: options.settings.runs }, (_, run) => start(subject, question, tensions, run)));
      let error: string | undefined;
      for (const result of settled) {
        if (result.status === 'fulfilled') runs.push(result.value);
        else error ??= fail(result.reason).error;
      }
      return error === undefined ? { runs } : { runs, error };
    }
    for (let run = 0; run < options.maxRuns; run++) {
      try {
        runs.push(await start(subject, question, tensions, run));
      } catch (error) {
        return fail(error);
      }
      const verdict = runsVerdict(
        runs.map((outcome) => outcome.tier),
        options.maxRuns,
      );
      if (verdict.state !== 'continue') return { runs, verdict };
    }
    return { runs };
  };
  const settledSubjects = await Promise.all(subjects.map(runSubject));
  options.signal?.removeEventListener('abort', abort);
  const outcomes = new Map(subjects.map((s, i) => [s.subject, settledSubjects[i]!]));
  const complete = (outcome: { runs: RunOutcome[]; error?: string; verdict?: RunsVerdict }) =>
    outcome.error === undefined && (options.maxRuns === undefined ? outcome.runs.length >= options.settings.runs : outcome.verdict !== undefined);
  const context = { ...options, method, delta, maxRuns: options.maxRuns };

  const controlTiers = controls.flatMap(({ subject }) => (outcomes.get(subject)?.runs ?? []).map((run) => ({ subject, tier: run.tier })));
  const failed = controls.filter(({ subject }) => outcomes.get(subject)?.error !== undefined).map(({ subject }) => subject);
  const verdict = negativeControlVerdict(controlTiers);
  const broken = verdict.broken || failed.length > 0;
  const date = now().toISOString().slice(0, 10);
  // The controls' own measures go to their log either way: when the instrument is broken they say why.
  const controlResults: ControlReport[] = [];
  for (const { subject, question } of controls) {
    const outcome = outcomes.get(subject)!;
    if (!complete(outcome)) continue;
    const certification = blockOf(combineRuns(outcome.runs), context, `${NEGATIVE_CONTROLS}${EVIDENCE_FILE_SUFFIX}`, date, outcome.verdict);
    appendEvidence(fileOf(subject), resultLine(subject, outcome.runs, certification, false, now().toISOString()));
    controlResults.push({ subject, question, certification });
  }
  const reports: RecordReport[] = records.map((record) => {
    const outcome = outcomes.get(record.data.id)!;
    const tiers = outcome.runs.map((run) => run.tier);
    if (!complete(outcome)) return { id: record.data.id, tiers, error: outcome.error ?? 'incomplete', written: false };
    const certification = blockOf(combineRuns(outcome.runs), context, `${record.data.id}${EVIDENCE_FILE_SUFFIX}`, date, outcome.verdict);
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
    method,
    ...(stopped ? { stopped } : {}),
    spentUsd: options.guard.spentUsd(),
    callsMade: made,
    callsReused: reused,
  };
}
