/**
 * The shape of an embeddings configuration file (EMBEDDINGS_CONFIG): an OpenAI-compatible
 * `/v1/embeddings` endpoint used instead of the embedded USE-lite model. Reading the file is
 * providers/embeddings-config.ts's job; this is only the shape.
 */
import { z } from 'zod';

export const EmbeddingsConfigSchema = z.strictObject({
  base_url: z.url({ protocol: /^https?$/, error: 'must be an absolute http(s) URL, e.g. https://api.openai.com/v1' }).describe('Base URL of the endpoint'),
  model: z.string().min(1).describe('Model id sent to the endpoint; part of the embedder id'),
  api_key_env: z
    .string()
    .regex(/^[A-Z_][A-Z0-9_]*$/, 'must be the name of an environment variable, e.g. OPENAI_API_KEY')
    .optional()
    .describe('Environment variable holding the key; omit for keyless local servers'),
  dimensions: z
    .number()
    .int()
    .positive()
    .max(65_536)
    .optional()
    .describe('Sent as `dimensions` (models that can shorten their vectors); unset: the model’s own, learnt from one call at start'),
  batch_size: z.number().int().min(1).max(2048).default(64).describe('Texts in one request'),
  concurrency: z.number().int().min(1).max(64).default(2).describe('Requests in flight at once'),
  timeout_ms: z.number().int().positive().default(30_000).describe('Deadline of one request, across all its retries'),
  max_retries: z
    .number()
    .int()
    .min(0)
    .max(10)
    .default(4)
    .describe('Retries of 429, 5xx and dropped connections inside the deadline; timeouts are never retried'),
  price_per_million_tokens: z.number().nonnegative().default(0).describe('USD per million input tokens'),
  ceiling_usd: z
    .number()
    .positive()
    .default(10)
    .describe('Most one process (a build, or a server since it started) may spend; a request that could pass it is not sent'),
});
export type EmbeddingsConfig = z.infer<typeof EmbeddingsConfigSchema>;
