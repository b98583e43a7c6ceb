/**
 * The live council (spec §4.6): the question verbatim to every panel model in parallel,
 * no system prompt and no corpus, then the chair names the tensions. The result can be
 * turned into a divergence record (persist) in the content format.
 */
import type { Panel } from '../ports/chat.ts';
import { costOf, createLedger, type CallScope } from './metered-call.ts';
import { askPanel, synthesize, type Meter, type VoiceOutcome } from './panel-run.ts';
import type { Round2 } from './second-round.ts';
import { councilMessages, createMarker } from './prompts.ts';
import { maybeSecondRound, movedVoices, round2Field, withMoved } from './second-round.ts';
import { round2Stage, voiceStage, type RunControl } from './stages.ts';

export const COUNCIL_METHOD =
  'One question sent verbatim to each panel model through its OpenAI-compatible API, no system prompt, no steering. Answers captured raw and unedited; the chair model named the tensions.';

export interface CouncilDeps {
  panel: Panel;
  meter: Meter;
  now: () => Date;
  randomHex: () => string;
}

/** `run.signal` aborts every call of the council (the caller went away, the job was cancelled, the deadline passed); `run.onStage` hears each voice and the chair. */
export async function runCouncil(deps: CouncilDeps, question: string, run: RunControl = {}) {
  const started = performance.now();
  const { onStage } = run;
  const scope: CallScope = { meter: deps.meter, ledger: createLedger(), ...(run.signal ? { signal: run.signal } : {}) };
  const voices = await askPanel(deps.panel.members, () => councilMessages(question), scope, 'council', deps.now, {
    retryTruncated: deps.panel.config.defaults.retry_truncated,
    ...(onStage ? { onVoice: (voice: VoiceOutcome) => onStage(voiceStage(voice)) } : {}),
  });
  const answered = voices.filter((voice) => voice.status === 'answered');
  const round2 = await maybeSecondRound(scope, {
    enabled: run.secondRound ?? deps.panel.config.defaults.second_round,
    question,
    voices,
    members: deps.panel.members,
    randomHex: deps.randomHex,
    ...(onStage ? { onRound2: (voice: VoiceOutcome, outcome: Round2) => onStage(round2Stage(voice, outcome)) } : {}),
  });
  if (answered.length >= 2) onStage?.({ stage: 'chair', status: 'started', voices_answered: answered.length });
  const outcome =
    answered.length >= 2
      ? await synthesize(
          deps.panel.chair,
          {
            question,
            answers: answered.map((voice) => ({ name: voice.name, text: voice.text, truncated: voice.truncated })),
            glyphs: [],
            marker: createMarker(deps.randomHex),
          },
          scope,
        )
      : { synthesis: null, chair: null, attempts: [] };
  if (answered.length >= 2) onStage?.({ stage: 'chair', status: outcome.synthesis ? 'done' : 'failed', chair: outcome.chair });
  return {
    question_received: question,
    question,
    method: COUNCIL_METHOD,
    date: deps.now().toISOString().slice(0, 10),
    n_models: answered.length,
    panel: voices.map((voice) =>
      voice.status === 'answered'
        ? {
            model: voice.name,
            family: voice.family,
            lab: voice.lab,
            model_id: voice.model_id,
            date: voice.date,
            status: 'answered' as const,
            text: voice.text,
            truncated: voice.truncated,
            latency_ms: voice.latency_ms,
            ...round2Field(round2, voice.name),
          }
        : {
            model: voice.name,
            family: voice.family,
            lab: voice.lab,
            model_id: voice.model_id,
            status: 'failed' as const,
            failure: voice.failure,
            message: voice.message,
          },
    ),
    failed_voices: voices
      .filter((voice) => voice.status === 'failed')
      .map((voice) => ({
        model: voice.name,
        model_id: voice.model_id,
        failure: voice.status === 'failed' ? voice.failure : '',
        message: voice.status === 'failed' ? voice.message : '',
      })),
    reading:
      outcome.synthesis?.answer ??
      (answered.length < 2
        ? 'Fewer than two voices answered: there is no disagreement to read.'
        : 'The chair could not produce a valid reading; the answers stand on their own.'),
    // With a second round, each tension says which of its two voices moved (revised).
    tensions: round2 ? withMoved(outcome.synthesis?.tensions ?? [], movedVoices(round2)) : (outcome.synthesis?.tensions ?? []),
    ...(round2 ? { second_round: { moved: movedVoices(round2) } } : {}),
    deliberation_card: outcome.synthesis?.deliberation_card ?? null,
    chair: outcome.chair,
    chair_attempts: outcome.attempts,
    /** Every call the council made: panel, retries, second tries and the chair. */
    cost_usd: scope.ledger.cost_usd,
    cost: costOf(scope.ledger),
    latency_ms: Math.round(performance.now() - started),
    note: 'Live panel outputs are perspectives, not truth. Answers are verbatim and attributed by model id.',
  };
}
export type CouncilResult = Awaited<ReturnType<typeof runCouncil>>;

/** Round 2 as a record keeps it, beside the verbatim round-1 text; a failed round 2 leaves round 1 alone. */
function recordRound2(round2: Round2 | undefined) {
  if (!round2 || round2.status === 'failed') return {};
  return {
    round2: {
      stance: round2.status,
      reason: round2.reason,
      ...(round2.status === 'revised' ? { text: round2.answer } : {}),
      ...(round2.truncated ? { truncated: true as const } : {}),
    },
  };
}

/** Divergence frontmatter for a council result (validated by the content schema before it is stored). */
export function councilToFrontmatter(
  result: Pick<CouncilResult, 'date' | 'question' | 'method' | 'panel' | 'tensions' | 'deliberation_card'> & Partial<CouncilResult>,
  id: string,
  persistedAt: string,
) {
  return {
    id,
    date: result.date,
    question: result.question,
    cluster: 'live-council',
    method: result.method,
    certification: { tier: 'C0' },
    // A truncated answer is stored exactly as said and marked, never as a complete one.
    answers: result.panel.flatMap((voice) =>
      voice.status === 'answered'
        ? [
            {
              model: voice.model,
              model_id: voice.model_id,
              lab: voice.lab,
              date: voice.date,
              text: voice.text,
              ...(voice.truncated ? { truncated: true as const } : {}),
              ...recordRound2(voice.round2),
            },
          ]
        : [],
    ),
    tensions: result.tensions,
    ...(result.deliberation_card ? { deliberation_card: result.deliberation_card } : {}),
    provenance: { source: 'live council (POST /api/council with persist)', persisted_at: persistedAt },
  };
}
