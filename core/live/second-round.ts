/**
 * The second round (issue 14 item 9), opt-in: each voice that answered sees the other
 * answers, anonymised as "Voice A", "Voice B", … in a shuffled order and only inside a
 * random-marker DATA block, and keeps or revises its position with a reason. It sharpens
 * disagreement rather than crowning a winner: round 1 stays verbatim, round 2 sits beside it.
 * Every round-2 call is a metered call (deadline, reservation, cost, truncation); a voice
 * whose round 2 fails keeps its round-1 answer, with the failure named.
 */
import { seededRandom as seededFromNumber } from '../random.ts';
import { ProviderError, type ChatModel } from '../ports/chat.ts';
import { meteredCall, type CallScope } from './metered-call.ts';
import type { VoiceOutcome } from './panel-run.ts';
import { createMarker, secondRoundMessages } from './prompts.ts';
import { parseStructured, SecondRoundSchema } from './structured.ts';

export type Round2 =
  | { status: 'kept'; reason: string; truncated: boolean; latency_ms: number }
  | { status: 'revised'; reason: string; answer: string; truncated: boolean; latency_ms: number }
  | { status: 'failed'; failure: string; message: string };

type Answered = Extract<VoiceOutcome, { status: 'answered' }>;

/** Letters for anonymised voices: A … Z, then A2 … (a panel is never that large, but no collision). */
export function voiceLabel(index: number): string {
  const letter = String.fromCharCode(65 + (index % 26));
  return index < 26 ? `Voice ${letter}` : `Voice ${letter}${Math.floor(index / 26) + 1}`;
}

/** Fisher–Yates with an injected random in [0, 1): tests seed it, production draws it. */
export function shuffled<T>(items: readonly T[], random: () => number): T[] {
  const copy = [...items];
  for (let index = copy.length - 1; index > 0; index--) {
    const other = Math.floor(random() * (index + 1));
    [copy[index], copy[other]] = [copy[other]!, copy[index]!];
  }
  return copy;
}

export interface SecondRoundInput {
  question: string;
  voices: readonly Answered[];
  members: readonly ChatModel[];
  marker: string;
  random: () => number;
  /** Told of each voice's round 2 as soon as it is known (progress). */
  onVoice?: (voice: Answered, round2: Round2) => void;
}

async function reviseOne(scope: CallScope, model: ChatModel, own: Answered, others: readonly Answered[], input: SecondRoundInput): Promise<Round2> {
  const anonymised = shuffled(others, input.random).map((voice, index) => ({ label: voiceLabel(index), text: voice.text, truncated: voice.truncated }));
  const messages = secondRoundMessages({ question: input.question, own: own.text, others: anonymised, marker: input.marker });
  try {
    const result = await meteredCall(scope, 'panel', 'second-round', model, { messages, json: true });
    const parsed = parseStructured(result.content, SecondRoundSchema);
    if (!parsed.ok) {
      return {
        status: 'failed',
        failure: result.truncated ? 'truncated' : 'malformed',
        message: result.truncated ? 'the round-2 reply was cut off at its token limit before it was valid JSON' : parsed.problem,
      };
    }
    const { stance, reason, revised_answer: revised } = parsed.value;
    if (stance === 'revised') {
      if (!revised || revised.trim() === '') return { status: 'failed', failure: 'malformed', message: 'the voice said it revised but gave no revised_answer' };
      return { status: 'revised', reason, answer: revised, truncated: result.truncated, latency_ms: result.latency_ms };
    }
    return { status: 'kept', reason, truncated: result.truncated, latency_ms: result.latency_ms };
  } catch (error) {
    // A store that cannot reserve fails the whole run, as in round 1.
    if (!(error instanceof ProviderError)) throw error;
    return { status: 'failed', failure: error.failure, message: error.message };
  }
}

/** Round 2 for every voice that answered round 1 (with at least one other answer to read). */
export async function runSecondRound(scope: CallScope, input: SecondRoundInput): Promise<Map<string, Round2>> {
  const outcomes = new Map<string, Round2>();
  if (input.voices.length < 2) return outcomes;
  await Promise.all(
    input.voices.map(async (voice) => {
      const model = input.members.find((member) => member.name === voice.name);
      if (!model) return;
      const round2 = await reviseOne(
        scope,
        model,
        voice,
        input.voices.filter((other) => other !== voice),
        input,
      );
      outcomes.set(voice.name, round2);
      input.onVoice?.(voice, round2);
    }),
  );
  return outcomes;
}

/** Round 2 of a run when asked for (else undefined), its stages told to `onStage`. */
export async function maybeSecondRound(
  scope: CallScope,
  run: {
    enabled: boolean;
    question: string;
    voices: readonly VoiceOutcome[];
    members: readonly ChatModel[];
    randomHex: () => string;
    onRound2?: (voice: Answered, round2: Round2) => void;
  },
): Promise<Map<string, Round2> | undefined> {
  if (!run.enabled) return undefined;
  const answered = run.voices.filter((voice): voice is Answered => voice.status === 'answered');
  return runSecondRound(scope, {
    question: run.question,
    voices: answered,
    members: run.members,
    marker: createMarker(run.randomHex),
    random: seededRandom(run.randomHex()),
    ...(run.onRound2 ? { onVoice: run.onRound2 } : {}),
  });
}

/** The round-2 field of a voice in a response: what it did, beside its verbatim round-1 answer. */
export function round2Field(round2: ReadonlyMap<string, Round2> | undefined, name: string): { round2?: Round2 } {
  const outcome = round2?.get(name);
  return outcome ? { round2: outcome } : {};
}

/** Who moved in round 2: the voices that revised. */
export function movedVoices(round2: ReadonlyMap<string, Round2>): string[] {
  return [...round2.entries()].filter(([, outcome]) => outcome.status === 'revised').map(([name]) => name);
}

/** A tension says who of its two voices moved in round 2 (empty when neither did). */
export function withMoved<T extends { voice_a: string; voice_b: string }>(tensions: readonly T[], moved: readonly string[]): (T & { moved: string[] })[] {
  return tensions.map((tension) => ({ ...tension, moved: [tension.voice_a, tension.voice_b].filter((voice) => moved.includes(voice)) }));
}

/** A seeded generator (mulberry32, core/random.ts) from hex: each run draws its seed, tests inject theirs. */
export function seededRandom(seedHex: string): () => number {
  return seededFromNumber(Number.parseInt(seedHex.slice(0, 8), 16));
}
