/**
 * Progress of a live run as it happens: retrieval, each voice as it answers or fails, the
 * chair. Callers store stages on the job, stream them as Server-Sent Events or as MCP
 * progress notifications; the run itself never waits on them.
 */
import type { VoiceOutcome } from './panel-run.ts';
import type { Round2 } from './second-round.ts';

export type Stage =
  | { stage: 'retrieval'; sources: string[] }
  | { stage: 'voice'; name: string; model_id: string; lab: string; status: 'answered'; answer: string; truncated: boolean; latency_ms: number }
  | { stage: 'voice'; name: string; model_id: string; lab: string; status: 'failed'; failure: string; message: string }
  | {
      stage: 'round2';
      name: string;
      model_id: string;
      lab: string;
      status: 'kept' | 'revised';
      reason: string;
      answer?: string;
      truncated: boolean;
      latency_ms: number;
    }
  | { stage: 'round2'; name: string; model_id: string; lab: string; status: 'failed'; failure: string; message: string }
  | { stage: 'chair'; status: 'started'; voices_answered: number }
  | { stage: 'chair'; status: 'done' | 'failed'; chair: string | null };

export type OnStage = (stage: Stage) => void;

/** How a run is driven from outside: `signal` aborts every call, `onStage` hears its progress. */
export interface RunControl {
  signal?: AbortSignal;
  onStage?: OnStage;
  /** Run the second round (undefined: the panel's defaults.second_round). */
  secondRound?: boolean;
}

export function round2Stage(voice: Pick<VoiceOutcome, 'name' | 'model_id' | 'lab'>, round2: Round2): Stage {
  const identity = { stage: 'round2' as const, name: voice.name, model_id: voice.model_id, lab: voice.lab };
  return { ...identity, ...round2 };
}

export function voiceStage(voice: VoiceOutcome): Stage {
  const identity = { stage: 'voice' as const, name: voice.name, model_id: voice.model_id, lab: voice.lab };
  return voice.status === 'answered'
    ? { ...identity, status: 'answered', answer: voice.text, truncated: voice.truncated, latency_ms: voice.latency_ms }
    : { ...identity, status: 'failed', failure: voice.failure, message: voice.message };
}
