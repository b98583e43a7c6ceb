/** Structured model output, validated with zod: malformed output is retried or reported, never passed through. */
import { z } from 'zod';
import { TENSION_STATUSES } from '../../schemas/vocab.ts';

export const SynthesisSchema = z.object({
  answer: z.string().min(1),
  tensions: z
    .array(
      z.object({
        topic: z.string().min(1),
        voice_a: z.string().min(1),
        claim_a: z.string().min(1),
        voice_b: z.string().min(1),
        claim_b: z.string().min(1),
        status: z.enum(TENSION_STATUSES),
      }),
    )
    .max(12),
  deliberation_card: z.object({
    shared_ground: z.string(),
    epistemic_status: z.string(),
    novel_synthesis: z.string(),
  }),
});
export type Synthesis = z.infer<typeof SynthesisSchema>;

export const TraceDeltaSchema = z.object({
  what_changed: z.string().min(1),
  corpus_influence: z.enum(['none', 'light', 'substantial']),
  claims_added: z.array(z.string()),
  claims_dropped: z.array(z.string()),
  cited_ids: z.array(z.string()),
  tensions_gained: z.array(z.string()),
});
export type TraceDelta = z.infer<typeof TraceDeltaSchema>;

/** A voice's second round: it keeps or revises its position, with a reason (and the new answer when revised). */
export const SecondRoundSchema = z.object({
  stance: z.enum(['kept', 'revised']),
  reason: z.string().min(1),
  revised_answer: z.string().optional(),
});
export type SecondRound = z.infer<typeof SecondRoundSchema>;

export type Parsed<T> = { ok: true; value: T } | { ok: false; problem: string };

/** Accepts a bare JSON object or one inside a ```json fence; anything else is a problem to report. */
export function parseStructured<T>(content: string, schema: z.ZodType<T>): Parsed<T> {
  const fenced = content.match(/```(?:json)?\s*([\s\S]*?)```/);
  const text = (fenced ? fenced[1]! : content).trim();
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    return { ok: false, problem: 'the reply was not valid JSON.' };
  }
  const result = schema.safeParse(raw);
  if (!result.success) {
    return {
      ok: false,
      problem: `the JSON did not match the shape: ${result.error.issues
        .slice(0, 4)
        .map((issue) => `${issue.path.join('.') || '(root)'} ${issue.message}`)
        .join('; ')}.`,
    };
  }
  return { ok: true, value: result.data };
}
