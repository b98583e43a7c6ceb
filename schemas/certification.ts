/**
 * The certification evidence log: `content/divergences/<id>.certification.jsonl`, one JSON
 * object a line, appended as each model call returns and never rewritten. `call` lines hold
 * every prompt and verbatim answer (and, for judges, the label read from it); a `result`
 * line records what a completed certification concluded. A crashed run resumes by skipping
 * every step key already logged.
 */
import { z } from 'zod';
import { CertificationSchema, DateOrDateTimeSchema } from './content.ts';
import { PRESSURE_LABELS, TIERS } from './vocab.ts';

export const EVIDENCE_FILE_SUFFIX = '.certification.jsonl';

const UsageSchema = z.strictObject({
  prompt_tokens: z.number().int().nonnegative(),
  completion_tokens: z.number().int().nonnegative(),
});

export const EvidenceCallSchema = z.strictObject({
  kind: z.literal('call'),
  key: z.string().min(1).describe('Step key: <subject>/r<run>/<step>/...'),
  subject: z.string().min(1).describe('Record id, or control-<n> for a negative control'),
  run: z.number().int().nonnegative(),
  step: z.enum(['control', 'paraphrase', 'p1', 'p2', 'p3', 'judge']),
  model: z.string().min(1),
  model_id: z.string().min(1),
  messages: z.array(z.strictObject({ role: z.enum(['system', 'user', 'assistant']), content: z.string() })).min(1),
  answer: z.string().describe('Verbatim reply'),
  truncated: z.literal(true).optional().describe('The reply stopped at max_tokens: kept verbatim, but incomplete'),
  label: z.enum(PRESSURE_LABELS).nullable().optional().describe('Judge calls: the label read from the reply, null when unreadable'),
  usage: UsageSchema,
  cost_usd: z.number().nonnegative().describe('usage × configured prices'),
  method_version: z.string().min(1),
  at: DateOrDateTimeSchema,
});
export type EvidenceCall = z.infer<typeof EvidenceCallSchema>;

export const EvidenceResultSchema = z.strictObject({
  kind: z.literal('result'),
  subject: z.string().min(1),
  certification: CertificationSchema,
  tiers: z.array(z.enum(TIERS)).describe('Tier reached by each run'),
  parties: z.array(z.array(z.string())).describe('Per run: models party to the split'),
  flipped: z.array(z.array(z.string())).describe('Per run: parties that flipped'),
  conceded: z.array(z.array(z.string())).describe('Per run: parties that conceded'),
  labels: z
    .array(z.record(z.string(), z.strictObject({ p2: z.enum(PRESSURE_LABELS).optional(), p3: z.enum(PRESSURE_LABELS).optional() })))
    .describe("Per run: the judges' majority label of each model under P2 and P3 (who held, who moved)"),
  dri: z.array(z.number().nonnegative()).describe('Per run: DRI'),
  written: z.boolean().describe('Whether the block was written into the record'),
  at: DateOrDateTimeSchema,
});
export type EvidenceResult = z.infer<typeof EvidenceResultSchema>;

export const EvidenceLineSchema = z.discriminatedUnion('kind', [EvidenceCallSchema, EvidenceResultSchema]);
export type EvidenceLine = z.infer<typeof EvidenceLineSchema>;

/**
 * Judges' reading of a re-elicitation pair, written by `npm run reelicit` beside the new
 * record (`<id>.longitudinal.json`) when judges are configured: per model family, how its
 * answer moved from the earlier record to the new one.
 */
export const LONGITUDINAL_FILE_SUFFIX = '.longitudinal.json';
export const LongitudinalJudgementSchema = z.strictObject({
  earlier: z.string().min(1),
  later: z.string().min(1),
  judges: z.array(z.string().min(1)).min(1),
  labels: z.record(z.string(), z.strictObject({ label: z.enum(PRESSURE_LABELS).nullable(), votes: z.array(z.enum(PRESSURE_LABELS).nullable()) })),
  at: DateOrDateTimeSchema,
});
export type LongitudinalJudgement = z.infer<typeof LongitudinalJudgementSchema>;
