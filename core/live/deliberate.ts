/**
 * Full deliberation (spec §4.2 rule 7, §4.3): retrieval, the panel in parallel with the
 * corpus as marked data, then the chair's synthesis with named tensions and a receipt.
 */
import type { Corpus } from '../corpus.ts';
import type { Panel } from '../ports/chat.ts';
import { retrieve } from '../retrieve.ts';
import { GLYPH_MODES } from '../glyphs.ts';
import type { FastQuery } from '../query-params.ts';
import { toCorpusRecord } from '../fast-path.ts';
import { deterministicReceipt } from '../receipt.ts';
import type { ScoredRecord } from '../search/types.ts';
import { costOf, createLedger, type CallScope } from './metered-call.ts';
import { askPanel, synthesize, type Meter, type VoiceOutcome } from './panel-run.ts';
import { createMarker, panelMessages, type EvidenceItem } from './prompts.ts';
import { maybeSecondRound, movedVoices, round2Field, withMoved, type Round2 } from './second-round.ts';
import { round2Stage, voiceStage, type OnStage } from './stages.ts';

export interface LiveDeps {
  corpus: Corpus;
  panel: Panel;
  meter: Meter;
  now: () => Date;
  randomHex: () => string;
  /** Full text of a work for the prompt (the API reads it from the record twin). */
  textOf: (id: string) => string | undefined;
}

export const EVIDENCE_RECORDS = 6;
const EVIDENCE_CHARS = 1500;

export function evidenceFor(deps: Pick<LiveDeps, 'corpus' | 'textOf'>, hits: readonly ScoredRecord[]): EvidenceItem[] {
  return hits.map((hit) => {
    const { record } = hit;
    const label = `${record.contributors.join(', ')} | ${record.date} | ring ${record.ring} | evidence ${record.evidence}`;
    if (record.kind === 'divergence') {
      const full = deps.corpus.divergenceById.get(record.id);
      const answers = (full?.answers ?? []).map((answer) => `${answer.model} (${answer.model_id}): ${answer.text.slice(0, 500)}`).join('\n');
      return { id: record.id, label: `Divergence Atlas record | ${label}`, text: `Question: ${full?.question ?? record.title}\n${answers}` };
    }
    const text = deps.textOf(record.id) ?? record.excerpt;
    return { id: record.id, label: `${record.title} | ${label}`, text: text.slice(0, EVIDENCE_CHARS) };
  });
}

export interface DeliberationInput {
  query: FastQuery;
  history: { question: string; answer: string }[];
  /** Aborts every call (the caller went away, the job was cancelled, the deadline passed). */
  signal?: AbortSignal;
  /** Progress: retrieval, each voice, the chair. */
  onStage?: OnStage;
  /** Run the second round (undefined: the panel's defaults.second_round). */
  secondRound?: boolean;
}

export async function deliberate(deps: LiveDeps, input: DeliberationInput) {
  const started = performance.now();
  const scope: CallScope = { meter: deps.meter, ledger: createLedger(), ...(input.signal ? { signal: input.signal } : {}) };
  const { query } = input;
  const retrieval = await retrieve(deps.corpus, { ...query, limit: Math.min(query.limit, EVIDENCE_RECORDS) });
  const retrievalMs = performance.now() - started;
  input.onStage?.({ stage: 'retrieval', sources: retrieval.hits.map((hit) => hit.record.id) });
  const evidence = evidenceFor(deps, retrieval.hits);
  const marker = createMarker(deps.randomHex);
  const question = query.cleanQuery || query.q;

  const panelStarted = performance.now();
  const voices = await askPanel(
    deps.panel.members,
    () => panelMessages({ question, evidence, history: input.history, glyphs: query.glyphs, marker, ...(query.si ? { callerIdentity: query.si } : {}) }),
    scope,
    'deliberation',
    deps.now,
    {
      retryTruncated: deps.panel.config.defaults.retry_truncated,
      ...(input.onStage ? { onVoice: (voice: VoiceOutcome) => input.onStage?.(voiceStage(voice)) } : {}),
    },
  );
  const answered = voices.filter((voice) => voice.status === 'answered');
  const round2 = await maybeSecondRound(scope, {
    enabled: input.secondRound ?? query.secondRound ?? deps.panel.config.defaults.second_round,
    question,
    voices,
    members: deps.panel.members,
    randomHex: deps.randomHex,
    ...(input.onStage ? { onRound2: (voice: VoiceOutcome, outcome: Round2) => input.onStage?.(round2Stage(voice, outcome)) } : {}),
  });
  const panelMs = performance.now() - panelStarted;

  const synthesisStarted = performance.now();
  if (answered.length > 0) input.onStage?.({ stage: 'chair', status: 'started', voices_answered: answered.length });
  const outcome =
    answered.length > 0
      ? await synthesize(
          deps.panel.chair,
          {
            question,
            answers: answered.map((voice) => ({ name: voice.name, text: voice.text, truncated: voice.truncated })),
            glyphs: query.glyphs,
            marker: createMarker(deps.randomHex),
          },
          scope,
        )
      : { synthesis: null, chair: null, attempts: [] };
  if (answered.length > 0) input.onStage?.({ stage: 'chair', status: outcome.synthesis ? 'done' : 'failed', chair: outcome.chair });
  const synthesisMs = performance.now() - synthesisStarted;

  const failed = voices
    .filter((voice) => voice.status === 'failed')
    .map((voice) => ({ name: voice.name, model_id: voice.model_id, failure: voice.failure, message: voice.message }));
  const answer = outcome.synthesis
    ? outcome.synthesis.answer
    : answered.length > 0
      ? 'The chair could not produce a valid synthesis; the panel answers below stand on their own.'
      : 'No panel model answered; see failed_voices.';
  return {
    question_received: query.q,
    query: query.q,
    cleanQuery: query.cleanQuery,
    glyphsDetected: query.glyphs.map((glyph) => GLYPH_MODES[glyph]),
    answer,
    sources: retrieval.hits.map((hit) => hit.record.id),
    // The records that grounded it, shaped as the fast path's (a client of the service this
    // engine replaces reads records[] and tells works from Atlas records by type).
    records: retrieval.hits.map(toCorpusRecord),
    // With a second round, each tension says which of its two voices moved (revised).
    tensions: round2 ? withMoved(outcome.synthesis?.tensions ?? [], movedVoices(round2)) : (outcome.synthesis?.tensions ?? []),
    ...(round2 ? { second_round: { moved: movedVoices(round2) } } : {}),
    deliberationCard: {
      ...(outcome.synthesis?.deliberation_card ?? { shared_ground: '', epistemic_status: 'No synthesis: the chair failed.', novel_synthesis: '' }),
      chair: outcome.chair,
      chair_attempts: outcome.attempts,
      panel_size: voices.length,
      answered: answered.length,
      failed: failed.length,
    },
    panel: voices.map((voice) =>
      voice.status === 'answered'
        ? {
            name: voice.name,
            model_id: voice.model_id,
            lab: voice.lab,
            status: voice.status,
            answer: voice.text,
            truncated: voice.truncated,
            latency_ms: voice.latency_ms,
            ...round2Field(round2, voice.name),
          }
        : { name: voice.name, model_id: voice.model_id, lab: voice.lab, status: voice.status, failure: voice.failure, message: voice.message },
    ),
    failed_voices: failed,
    trace: {
      retrieval: retrieval.hits.map((hit) => ({ id: hit.record.id, relevanceScore: hit.relevanceScore, similarity: hit.similarity, lexical: hit.lexical })),
      ...(retrieval.excludeIds ? { exclude_ids: retrieval.excludeIds } : {}),
      timings_ms: {
        retrieval: Math.round(retrievalMs),
        panel: Math.round(panelMs),
        synthesis: Math.round(synthesisMs),
        total: Math.round(performance.now() - started),
      },
      // Every call of the deliberation: panel, retries, second tries and the chair.
      usage: { prompt_tokens: scope.ledger.prompt_tokens, completion_tokens: scope.ledger.completion_tokens, cost_usd: scope.ledger.cost_usd },
    },
    cost_usd: scope.ledger.cost_usd,
    cost: costOf(scope.ledger),
    receipt: deterministicReceipt(query.q, retrieval.hits, deps.corpus.divergenceById, retrieval.answering),
  };
}
