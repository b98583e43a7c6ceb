/** Runs a panel in parallel and a chair with fallbacks; failures are named, never fatal alone. */
import { ProviderError, type ChatMessage, type ChatModel, type ChatResult } from '../../providers/chat.ts';
import { parseStructured, SynthesisSchema, type Synthesis } from './structured.ts';
import { synthesisMessages } from './prompts.ts';
import type { Glyph } from '../../../schemas/vocab.ts';

export interface Meter {
  /** Records usage and cost of one call. */
  charge(purpose: string, model: ChatModel, result: ChatResult): Promise<void>;
}

export type VoiceOutcome =
  | { name: string; family: string; lab: string; model_id: string; status: 'answered'; text: string; latency_ms: number; usage: ChatResult['usage']; cost_usd: number; date: string }
  | { name: string; family: string; lab: string; model_id: string; status: 'failed'; failure: string; message: string };

export async function askPanel(
  members: readonly ChatModel[],
  messagesFor: (member: ChatModel) => ChatMessage[],
  meter: Meter,
  purpose: string,
  now: () => Date,
  /** Told of each voice as soon as it has answered or failed (progress). */
  onVoice?: (voice: VoiceOutcome) => void,
): Promise<VoiceOutcome[]> {
  return Promise.all(
    members.map(async (member): Promise<VoiceOutcome> => {
      const identity = { name: member.name, family: member.family, lab: member.lab, model_id: member.modelId };
      try {
        const result = await member.complete({ messages: messagesFor(member) });
        await meter.charge(purpose, member, result);
        const voice: VoiceOutcome = { ...identity, status: 'answered', text: result.content, latency_ms: result.latency_ms, usage: result.usage, cost_usd: result.cost_usd, date: now().toISOString() };
        onVoice?.(voice);
        return voice;
      } catch (error) {
        const failure = error instanceof ProviderError ? error : new ProviderError('malformed', (error as Error).message);
        const voice: VoiceOutcome = { ...identity, status: 'failed', failure: failure.failure, message: failure.message };
        onVoice?.(voice);
        return voice;
      }
    }),
  );
}

export interface ChairAttempt {
  chair: string;
  problem: string;
}

export interface SynthesisOutcome {
  synthesis: Synthesis | null;
  chair: string | null;
  attempts: ChairAttempt[];
}

/** Each chair gets two tries (the second told what was wrong); then the next chair. */
export async function synthesize(
  chairs: readonly ChatModel[],
  input: { question: string; answers: { name: string; text: string }[]; glyphs: readonly Glyph[]; marker: string },
  meter: Meter,
): Promise<SynthesisOutcome> {
  const attempts: ChairAttempt[] = [];
  const voices = new Set(input.answers.map((answer) => answer.name));
  for (const chair of chairs) {
    let correction: string | undefined;
    for (let attempt = 0; attempt < 2; attempt++) {
      let content: string;
      try {
        const result = await chair.complete({ messages: synthesisMessages({ ...input, ...(correction ? { correction } : {}) }), json: true });
        await meter.charge('synthesis', chair, result);
        content = result.content;
      } catch (error) {
        attempts.push({ chair: chair.name, problem: error instanceof ProviderError ? `${error.failure}: ${error.message}` : String(error) });
        break;
      }
      const parsed = parseStructured(content, SynthesisSchema);
      if (!parsed.ok) {
        correction = parsed.problem;
        attempts.push({ chair: chair.name, problem: parsed.problem });
        continue;
      }
      const strangers = parsed.value.tensions.flatMap((tension) => [tension.voice_a, tension.voice_b]).filter((voice) => !voices.has(voice));
      if (strangers.length > 0) {
        correction = `tensions named voices that did not answer (${[...new Set(strangers)].join(', ')}); use only: ${[...voices].join(', ')}.`;
        attempts.push({ chair: chair.name, problem: correction });
        continue;
      }
      return { synthesis: parsed.value, chair: chair.name, attempts };
    }
  }
  return { synthesis: null, chair: null, attempts };
}
