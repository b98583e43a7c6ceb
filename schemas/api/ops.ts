/** Operating a deployment: readiness (docs/OPERATIONS.md). */
import { z } from 'zod';
import { named, text } from './common.ts';

const CheckSchema = z
  .strictObject({
    ok: z.boolean().describe('Whether this check passes.'),
    reason: text('Why the check fails.').optional(),
  })
  .describe('One readiness check.');

export const ReadinessChecksSchema = z
  .strictObject({
    draining: CheckSchema.describe('Not draining after SIGTERM.'),
    artifacts: CheckSchema.describe('The built artifacts (search index, records) are loaded.'),
    store: CheckSchema.describe('The store answered a read just now.'),
    embedder: CheckSchema.describe('The question embedder has warmed up.'),
    panel: CheckSchema.describe('The live panel configuration, when one is given, is valid and wired.'),
  })
  .describe('Each readiness check.');

export const EmbedderStatusSchema = named(
  'EmbedderStatus',
  z
    .strictObject({
      id: text('The embedder questions are embedded with (the one the index was built with): USE-lite, or openai-compatible:<model>@<dimensions>.'),
      deadline_ms: z
        .number()
        .int()
        .positive()
        .nullable()
        .describe("Deadline of a question's embedding (query_timeout_ms in EMBEDDINGS_CONFIG); null: none (the embedded USE-lite)."),
      last_question: z
        .strictObject({
          vectors: z.enum(['used', 'unavailable']).describe('used: embedded in time; unavailable: answered from the words alone.'),
          cause: z.enum(['timeout', 'error']).optional().describe('When unavailable: timeout (past the deadline) or error.'),
          reason: text("When unavailable: why, without the provider's own message.").optional(),
          at: z.iso.datetime().describe('When.'),
        })
        .nullable()
        .describe("How the last question embedding went (the warm-up's included); null before the first."),
    })
    .describe(
      'The question embedder. A slow or failing embeddings endpoint does not make the process unready: its questions are answered from the words alone, each answer saying so (retrieval.vectors unavailable).',
    ),
);
export type EmbedderStatus = z.infer<typeof EmbedderStatusSchema>;

export const ReadinessSchema = named(
  'Readiness',
  z
    .strictObject({
      ready: z.literal(true).describe('This process should be sent traffic.'),
      checks: ReadinessChecksSchema,
      embedder: EmbedderStatusSchema,
    })
    .describe('Readiness of this process (a 503 NOT_READY answers when it is not ready, with details.reason and details.checks).'),
);
export type Readiness = z.infer<typeof ReadinessSchema>;
