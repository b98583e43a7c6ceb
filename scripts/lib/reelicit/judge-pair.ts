/**
 * Where judges are configured, each model family's move between the two records of a
 * re-elicitation pair is labelled like a P2/P3 move (held, refined-but-held, conceded,
 * flipped): the judge sees a pseudonym, never the model's name, and a majority decides.
 */
import { callCeilingUsd, estimateTokens, usageCostUsd } from '../../../core/certify/plan.ts';
import { majorityLabel, parseJudgeLabel } from '../../../core/certify/labels.ts';
import { anonymise, judgePrompt } from '../../../core/certify/prompts.ts';
import { PRESSURE_LABELS, type PressureLabel } from '../../../core/certify/protocol.ts';
import type { LongitudinalJudgement } from '../../../schemas/certification.ts';
import type { SpendGuard } from '../certify/spend-guard.ts';
import type { ReelicitModel } from './model.ts';

export const JUDGE_REPLY_TOKENS = 60;

export async function judgePair(input: {
  question: string;
  earlier: { id: string; answers: readonly { model: string; text: string }[] };
  later: { id: string; date: string; answers: readonly { model: string; text: string }[] };
  judges: readonly ReelicitModel[];
  guard: SpendGuard;
  at: string;
}): Promise<LongitudinalJudgement> {
  const labels: LongitudinalJudgement['labels'] = {};
  for (const after of input.later.answers) {
    const before = input.earlier.answers.find((answer) => answer.model === after.model);
    if (!before) continue;
    // Blind: the judged family is "Voice Amber" and every other voice "another voice", in both answers.
    const names = [...new Set([...input.earlier.answers, ...input.later.answers].map((answer) => answer.model))];
    const replacements = names
      .map((name): [string, string] => [name, name === after.model ? 'Voice Amber' : 'another voice'])
      .sort((a, b) => b[0].length - a[0].length);
    const messages = judgePrompt({
      question: input.question,
      voice: 'Voice Amber',
      before: anonymise(before.text, replacements),
      challenge: `Time passed: the same question was asked again on ${input.later.date}, to a later version of the same model.`,
      after: anonymise(after.text, replacements),
      labelOrder: PRESSURE_LABELS,
    });
    const votes = await Promise.all(
      input.judges.map(async (judge) => {
        const reservation = await input.guard.reserve(
          callCeilingUsd(estimateTokens(messages.map((message) => message.content).join('\n')), JUDGE_REPLY_TOKENS, judge.price),
          judge.modelId,
        );
        try {
          const result = await judge.complete(messages, JUDGE_REPLY_TOKENS);
          await reservation.settle(usageCostUsd(result.usage, judge.price), result.usage);
          return parseJudgeLabel(result.content) ?? null;
        } catch (error) {
          await reservation.release();
          throw error;
        }
      }),
    );
    labels[after.model] = { label: majorityLabel(votes.filter((vote): vote is PressureLabel => vote !== null)) ?? null, votes };
  }
  return { earlier: input.earlier.id, later: input.later.id, judges: input.judges.map((judge) => judge.name), labels, at: input.at };
}
