/**
 * Trace (spec §4.4): the question answered twice in parallel, without and with the corpus,
 * then a third pass reports what the corpus changed. A single-run demonstrator.
 */
import { ProviderError, type ChatModel } from '../ports/chat.ts';
import { BUDGET_FAILURE, type BudgetRefusal } from './budget.ts';
import { retrieve } from '../retrieve.ts';
import type { FastQuery } from '../query-params.ts';
import { deterministicReceipt, type Receipt } from '../receipt.ts';
import { evidenceFor, EVIDENCE_RECORDS, type LiveDeps } from './deliberate.ts';
import { costOf, createLedger, meteredCall, type CallScope } from './metered-call.ts';
import { createMarker, traceAugmentedMessages, traceBaselineMessages, traceDeltaMessages } from './prompts.ts';
import { parseStructured, TraceDeltaSchema, type TraceDelta } from './structured.ts';
import type { RunControl } from './stages.ts';

/**
 * The first chair that answers. When none does and the ceiling refused one of them, the
 * ceiling's refusal is what failed (another chair's later error would hide it: the run would
 * answer as a provider failure that a retry could mend, when only a raised ceiling can).
 */
async function firstWorking(chairs: readonly ChatModel[], run: (model: ChatModel) => Promise<string>): Promise<{ model: ChatModel; content: string }> {
  let last: unknown;
  let refused: ProviderError | undefined;
  for (const model of chairs) {
    try {
      return { model, content: await run(model) };
    } catch (error) {
      if (!(error instanceof ProviderError)) throw error;
      last = error;
      if (error.failure === BUDGET_FAILURE) refused ??= error;
    }
  }
  throw refused ?? (last instanceof ProviderError ? last : new ProviderError('malformed', String(last)));
}

/** Cut off answers (finish_reason "length") are shown as said and marked `truncated`. */
export async function runTrace(deps: LiveDeps, query: FastQuery, run: RunControl = {}) {
  const started = performance.now();
  const { onStage } = run;
  const scope: CallScope = { meter: deps.meter, ledger: createLedger(), ...(run.signal ? { signal: run.signal } : {}) };
  const truncated = new Set<string>();
  const question = query.cleanQuery || query.q;
  const retrieval = await retrieve(deps.corpus, { ...query, limit: Math.min(query.limit, EVIDENCE_RECORDS) });
  onStage?.({ stage: 'retrieval', sources: retrieval.hits.map((hit) => hit.record.id) });
  const evidence = evidenceFor(deps, retrieval.hits);
  const call =
    (messages: ReturnType<typeof traceBaselineMessages>, purpose: string, json = false) =>
    async (model: ChatModel) => {
      const result = await meteredCall(scope, 'chair', purpose, model, { messages, json });
      if (result.truncated) truncated.add(purpose);
      return result.content;
    };
  const [baseline, augmented] = await Promise.all([
    firstWorking(deps.panel.chair, call(traceBaselineMessages(question), 'trace-baseline')),
    firstWorking(deps.panel.chair, call(traceAugmentedMessages(question, evidence, createMarker(deps.randomHex)), 'trace-augmented')),
  ]);

  let delta: TraceDelta | null = null;
  const problems: string[] = [];
  const refused: BudgetRefusal[] = [];
  const marker = createMarker(deps.randomHex);
  for (const model of deps.panel.chair) {
    let correction: string | undefined;
    for (let attempt = 0; attempt < 2 && !delta; attempt++) {
      try {
        const content = await call(traceDeltaMessages(question, baseline.content, augmented.content, marker, correction), 'trace-delta', true)(model);
        const parsed = parseStructured(content, TraceDeltaSchema);
        if (parsed.ok) delta = parsed.value;
        else {
          correction = parsed.problem;
          problems.push(`${model.name}: ${parsed.problem}`);
        }
      } catch (error) {
        if (!(error instanceof ProviderError)) throw error;
        problems.push(`${model.name}: ${error.message}`);
        if (error.failure === BUDGET_FAILURE) refused.push({ stage: 'trace-delta', name: model.name, model_id: model.modelId });
        break;
      }
    }
    if (delta || run.signal?.aborted) break;
  }

  const base = deterministicReceipt(query.q, retrieval.hits, deps.corpus.divergenceById, retrieval.answering);
  const knownIds = new Set(retrieval.hits.map((hit) => hit.record.id));
  const citedIds = (delta?.cited_ids ?? []).filter((id) => knownIds.has(id));
  const receipt: Receipt & { measured: true } = {
    ...base,
    measured: true,
    verdict: delta === null ? base.verdict : delta.corpus_influence === 'substantial' ? 'substantive' : delta.corpus_influence === 'light' ? 'marginal' : null,
    grounded: delta === null ? base.grounded : delta.corpus_influence !== 'none' && retrieval.hits.length > 0,
    what_the_corpus_added: delta?.what_changed ?? 'The comparison pass failed; baseline and augmented answers are shown for you to compare.',
    not_self_generable: delta && delta.tensions_gained.length > 0 ? delta.tensions_gained : base.not_self_generable,
    caveat: 'Measured from one baseline-versus-augmented run: a single-run demonstrator, not a controlled study.',
  };
  return {
    question_received: query.q,
    query: query.q,
    baseline: {
      model: baseline.model.name,
      model_id: baseline.model.modelId,
      answer: baseline.content,
      truncated: truncated.has('trace-baseline'),
      corpus: false,
    },
    augmented: {
      model: augmented.model.name,
      model_id: augmented.model.modelId,
      answer: augmented.content,
      truncated: truncated.has('trace-augmented'),
      corpus: true,
      sources: retrieval.hits.map((hit) => hit.record.id),
    },
    delta: delta ? { ...delta, cited_ids: citedIds } : { error: 'comparison failed', problems },
    // The comparison pass is the only one a trace can do without: its refusals are named.
    ...(delta === null && refused.length > 0 ? { refused_for_budget: refused } : {}),
    sources: retrieval.hits.map((hit) => ({ id: hit.record.id, relevanceScore: hit.relevanceScore, similarity: hit.similarity })),
    receipt,
    cost_usd: scope.ledger.cost_usd,
    cost: costOf(scope.ledger),
    latency_ms: Math.round(performance.now() - started),
  };
}
