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
  // 400 ms: a hosted endpoint embeds one short question in about 100-300 ms when healthy, a local
  // server (Ollama, TEI) in tens; 400 lets a healthy one answer with room to spare and keeps a
  // degraded answer (words alone) well inside the fast path's budget of about 2 s (spec §4.2).
  query_timeout_ms: z
    .number()
    .int()
    .min(10)
    .max(60_000)
    .default(400)
    .describe(
      "Deadline of a question's embedding on the server's fast path: past it the question is answered from the words alone (and says so), and the late vector is kept for the next ask; a timeout_ms below it comes first",
    ),
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
