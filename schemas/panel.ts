/**
 * The shape of a live panel's configuration file (config/panel.*.example.yaml): models, their
 * OpenAI-compatible base URLs, key variables, prices, chair and fallbacks, ceiling, deadline.
 * Reading the file is providers/panel-config.ts's job; this is only the shape.
 */
import { z } from 'zod';

export const DEFAULT_DELIBERATION_DEADLINE_MS = 180_000;

const PriceSchema = z.object({
  input_per_mtok: z.number().nonnegative().describe('USD per million prompt tokens'),
  output_per_mtok: z.number().nonnegative().describe('USD per million completion tokens'),
});

export const PanelModelSchema = z.strictObject({
  name: z.string().min(1).describe('Voice label used in answers and tensions, e.g. "Claude"'),
  family: z.string().min(1).describe('Model family for kin, e.g. "Claude"'),
  lab: z.string().min(1),
  model: z.string().min(1).describe('Model id sent to the endpoint'),
  base_url: z.string().url(),
  api_key_env: z
    .string()
    .regex(/^[A-Z_][A-Z0-9_]*$/)
    .optional()
    .describe('Environment variable holding the key; omit for keyless local servers'),
  timeout_ms: z.number().int().positive().optional().describe('Deadline of one call, across all its retries'),
  max_retries: z.number().int().min(0).max(5).optional(),
  max_tokens: z.number().int().positive().optional(),
  temperature: z.number().min(0).max(2).optional(),
  price: PriceSchema.optional(),
});
export type PanelModelConfig = z.infer<typeof PanelModelSchema>;

export const PanelConfigSchema = z.strictObject({
  spending_ceiling_usd: z.number().positive().default(100),
  defaults: z
    .strictObject({
      timeout_ms: z.number().int().positive().default(60_000).describe('Deadline of one call, across all its retries'),
      max_retries: z
        .number()
        .int()
        .min(0)
        .max(5)
        .default(2)
        .describe('Retries of 429, 5xx and dropped connections inside the deadline; timeouts are never retried'),
      max_tokens: z.number().int().positive().default(1200),
      deliberation_deadline_ms: z
        .number()
        .int()
        .positive()
        .default(DEFAULT_DELIBERATION_DEADLINE_MS)
        .describe('Deadline of a whole deliberation, council or trace: calls still running then are aborted and named'),
      retry_truncated: z.boolean().default(true).describe('Ask a voice cut off at max_tokens once more with twice the room'),
      second_round: z
        .boolean()
        .default(false)
        .describe('Run the second round (each voice reads the others, anonymised, and keeps or revises) unless a request says otherwise'),
    })
    .default({
      timeout_ms: 60_000,
      max_retries: 2,
      max_tokens: 1200,
      deliberation_deadline_ms: DEFAULT_DELIBERATION_DEADLINE_MS,
      retry_truncated: true,
      second_round: false,
    }),
  panel: z.array(PanelModelSchema).min(1),
  chair: z.strictObject({
    use: z.string().min(1).describe('Name of the model that synthesizes (a panel member or one of `extra`)'),
    fallbacks: z.array(z.string().min(1)).default([]).describe('Names tried in order when the chair fails'),
  }),
  extra: z.array(PanelModelSchema).default([]).describe('Models that can chair but do not sit on the panel'),
});
export type PanelConfig = z.infer<typeof PanelConfigSchema>;
