/**
 * Wires the live paths: panel, store, jobs, sessions, spending ceiling and persistence.
 * Routes call this; the deliberation logic itself is in core/live/.
 * Progress stages go to the job record (jobs) or to the caller's callback (sync paths).
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { deliberate, type LiveDeps } from '../../core/live/deliberate.ts';
import { runCouncil } from '../../core/live/council.ts';
import type { OnStage } from '../../core/live/stages.ts';
import { runTrace } from '../../core/live/trace.ts';
import { BUDGET_FAILURE, budgetRefusals, ceilingLeftTooFew, type BudgetRefusal, type PanelRunLike } from '../../core/live/budget.ts';
import type { FastQuery } from '../../core/query-params.ts';
import { ApiError, apiError, type SuggestedCall } from '../../schemas/errors.ts';
import { createJobRunner, type JobFailure, type JobRunner } from '../jobs/runner.ts';
import type { Corpus } from '../load-artifacts.ts';
import { ProviderError, type Panel } from '../../providers/chat.ts';
import type { Exchange, JobRecord, JobStage, Store } from '../../storage/store.ts';
import { createStageRecorder, stampStage } from './progress.ts';
import { COUNCIL_KEEP_MS, createCouncilPersistence } from './council-persistence.ts';
import { createReservingMeter, runSignal } from './spend.ts';
import { recordDeliberationSightings } from '../tensions/sightings.ts';
import type { CallReport } from '../../core/live/metered-call.ts';
import { currentContext, runInContext } from '../ops/request-context.ts';

export const SESSION_EXCHANGES = 5;
export const SESSION_TTL_MS = 24 * 60 * 60 * 1000;

/** Told of each stage of a sync run as it happens, stamped with its time. */
export type StageListener = (stage: JobStage) => void;

/** `restart`: the caller's request starting a new session instead (the default: a sample one). */
export function sessionNotFound(sessionId: string, restart?: SuggestedCall) {
  return apiError(
    'SESSION_NOT_FOUND',
    `no session "${sessionId}" was issued to this client, or it has been idle for more than ${SESSION_TTL_MS / 3_600_000} h`,
    'Session ids are issued by the server: resend without session_id and with "new_session": true to start a session, then pass the session.session_id of that response on later calls. Nothing ran.',
    { suggestedNextCall: restart ?? { method: 'POST', path: '/api/query', body: { query: '<your question>', new_session: true } } },
  );
}

export interface LiveServiceOptions {
  corpus: Corpus;
  panel: Panel;
  store: Store;
  now?: () => Date;
  concurrency?: number;
  log?: (line: string) => void;
  /** See JobRunnerOptions.leaseMs. */
  leaseMs?: number;
  /** Told of every model call once it ended (metrics, provider-call logs); runs in the request's or job's context. */
  onCall?: (call: CallReport) => void;
  /** Told of every job this process ends: done, failed, or cancelled by its caller. */
  onJobFinished?: (kind: JobRecord['kind'], outcome: 'done' | 'failed' | 'cancelled' | 'handed_back') => void;
}

/**
 * The request that submitted a job, kept in its input (`request_id`), so that the job's log
 * lines and model calls name it in whichever process runs it. Handlers ignore the field.
 */
function withSubmitter(input: unknown): unknown {
  const requestId = currentContext()?.requestId;
  if (!requestId || typeof input !== 'object' || input === null) return input;
  return { ...input, request_id: requestId };
}

function submitterOf(input: unknown): string | undefined {
  const value = (input as { request_id?: unknown } | null)?.request_id;
  return typeof value === 'string' ? value : undefined;
}

export interface DeliberationJobInput {
  query: FastQuery;
  /** A session issued by the server (issueSession), checked against session_client. */
  session_id?: string;
  /** Hashed id of the client asking; a session is read only by the client it was issued to. */
  session_client?: string;
  /** This deliberation started the session. */
  session_started?: boolean;
  /** Run the second round (absent: the panel's defaults.second_round). */
  second_round?: boolean;
}

/** A council to run: the question, and whether to run the second round (absent: the panel's default). */
export interface CouncilJobInput {
  question: string;
  second_round?: boolean;
}

const CEILING_ACTION =
  'Use the fast path (GET /api/query?q=...) and existing Atlas records (GET /api/divergences/search?q=...); live work resumes when an operator raises the ceiling.';

/**
 * The ceiling refused voices and fewer than two answered: the run answers as the ceiling (503,
 * not retryable), not as a panel that failed nor as a record that cannot be persisted. A run
 * that still did its job carries refused_for_budget: which calls the ceiling refused.
 */
function withBudget<T extends object>(result: T, run: PanelRunLike, ceiling: number): T & { refused_for_budget?: BudgetRefusal[] } {
  const refused = budgetRefusals(run);
  if (ceilingLeftTooFew(run)) {
    const names = refused.filter((entry) => entry.stage === 'panel').map((entry) => entry.name);
    const answered = run.panel.filter((voice) => voice.status === 'answered').length;
    throw apiError(
      'SPENDING_CEILING_REACHED',
      `the live panel's spending ceiling of $${ceiling.toFixed(2)} refused ${names.length} of ${run.panel.length} voices (${names.join(', ')}), so ${answered === 0 ? 'none' : 'only one'} answered: too few for a disagreement`,
      CEILING_ACTION,
      { retryable: false, details: { refused_for_budget: refused, answered } },
    );
  }
  return refused.length > 0 ? { ...result, refused_for_budget: refused } : result;
}

export function createLiveService(options: LiveServiceOptions) {
  const now = options.now ?? (() => new Date());
  const log = options.log ?? (() => {});
  const { corpus, panel, store } = options;
  const ceiling = panel.config.spending_ceiling_usd;
  registerPanelModels(corpus, panel);

  const meter = createReservingMeter(store, panel, now, options.onCall);
  const deadlineMs = panel.config.defaults.deliberation_deadline_ms;
  const deps: LiveDeps = { corpus, panel, meter, now, randomHex: () => randomBytes(12).toString('hex'), textOf: (id) => corpus.textOf(id) };

  async function assertBudget(): Promise<void> {
    const spent = await store.totalSpendUsd();
    if (spent >= ceiling) {
      throw apiError(
        'SPENDING_CEILING_REACHED',
        `the live panel's spending ceiling of $${ceiling.toFixed(2)} is reached ($${spent.toFixed(2)} spent)`,
        CEILING_ACTION,
        { retryable: false },
      );
    }
  }

  const bounded = <T>(caller: AbortSignal | undefined, work: (signal: AbortSignal) => Promise<T>) => boundedRun(deadlineMs, ceiling, caller, work);

  /** The exchanges of a session issued to this client, or SESSION_NOT_FOUND. */
  async function openSession(sessionId: string, client: string | undefined, restart?: SuggestedCall): Promise<Exchange[]> {
    const session = await store.findSession(sessionId, SESSION_TTL_MS, now());
    if (!session || session.client !== client) throw sessionNotFound(sessionId, restart);
    return session.exchanges;
  }

  async function runDeliberation(input: DeliberationJobInput, caller?: AbortSignal, onStage?: OnStage) {
    const history = input.session_id ? await openSession(input.session_id, input.session_client) : [];
    const deliberation = await bounded(caller, (signal) =>
      deliberate(deps, {
        query: input.query,
        history: history.map((turn) => ({ question: turn.question, answer: turn.answer })),
        signal,
        ...(onStage ? { onStage } : {}),
        ...(input.second_round !== undefined ? { secondRound: input.second_round } : {}),
      }),
    );
    const result = withBudget(deliberation, { panel: deliberation.panel, chair_attempts: deliberation.deliberationCard.chair_attempts }, ceiling);
    await recordDeliberationSightings(store, result.tensions, input.query.q, now(), log);
    // Nobody reads a run whose caller went away (or whose job was cancelled): it joins no session.
    if (input.session_id && !caller?.aborted) {
      await store.appendExchange(
        input.session_id,
        { question: input.query.q, answer: result.answer, sources: result.sources, at: now().toISOString() },
        SESSION_EXCHANGES,
        now(),
      );
      return {
        ...result,
        session: {
          session_id: input.session_id,
          started: input.session_started === true,
          prior_exchanges: history.length,
          buffer: SESSION_EXCHANGES,
          ttl_hours: SESSION_TTL_MS / 3_600_000,
        },
      };
    }
    return result;
  }

  const councilDeps = { panel, meter, now, randomHex: deps.randomHex };
  /** Runs a council and keeps its result under a council_id, so what was shown can be persisted as is. */
  async function runKeptCouncil(input: CouncilJobInput, caller?: AbortSignal, onStage?: OnStage) {
    const secondRound = input.second_round !== undefined ? { secondRound: input.second_round } : {};
    const council = await bounded(caller, (signal) => runCouncil(councilDeps, input.question, { signal, ...(onStage ? { onStage } : {}), ...secondRound }));
    const result = withBudget(council, council, ceiling);
    // Nobody reads a run whose caller went away (or whose job was cancelled): nothing to keep.
    if (caller?.aborted) return { council_id: null, kept_until: null, ...result };
    const councilId = `council_${randomBytes(16).toString('hex')}`;
    const keptAt = now();
    try {
      await store.keepCouncil(councilId, result, keptAt, COUNCIL_KEEP_MS);
    } catch (error) {
      // The answers were paid for: show them even if they cannot be kept for persisting.
      log(`council result not kept: ${(error as Error).message}`);
      return { council_id: null, kept_until: null, ...result };
    }
    return { council_id: councilId, kept_until: new Date(keptAt.getTime() + COUNCIL_KEEP_MS).toISOString(), ...result };
  }

  const traceRun = (query: FastQuery, caller?: AbortSignal, onStage?: OnStage) =>
    bounded(caller, (signal) => runTrace(deps, query, { signal, ...(onStage ? { onStage } : {}) }));

  const stamped = (listener: StageListener | undefined): OnStage | undefined => listener && ((stage) => listener(stampStage(stage, now)));

  const persistence = createCouncilPersistence({ corpus, store, now });

  const runner = createLiveJobRunner(options, now, log, {
    deliberation: runDeliberation,
    trace: traceRun,
    council: runKeptCouncil,
  });

  return {
    runner,
    assertBudget,
    /** `signal`: the caller's; when it aborts (the client went away, even mid-stream), every call of this run is aborted. */
    async deliberateNow(input: DeliberationJobInput, signal?: AbortSignal, onStage?: StageListener) {
      await assertBudget();
      return runDeliberation(input, signal, stamped(onStage));
    },
    async traceNow(query: FastQuery, signal?: AbortSignal, onStage?: StageListener) {
      await assertBudget();
      return traceRun(query, signal, stamped(onStage));
    },
    async councilNow(input: CouncilJobInput, signal?: AbortSignal, onStage?: StageListener) {
      await assertBudget();
      return runKeptCouncil(input, signal, stamped(onStage));
    },
    async submit(kind: JobRecord['kind'], input: unknown) {
      await assertBudget();
      return runner.submit(kind, withSubmitter(input));
    },
    poll: (id: string) => runner.get(id),
    /** Cancels a queued or running job and aborts its calls; the job afterwards (undefined when unknown). */
    cancel: (id: string) => runner.cancel(id),
    stages: (id: string) => store.jobStages(id),
    /** Starts a session for a client (a hashed client id); the id is unguessable. */
    async issueSession(client: string): Promise<string> {
      const sessionId = `ses_${randomBytes(24).toString('base64url')}`;
      await store.createSession(sessionId, client, now());
      return sessionId;
    },
    /** Throws SESSION_NOT_FOUND unless the session was issued to this client and is alive. */
    async checkSession(sessionId: string, client: string, restart?: SuggestedCall): Promise<void> {
      await openSession(sessionId, client, restart);
    },
    /** The salt of hashed client ids (the one the rate limits use). */
    clientSalt: () => store.secret('client-hash-salt'),
    persistCouncil: persistence.persistCouncil,
    persistKeptCouncil: persistence.persistKeptCouncil,
  };
}
export type LiveService = ReturnType<typeof createLiveService>;

/** Runs `work` under the run's deadline and the caller's signal; a run every call of which the ceiling refused is the ceiling's error. */
async function boundedRun<T>(deadlineMs: number, ceiling: number, caller: AbortSignal | undefined, work: (signal: AbortSignal) => Promise<T>): Promise<T> {
  const run = runSignal(deadlineMs, caller);
  try {
    return await work(run.signal);
  } catch (error) {
    if (error instanceof ProviderError && error.failure === BUDGET_FAILURE) {
      throw apiError(
        'SPENDING_CEILING_REACHED',
        `the live panel's spending ceiling of $${ceiling.toFixed(2)} refused a call the run cannot do without (${error.message})`,
        CEILING_ACTION,
        { retryable: false },
      );
    }
    throw error;
  } finally {
    run.done();
  }
}

/** The three live runs as a job handler calls them: with the job's signal and its stage callback. */
interface LiveRuns {
  deliberation(input: DeliberationJobInput, signal: AbortSignal, onStage: OnStage): Promise<unknown>;
  trace(query: FastQuery, signal: AbortSignal, onStage: OnStage): Promise<unknown>;
  council(input: CouncilJobInput, signal: AbortSignal, onStage: OnStage): Promise<unknown>;
}

/**
 * The job runner of the live paths: each job runs in the context of the request that submitted
 * it, with its stages stored on the job record, and ends counted (done, failed, cancelled).
 */
function createLiveJobRunner(options: LiveServiceOptions, now: () => Date, log: (line: string) => void, runs: LiveRuns): JobRunner {
  const { store } = options;
  /**
   * Runs `run` with its stages stored on the job, all of them stored before the job ends.
   * A cancelled job's stages stop: nothing heard after the cancel is stored.
   */
  async function withStages<T>(job: { id: string; attempt: number; signal: AbortSignal }, run: (onStage: OnStage) => Promise<T>): Promise<T> {
    const recorder = createStageRecorder(store, job, now, log);
    try {
      return await run((stage) => {
        if (!job.signal.aborted) recorder.onStage(stage);
      });
    } finally {
      await recorder.flushed();
    }
  }

  /** Runs a job in the context of the request that submitted it (its log lines and calls name both), and counts how it ended. */
  async function inJobContext<T>(kind: JobRecord['kind'], input: unknown, job: { id: string; signal: AbortSignal }, run: () => Promise<T>): Promise<T> {
    return runInContext({ requestId: submitterOf(input) ?? job.id, jobId: job.id }, async () => {
      log(`job ${job.id} (${kind}) started`);
      try {
        const result = await run();
        options.onJobFinished?.(kind, 'done');
        return result;
      } catch (error) {
        const reason = job.signal.aborted ? (job.signal.reason as Error | undefined)?.name : undefined;
        options.onJobFinished?.(kind, reason === 'JobHandedBack' ? 'handed_back' : reason ? 'cancelled' : 'failed');
        throw error;
      }
    });
  }

  return createJobRunner({
    store,
    ...(options.leaseMs !== undefined ? { leaseMs: options.leaseMs } : {}),
    concurrency: options.concurrency ?? 4,
    now,
    log,
    newId: () => `job_${randomUUID()}`,
    describeFailure: describeJobFailure,
    handlers: {
      deliberation: (input, job) =>
        inJobContext('deliberation', input, job, () => withStages(job, (onStage) => runs.deliberation(input as DeliberationJobInput, job.signal, onStage))),
      trace: (input, job) =>
        inJobContext('trace', input, job, () => withStages(job, (onStage) => runs.trace((input as { query: FastQuery }).query, job.signal, onStage))),
      council: (input, job) =>
        inJobContext('council', input, job, () => withStages(job, (onStage) => runs.council(input as CouncilJobInput, job.signal, onStage))),
    },
  });
}

/** What a failed job says: an API error as itself, a provider's failure, or the error's message. */
function describeJobFailure(error: unknown): JobFailure {
  return error instanceof ApiError
    ? { code: error.code, message: error.message, retryable: error.options.retryable ?? false, agent_action: error.agentAction }
    : error instanceof ProviderError
      ? { code: 'PROVIDER_FAILED', message: error.message }
      : { code: 'JOB_FAILED', message: (error as Error)?.message?.slice(0, 300) ?? 'the job failed' };
}

/**
 * Panel models join the runtime model registry, so kin and freshness know the voices of
 * persisted council records. Content's models.yaml stays the source for what it lists.
 */
function registerPanelModels(corpus: Corpus, panel: Panel): void {
  const registry = corpus.registry;
  for (const member of [...panel.members, ...panel.chair]) {
    if (!registry.families.some((family) => family.name === member.family)) {
      registry.families.push({
        name: member.family,
        lab: member.lab,
        aliases: member.name === member.family ? [] : [member.name.toLowerCase()],
        fictional: false,
      });
    }
    if (!registry.models.some((model) => model.model_id === member.modelId)) {
      registry.models.push({ model_id: member.modelId, family: member.family, retired: false });
    }
  }
}
