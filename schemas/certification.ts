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
  step: z
    .enum(['control', 'paraphrase', 'p1', 'p2', 'p3', 'judge', 'stance'])
    .describe('stance: a judge reading which claim an answer supports, for --calibrate'),
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

const SideSchema = z.enum(['A', 'B', 'neither']);
const MoveSchema = z.enum(['held', 'conceded', 'flipped', 'unclear']).describe('unclear: read on neither side after pressure (ADR 0024)');
const BySide = z.record(z.string(), z.array(SideSchema));
export const StanceRunSchema = z.strictObject({
  readings: z.array(
    z.strictObject({
      voices: z.tuple([z.string(), z.string()]),
      control: BySide.describe("Side of each voice's control re-rolls"),
      held: z.record(z.string(), SideSchema.nullable()).describe("The side each voice's re-rolls were read on; null: read on both sides, noise, not a party"),
      stands: z.enum(['as-named', 'reversed']).nullable(),
      paraphrase: BySide.describe("Side of each voice's answer per paraphrase"),
      persistence: z.record(z.string(), z.number().min(0).max(1)),
      pressure: z.record(z.string(), z.strictObject({ p2: SideSchema.optional(), p3: SideSchema.optional() })),
    }),
  ),
  measured: z.record(z.string(), z.strictObject({ p2: MoveSchema.optional(), p3: MoveSchema.optional() })),
  judge_agreement: z.number().min(0).max(1).nullable(),
  disagreements: z.array(z.strictObject({ model: z.string(), pressure: z.enum(['p2', 'p3']), measured: MoveSchema, judged: z.enum(PRESSURE_LABELS) })),
  noise: z.array(z.string()),
  reason: z.string().optional(),
});
export type StanceRun = z.infer<typeof StanceRunSchema>;

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
  stance: z
    .array(StanceRunSchema.nullable())
    .optional()
    .describe('perturbation-v2, per run: each named tension read on the claims, the measured moves, the judges beside them'),
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

/**
 * How well this deployment's instrument sees splits: `content/certification-calibration.json`,
 * written by `npm run certify -- --calibrate` (ADR 0015) and served by the API and the pages.
 */
export const CALIBRATION_FILE = 'certification-calibration.json';
const FigureSchema = z.strictObject({
  value: z.number().nullable(),
  interval: z.tuple([z.number(), z.number()]).nullable().describe('95 % percentile bootstrap interval, resampling records'),
  tune: z.number().nullable().describe('On the tuning half of the records'),
  held_out: z.number().nullable().describe('On the held-out half, never tuned on'),
});
export const MethodCalibrationSchema = z.strictObject({
  pair_auc: FigureSchema.describe('Named voice pairs against unnamed ones, scored by the split strength the method measures'),
  side_accuracy: FigureSchema.describe('Tensions whose two claims the method places with their own voices'),
  records: z.number().int().nonnegative(),
  tensions: z.number().int().nonnegative(),
  pairs: z.strictObject({ named: z.number().int().nonnegative(), unnamed: z.number().int().nonnegative() }),
  passes: z.boolean().describe('Both interval lows reach the floor: --write may write tiers with this method'),
  margin: z
    .strictObject({
      delta: z.number().nullable(),
      precision_target: z.number(),
      tune: z.strictObject({ precision: z.number().nullable(), coverage: z.number().nullable() }),
      held_out: z.strictObject({ precision: z.number().nullable(), coverage: z.number().nullable() }),
    })
    .optional()
    .describe("perturbation-v2: the side measure's dead zone δ, fitted on the tuning half, checked on the held-out half"),
  judges: z.array(z.string()).optional().describe('The judges, for the judges-as-instrument reading'),
});
export const CalibrationFileSchema = z.strictObject({
  date: z.string().regex(/^\d{4}-\d{2}-\d{2}$/),
  embedder: z.string().min(1),
  records: z.number().int().nonnegative().describe('Atlas records with at least two answers and one tension whose voices answered'),
  halves: z.string().describe('How records fall into the tuning and held-out halves'),
  bootstrap: z.strictObject({ resamples: z.number().int().positive(), seed: z.number().int().nonnegative(), level: z.number() }),
  floor: z.strictObject({ pair_auc: z.number(), side_accuracy: z.number() }).describe('Interval lows a method must reach before its tiers are written'),
  methods: z.record(z.string(), MethodCalibrationSchema),
});
export type CalibrationFile = z.infer<typeof CalibrationFileSchema>;
