/** The build's longitudinal step: each re-elicitation pair summarised and attached to both records. */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { longitudinalSummary, type PairJudgement } from '../../core/longitudinal.ts';
import type { DivergenceFull } from '../../core/records.ts';
import { LONGITUDINAL_FILE_SUFFIX, LongitudinalJudgementSchema, type CalibrationFile } from '../../schemas/certification.ts';
import { anonymise } from '../../core/certify/prompts.ts';
import { DEFAULT_DELTA } from '../../core/certify/protocol.ts';
import { answerSentences, type EmbeddedAnswer } from '../../core/certify/stance.ts';

/** The judges' labels written by `npm run reelicit` beside a re-elicitation, when it had judges. */
export function readJudgement(contentDir: string, laterId: string, earlierId: string): PairJudgement | undefined {
  const file = path.join(contentDir, 'divergences', `${laterId}${LONGITUDINAL_FILE_SUFFIX}`);
  if (!existsSync(file)) return undefined;
  const parsed = LongitudinalJudgementSchema.safeParse(JSON.parse(readFileSync(file, 'utf8')));
  if (!parsed.success) throw new Error(`divergences/${laterId}${LONGITUDINAL_FILE_SUFFIX}: ${parsed.error.issues[0]?.message ?? 'invalid'}`);
  if (parsed.data.later !== laterId || parsed.data.earlier !== earlierId)
    throw new Error(`divergences/${laterId}${LONGITUDINAL_FILE_SUFFIX} judges another pair (${parsed.data.earlier} → ${parsed.data.later})`);
  return parsed.data;
}

export interface TextEmbedder {
  embedAll(texts: readonly string[]): Promise<{ vectors: ArrayLike<number>[]; embedded: number }>;
}

/** The side measure's δ: this Atlas's calibrated one when measured, else the method's default. */
export function stanceDelta(calibration?: CalibrationFile): number {
  return calibration?.methods['perturbation-v2']?.margin?.delta ?? DEFAULT_DELTA;
}

/**
 * Adds `longitudinal` (one summary per pair the record belongs to) to both records of every pair;
 * returns the texts newly embedded (not from the cache). Answers are embedded whole and per
 * sentence, and the earlier record's claims beside them, with the pair's voice names masked as
 * certification masks them, so a claim that names a voice does not match that voice's answer by name.
 */
export async function attachLongitudinal(
  records: DivergenceFull[],
  embed: TextEmbedder,
  embedderId: string,
  contentDir?: string,
  calibration?: CalibrationFile,
): Promise<number> {
  const byId = new Map(records.map((record) => [record.id, record]));
  const pairs = records.flatMap((later) => {
    const earlier = later.re_elicits ? byId.get(later.re_elicits) : undefined;
    return earlier ? [[earlier, later] as const] : [];
  });
  if (pairs.length === 0) return 0;
  const prepared = pairs.map(([earlier, later]) => {
    const voices = [...new Set([...earlier.answers, ...later.answers].map((answer) => answer.model))];
    const neutral = (text: string) =>
      anonymise(
        text,
        voices.map((voice): [string, string] => [voice, 'A model']),
      );
    const answers = (record: DivergenceFull) =>
      record.answers.map((answer) => {
        const whole = neutral(answer.text);
        return { whole, sentences: answerSentences(whole) };
      });
    return {
      earlier,
      later,
      before: answers(earlier),
      after: answers(later),
      claims: earlier.tensions.map((tension) => ({ a: neutral(tension.claim_a), b: neutral(tension.claim_b) })),
    };
  });
  const texts = new Set<string>();
  for (const pair of prepared) {
    for (const answer of [...pair.before, ...pair.after]) for (const text of [answer.whole, ...answer.sentences]) texts.add(text);
    for (const claim of pair.claims) texts.add(claim.a).add(claim.b);
  }
  const list = [...texts];
  const { vectors, embedded } = await embed.embedAll(list);
  const vectorOf = new Map(list.map((text, index) => [text, vectors[index]!]));
  const embedded_ = (answer: { whole: string; sentences: string[] }): EmbeddedAnswer => ({
    whole: vectorOf.get(answer.whole)!,
    sentences: answer.sentences.map((sentence) => vectorOf.get(sentence)!),
  });
  const delta = stanceDelta(calibration);
  for (const { earlier, later, before, after, claims } of prepared) {
    const summary = longitudinalSummary(
      earlier,
      before.map(embedded_),
      later,
      after.map(embedded_),
      claims.map((claim) => ({ a: vectorOf.get(claim.a)!, b: vectorOf.get(claim.b)! })),
      embedderId,
      contentDir === undefined ? undefined : readJudgement(contentDir, later.id, earlier.id),
      { delta },
    );
    for (const record of [earlier, later]) record.longitudinal = [...(record.longitudinal ?? []), summary];
  }
  return embedded;
}
