/** Limits of a pull and of the verifier, from the environment (README, docs/FEDERATION.md). */
import { z } from 'zod';
import type { FetchOptions } from './fetch.ts';
import type { PullLimits } from './pull.ts';

const EnvSchema = z.object({
  FEDERATION_MAX_RECORDS: z.coerce.number().int().min(1).default(5000),
  FEDERATION_MAX_BYTES: z.coerce.number().int().min(1024).default(50_000_000),
  FEDERATION_TIMEOUT_MS: z.coerce.number().int().min(100).default(10_000),
  FEDERATION_ALLOW_PRIVATE: z.enum(['0', '1', 'false', 'true']).default('0'),
});

export function federationLimitsFromEnv(env: NodeJS.ProcessEnv): PullLimits & FetchOptions {
  const parsed = EnvSchema.safeParse(env);
  if (!parsed.success) {
    throw new Error(`invalid environment: ${parsed.error.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`).join('; ')}`);
  }
  return {
    maxRecords: parsed.data.FEDERATION_MAX_RECORDS,
    maxBytes: parsed.data.FEDERATION_MAX_BYTES,
    timeoutMs: parsed.data.FEDERATION_TIMEOUT_MS,
    allowPrivate: parsed.data.FEDERATION_ALLOW_PRIVATE === '1' || parsed.data.FEDERATION_ALLOW_PRIVATE === 'true',
  };
}
