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

export const ReadinessSchema = named(
  'Readiness',
  z
    .strictObject({
      ready: z.literal(true).describe('This process should be sent traffic.'),
      checks: ReadinessChecksSchema,
    })
    .describe('Readiness of this process (a 503 NOT_READY answers when it is not ready, with details.reason and details.checks).'),
);
export type Readiness = z.infer<typeof ReadinessSchema>;
