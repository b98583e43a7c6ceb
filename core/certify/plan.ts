/**
 * Which calls a certification makes, under stable step keys, and what they would cost.
 * The runner uses the same keys to log every result and to skip, on resume, every step
 * the evidence log already holds.
 *
 * Per subject (a record, or a negative control) and per run, with M panel models and J judges:
 *   control   M × T   the verbatim question, re-rolled (the noise floor)
 *   paraphrase  K     rewordings by a model not on the panel
 *   p1        M × K   each model answers each rewording
 *   p2        M       each model faces its most-opposed peer's answer
 *   p3        M       each model faces stance-flip pressure
 *   judge     2M × J  each P2/P3 move labelled by every judge
 * Under `--runs auto` with perturbation-v2, each voice a named tension puts on the panel may also
 * be re-rolled up to T more times in a run, only while its readings abstain (ADR 0024): the
 * plan counts them, as it counts the cap of runs, so that it says the most a record can cost.
 */
import { PRESSURES, type CertifySettings, type Pressure } from './protocol.ts';

export type Step = 'control' | 'paraphrase' | 'p1' | 'p2' | 'p3' | 'judge' | 'stance';

/** Keys are scoped by subject, and by attempt when one is named (`--attempt`): a new attempt measures afresh. */
export function keyScope(subject: string, attempt?: string): string {
  return attempt ? `${subject}@${attempt}` : subject;
}

export const stepKeys = {
  control: (scope: string, run: number, model: string, roll: number) => `${scope}/r${run}/control/${model}/${roll}`,
  paraphrase: (scope: string, run: number, index: number) => `${scope}/r${run}/paraphrase/${index}`,
  p1: (scope: string, run: number, index: number, model: string) => `${scope}/r${run}/p1/${index}/${model}`,
  pressure: (scope: string, run: number, pressure: Pressure, model: string) => `${scope}/r${run}/${pressure}/${model}`,
  judge: (scope: string, run: number, pressure: Pressure, model: string, judge: string) => `${scope}/r${run}/judge/${pressure}/${model}/${judge}`,
};

/** Subject name of the n-th negative control of a run. */
export function controlSubject(index: number): string {
  return `control-${index + 1}`;
}

export interface PlanModel {
  name: string;
  maxTokens: number;
  price?: { input_per_mtok: number; output_per_mtok: number } | undefined;
}

export interface PlanInput {
  /** `voices`: the panel voices the subject's named tensions put in a split, re-rolled further where readings abstain (`abstentionRerolls`). */
  subjects: { subject: string; question: string; voices?: readonly string[] }[];
  panel: readonly PlanModel[];
  paraphraser: PlanModel;
  judges: readonly PlanModel[];
  settings: Pick<CertifySettings, 't' | 'k' | 'runs'>;
  /** Names a fresh measurement; the same name resumes it. */
  attempt?: string | undefined;
  /** `--runs auto` (v2): up to T more re-rolls per named voice and run, drawn only while its readings abstain. */
  abstentionRerolls?: boolean | undefined;
}

export interface PlannedCall {
  key: string;
  subject: string;
  run: number;
  step: Step;
  model: string;
  /** Estimated from the prompt's characters; answers not yet known count as max_tokens. */
  promptTokens: number;
  /** The completion budget: max_tokens. */
  maxTokens: number;
  /** A re-roll made only where a voice's readings abstain (`--runs auto`, ADR 0024). */
  conditional?: true;
}

/** About four characters a token: the usual rough rule for English text. */
export function estimateTokens(text: string): number {
  return Math.max(1, Math.ceil(text.length / 4));
}

/** Fixed text around each prompt (system turn, instructions, markers), in tokens. */
const OVERHEAD_TOKENS = { answer: 40, paraphrase: 80, pressure: 80, judge: 220 } as const;

export function planCalls(input: PlanInput): PlannedCall[] {
  const calls: PlannedCall[] = [];
  const { t, k, runs } = input.settings;
  const maxAnswer = Math.max(...input.panel.map((model) => model.maxTokens));
  for (const { subject, question, voices = [] } of input.subjects) {
    const questionTokens = estimateTokens(question);
    const scope = keyScope(subject, input.attempt);
    for (let run = 0; run < runs; run++) {
      const add = (key: string, step: Step, model: PlanModel, promptTokens: number) =>
        calls.push({ key, subject, run, step, model: model.name, promptTokens, maxTokens: model.maxTokens });
      for (const model of input.panel) {
        for (let roll = 0; roll < t; roll++) add(stepKeys.control(scope, run, model.name, roll), 'control', model, OVERHEAD_TOKENS.answer + questionTokens);
      }
      if (input.abstentionRerolls) {
        for (const model of input.panel.filter((member) => voices.includes(member.name))) {
          for (let roll = t; roll < 2 * t; roll++) {
            add(stepKeys.control(scope, run, model.name, roll), 'control', model, OVERHEAD_TOKENS.answer + questionTokens);
            calls[calls.length - 1]!.conditional = true;
          }
        }
      }
      for (let index = 0; index < k; index++) {
        add(stepKeys.paraphrase(scope, run, index), 'paraphrase', input.paraphraser, OVERHEAD_TOKENS.paraphrase + questionTokens);
        for (const model of input.panel) {
          add(stepKeys.p1(scope, run, index, model.name), 'p1', model, OVERHEAD_TOKENS.answer + Math.ceil(questionTokens * 1.2));
        }
      }
      for (const model of input.panel) {
        add(stepKeys.pressure(scope, run, 'p2', model.name), 'p2', model, OVERHEAD_TOKENS.pressure + questionTokens + model.maxTokens + maxAnswer);
        add(stepKeys.pressure(scope, run, 'p3', model.name), 'p3', model, OVERHEAD_TOKENS.pressure + questionTokens + model.maxTokens);
      }
      for (const pressure of PRESSURES) {
        for (const model of input.panel) {
          const shown = pressure === 'p2' ? 3 * maxAnswer : 2 * maxAnswer;
          for (const judge of input.judges)
            add(stepKeys.judge(scope, run, pressure, model.name, judge.name), 'judge', judge, OVERHEAD_TOKENS.judge + questionTokens + shown);
        }
      }
    }
  }
  return calls;
}

export interface PlanSummary {
  calls: number;
  /** Of those, re-rolls made only where a voice's readings abstain (`--runs auto`, ADR 0024). */
  abstentionRerolls: number;
  /** Calls already in the evidence log, which a run will not pay for again. */
  logged: number;
  estimatedCostUsd: number;
  byStep: Record<Step, number>;
  byModel: Record<string, number>;
}

/** Counts and the cost ceiling of a plan: prompt estimate × input price + max_tokens × output price. */
export function summarisePlan(calls: readonly PlannedCall[], prices: Record<string, PlanModel['price']>, logged: ReadonlySet<string> = new Set()): PlanSummary {
  const byStep: Record<Step, number> = { control: 0, paraphrase: 0, p1: 0, p2: 0, p3: 0, judge: 0, stance: 0 };
  const byModel: Record<string, number> = {};
  let estimatedCostUsd = 0;
  let loggedCount = 0;
  for (const call of calls) {
    if (logged.has(call.key)) {
      loggedCount++;
      continue;
    }
    byStep[call.step]++;
    byModel[call.model] = (byModel[call.model] ?? 0) + 1;
    estimatedCostUsd += callCeilingUsd(call.promptTokens, call.maxTokens, prices[call.model]);
  }
  return { calls: calls.length, abstentionRerolls: calls.filter((call) => call.conditional).length, logged: loggedCount, estimatedCostUsd, byStep, byModel };
}

/** The most one call can cost: its prompt tokens plus its whole completion budget. */
export function callCeilingUsd(promptTokens: number, maxTokens: number, price: PlanModel['price']): number {
  if (!price) return 0;
  return (promptTokens * price.input_per_mtok + maxTokens * price.output_per_mtok) / 1_000_000;
}

/** What a call cost: reported usage × configured prices. */
export function usageCostUsd(usage: { prompt_tokens: number; completion_tokens: number }, price: PlanModel['price']): number {
  if (!price) return 0;
  return (usage.prompt_tokens * price.input_per_mtok + usage.completion_tokens * price.output_per_mtok) / 1_000_000;
}
