/** Runs a panel in parallel and a chair with fallbacks; failures are named, never fatal alone. */
import { ProviderError, type ChatMessage, type ChatModel, type ChatResult } from '../ports/chat.ts';
import { meteredCall, type CallScope } from './metered-call.ts';
import { parseStructured, SynthesisSchema, type Synthesis } from './structured.ts';
import { synthesisMessages } from './prompts.ts';
import type { Glyph } from '../../schemas/vocab.ts';

export type { Meter } from './metered-call.ts';

/** `truncated`: the model stopped at max_tokens; `text` is exactly what it said, cut off. */
export type VoiceOutcome =
  | {
      name: string;
      family: string;
      lab: string;
      model_id: string;
      status: 'answered';
      text: string;
      truncated: boolean;
      latency_ms: number;
      usage: ChatResult['usage'];
      cost_usd: number;
      date: string;
    }
  | { name: string; family: string; lab: string; model_id: string; status: 'failed'; failure: string; message: string };

export interface PanelOptions {
  /** Ask a voice that was cut off at max_tokens once more, with twice the room. */
  retryTruncated: boolean;
  /** Told of each voice as soon as it has answered or failed, whatever the failure (progress). */
  onVoice?: (voice: VoiceOutcome) => void;
}

/** One voice: a second try with twice the room when the first was cut off; the longer-lived answer wins. */
async function askVoice(scope: CallScope, member: ChatModel, messages: ChatMessage[], purpose: string, options: PanelOptions): Promise<ChatResult> {
  const first = await meteredCall(scope, 'panel', purpose, member, { messages });
  if (!first.truncated || !options.retryTruncated) return first;
  try {
    return await meteredCall(scope, 'panel', purpose, member, { messages, maxTokens: member.maxTokens * 2 });
  } catch {
    return first;
  }
}

export async function askPanel(
  members: readonly ChatModel[],
  messagesFor: (member: ChatModel) => ChatMessage[],
  scope: CallScope,
  purpose: string,
  now: () => Date,
  options: PanelOptions = { retryTruncated: true },
): Promise<VoiceOutcome[]> {
  return Promise.all(
    members.map(async (member): Promise<VoiceOutcome> => {
      const identity = { name: member.name, family: member.family, lab: member.lab, model_id: member.modelId };
      let voice: VoiceOutcome;
      try {
        const result = await askVoice(scope, member, messagesFor(member), purpose, options);
        voice =
          result.truncated && result.content.trim() === ''
            ? {
                ...identity,
                status: 'failed',
                failure: 'truncated',
                message: 'the model spent its whole max_tokens budget without writing an answer (finish_reason "length", empty content)',
              }
            : {
                ...identity,
                status: 'answered',
                text: result.content,
                truncated: result.truncated,
                latency_ms: result.latency_ms,
                usage: result.usage,
                cost_usd: result.cost_usd,
                date: now().toISOString(),
              };
      } catch (error) {
        // Only the model's own failures are a voice's; a store that cannot reserve or record
        // the spend fails the whole run (nothing may be called without a reservation).
        if (!(error instanceof ProviderError)) throw error;
        voice = { ...identity, status: 'failed', failure: error.failure, message: error.message };
      }
      options.onVoice?.(voice);
      return voice;
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
  input: { question: string; answers: { name: string; text: string; truncated?: boolean }[]; glyphs: readonly Glyph[]; marker: string },
  scope: CallScope,
): Promise<SynthesisOutcome> {
  const attempts: ChairAttempt[] = [];
  const voices = new Set(input.answers.map((answer) => answer.name));
  for (const chair of chairs) {
    // Past the run's deadline (or cancelled), the next chair would fail the same way.
    if (scope.signal?.aborted && attempts.length > 0) break;
    let correction: string | undefined;
    for (let attempt = 0; attempt < 2; attempt++) {
      let content: string;
      try {
        const result = await meteredCall(scope, 'chair', 'synthesis', chair, {
          messages: synthesisMessages({ ...input, ...(correction ? { correction } : {}) }),
          json: true,
        });
        if (result.truncated) {
          correction = `the reply was cut off at max_tokens; keep it shorter.`;
          attempts.push({ chair: chair.name, problem: 'truncated: the reply was cut off at max_tokens (finish_reason "length")' });
          continue;
        }
        content = result.content;
      } catch (error) {
        if (!(error instanceof ProviderError)) throw error;
        attempts.push({ chair: chair.name, problem: `${error.failure}: ${error.message}` });
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
