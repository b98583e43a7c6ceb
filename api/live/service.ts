/**
 * Wires the live paths: panel, store, jobs, sessions, spending ceiling and persistence.
 * Routes call this; the deliberation logic itself is in api/core/live/.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { createDivergenceSchema } from '../../schemas/content.ts';
import { deliberate, type LiveDeps } from '../core/live/deliberate.ts';
import { councilToFrontmatter, runCouncil, type CouncilResult } from '../core/live/council.ts';
import { runTrace } from '../core/live/trace.ts';
import type { FastQuery } from '../core/query-params.ts';
import { ApiError, apiError } from '../errors.ts';
import { createJobRunner, type JobRunner } from '../jobs/runner.ts';
import { applyPersistedRecords, type Corpus } from '../load-artifacts.ts';
import { ProviderError, type Panel } from '../providers/chat.ts';
import type { JobRecord, Store } from '../storage/store.ts';
import { stringifyMarkdown } from '../../scripts/lib/frontmatter.ts';
import { encodeParam } from '../core/url.ts';
import { createReservingMeter, runSignal } from './spend.ts';

export const SESSION_EXCHANGES = 5;
export const SESSION_TTL_MS = 24 * 60 * 60 * 1000;

export interface LiveServiceOptions {
  corpus: Corpus;
  panel: Panel;
  store: Store;
  now?: () => Date;
  concurrency?: number;
  log?: (line: string) => void;
  /** See JobRunnerOptions.leaseMs. */
  leaseMs?: number;
}

export interface DeliberationJobInput {
  query: FastQuery;
  session_id?: string;
}

const CEILING_ACTION = 'Use the fast path (GET /api/query?q=...) and existing Atlas records (GET /api/divergences/search?q=...); live work resumes when an operator raises the ceiling.';

/** Every voice refused by the ceiling: the run answers as the ceiling, not as a panel that failed. */
function assertSomeoneWasCalled(voices: readonly { status: string; failure?: string }[], ceiling: number): void {
  if (voices.length > 0 && voices.every((voice) => voice.status === 'failed' && voice.failure === 'spending_ceiling')) {
    throw apiError('SPENDING_CEILING_REACHED', `the live panel's spending ceiling of $${ceiling.toFixed(2)} leaves no room for another call (spend plus calls in flight)`, CEILING_ACTION, { retryable: false });
  }
}

export function createLiveService(options: LiveServiceOptions) {
  const now = options.now ?? (() => new Date());
  const log = options.log ?? (() => {});
  const { corpus, panel, store } = options;
  const ceiling = panel.config.spending_ceiling_usd;
  registerPanelModels(corpus, panel);

  const meter = createReservingMeter(store, panel, now);
  const deadlineMs = panel.config.defaults.deliberation_deadline_ms;
  const deps: LiveDeps = { corpus, panel, meter, now, randomHex: () => randomBytes(12).toString('hex'), textOf: (id) => corpus.textOf(id) };

  async function assertBudget(): Promise<void> {
    const spent = await store.totalSpendUsd();
    if (spent >= ceiling) {
      throw apiError('SPENDING_CEILING_REACHED', `the live panel's spending ceiling of $${ceiling.toFixed(2)} is reached ($${spent.toFixed(2)} spent)`, CEILING_ACTION, { retryable: false });
    }
  }

  /** Runs `work` under the run's deadline and the caller's signal; a run every call of which the ceiling refused is the ceiling's error. */
  async function bounded<T>(caller: AbortSignal | undefined, work: (signal: AbortSignal) => Promise<T>): Promise<T> {
    const run = runSignal(deadlineMs, caller);
    try {
      return await work(run.signal);
    } catch (error) {
      if (error instanceof ProviderError && error.failure === 'spending_ceiling') assertSomeoneWasCalled([{ status: 'failed', failure: error.failure }], ceiling);
      throw error;
    } finally {
      run.done();
    }
  }

  async function runDeliberation(input: DeliberationJobInput, caller?: AbortSignal) {
    const history = input.session_id ? await store.getSession(input.session_id, SESSION_TTL_MS, now()) : [];
    const result = await bounded(caller, (signal) => deliberate(deps, { query: input.query, history: history.map((turn) => ({ question: turn.question, answer: turn.answer })), signal }));
    assertSomeoneWasCalled(result.panel, ceiling);
    // Nobody reads a run whose caller went away (or whose job was cancelled): it joins no session.
    if (input.session_id && !caller?.aborted) {
      await store.appendExchange(input.session_id, { question: input.query.q, answer: result.answer, sources: result.sources, at: now().toISOString() }, SESSION_EXCHANGES, now());
      return { ...result, session: { session_id: input.session_id, prior_exchanges: history.length, buffer: SESSION_EXCHANGES, ttl_hours: SESSION_TTL_MS / 3_600_000 } };
    }
    return result;
  }

  const runner: JobRunner = createJobRunner({
    store,
    ...(options.leaseMs !== undefined ? { leaseMs: options.leaseMs } : {}),
    concurrency: options.concurrency ?? 4,
    now,
    log,
    newId: () => `job_${randomUUID()}`,
    describeFailure: (error) =>
      error instanceof ApiError
        ? { code: error.code, message: error.message }
        : error instanceof ProviderError
          ? { code: 'PROVIDER_FAILED', message: error.message }
          : { code: 'JOB_FAILED', message: (error as Error)?.message?.slice(0, 300) ?? 'the job failed' },
    handlers: {
      deliberation: (input, signal) => runDeliberation(input as DeliberationJobInput, signal),
      trace: (input, signal) => traceRun((input as { query: FastQuery }).query, signal),
      council: (input, signal) => councilRun((input as { question: string }).question, signal),
    },
  });

  const traceRun = (query: FastQuery, caller?: AbortSignal) => bounded(caller, (signal) => runTrace(deps, query, signal));
  async function councilRun(question: string, caller?: AbortSignal) {
    const result = await bounded(caller, (signal) => runCouncil({ panel, meter, now, randomHex: deps.randomHex }, question, signal));
    assertSomeoneWasCalled(result.panel, ceiling);
    return result;
  }

  return {
    runner,
    /** `signal`: the caller's; when it aborts (the client went away), every call of the run is aborted. */
    async deliberateNow(input: DeliberationJobInput, signal?: AbortSignal) {
      await assertBudget();
      return runDeliberation(input, signal);
    },
    async traceNow(query: FastQuery, signal?: AbortSignal) {
      await assertBudget();
      return traceRun(query, signal);
    },
    async councilNow(question: string, signal?: AbortSignal) {
      await assertBudget();
      return councilRun(question, signal);
    },
    async submit(kind: JobRecord['kind'], input: unknown) {
      await assertBudget();
      return runner.submit(kind, input);
    },
    poll: (id: string) => runner.get(id),
    /** Cancels a queued or running job and aborts its calls; the job afterwards (undefined when unknown). */
    cancel: (id: string) => runner.cancel(id),
    /** Validates a council result as a divergence record, stores it, and serves it at once. */
    async persistCouncil(result: CouncilResult) {
      if (result.n_models < 2) {
        throw apiError('NOT_PERSISTABLE', 'fewer than two voices answered, so there is no divergence record to commit', 'Retry the council later; nothing was stored.', { retryable: true });
      }
      const persistedAt = now().toISOString();
      let id = `${corpus.site.id_prefix}-D${now().getTime()}`;
      while (corpus.divergenceById.has(id)) id = `${corpus.site.id_prefix}-D${Number(id.split('-D')[1]) + 1}`;
      const frontmatter = councilToFrontmatter(result, id, persistedAt);
      const parsed = createDivergenceSchema(corpus.site.id_prefix).safeParse(frontmatter);
      if (!parsed.success) {
        throw apiError('NOT_PERSISTABLE', `the council result is not a valid divergence record: ${parsed.error.issues[0]?.message ?? 'invalid'}`, 'Nothing was stored. Retry the council.', { retryable: true });
      }
      const record = { id, frontmatter: frontmatter as Record<string, unknown>, body: '', persisted_at: persistedAt };
      await store.saveRecord(record);
      applyPersistedRecords(corpus, [record], now());
      return { id, href: `/api/divergences?id=${encodeParam(id)}`, persisted_at: persistedAt, content_path: `content/divergences/${id}.md`, markdown: stringifyMarkdown(frontmatter, '') };
    },
  };
}
export type LiveService = ReturnType<typeof createLiveService>;

/**
 * Panel models join the runtime model registry, so kin and freshness know the voices of
 * persisted council records. Content's models.yaml stays the source for what it lists.
 */
function registerPanelModels(corpus: Corpus, panel: Panel): void {
  const registry = corpus.registry;
  for (const member of [...panel.members, ...panel.chair]) {
    if (!registry.families.some((family) => family.name === member.family)) {
      registry.families.push({ name: member.family, lab: member.lab, aliases: member.name === member.family ? [] : [member.name.toLowerCase()], fictional: false });
    }
    if (!registry.models.some((model) => model.model_id === member.modelId)) {
      registry.models.push({ model_id: member.modelId, family: member.family, retired: false });
    }
  }
}
