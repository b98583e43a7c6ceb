/**
 * Which embedder a process uses, decided in one place for the build and the server:
 * EMBEDDINGS_CONFIG names a YAML (or JSON) file describing an OpenAI-compatible embeddings
 * endpoint (schemas/embeddings.ts); unset, the embedded USE-lite model, as before. Keys never
 * live in the file. See README.md ("Your own embedding model").
 */
import { existsSync, readFileSync } from 'node:fs';
import YAML from 'yaml';
import { createUseLiteEmbedder, type UseLiteEmbedder, type UseLiteOptions } from './embedder.ts';
import { createOpenAIEmbedder, type OpenAIEmbedder } from './openai-embedder.ts';
import { EmbeddingsConfigSchema, type EmbeddingsConfig } from '../schemas/embeddings.ts';

export { EmbeddingsConfigSchema, type EmbeddingsConfig } from '../schemas/embeddings.ts';

/** The configuration file is missing, unreadable or invalid; the message names the file and the key. */
export class EmbeddingsConfigError extends Error {
  readonly code = 'embeddings_config';
  constructor(message: string) {
    super(message);
    this.name = 'EmbeddingsConfigError';
  }
}

export function parseEmbeddingsConfig(text: string, source: string): EmbeddingsConfig {
  let raw: unknown;
  try {
    raw = YAML.parse(text);
  } catch (error) {
    throw new EmbeddingsConfigError(`${source}: not valid YAML/JSON: ${(error as Error).message}`);
  }
  const parsed = EmbeddingsConfigSchema.safeParse(raw ?? {});
  if (!parsed.success) {
    const problems = parsed.error.issues.map((issue) => `${issue.path.join('.') || '(file)'}: ${issue.message}`).join('; ');
    throw new EmbeddingsConfigError(`${source}: ${problems}`);
  }
  return parsed.data;
}

export function loadEmbeddingsConfig(file: string): EmbeddingsConfig {
  if (!existsSync(file)) throw new EmbeddingsConfigError(`EMBEDDINGS_CONFIG names ${file}, which does not exist`);
  return parseEmbeddingsConfig(readFileSync(file, 'utf8'), file);
}

export type ConfiguredEmbedder =
  { kind: 'use-lite'; embedder: UseLiteEmbedder } | { kind: 'openai-compatible'; embedder: OpenAIEmbedder; config: EmbeddingsConfig; source: string };

/**
 * The embedder EMBEDDINGS_CONFIG describes, else USE-lite with `useLite`'s options (the
 * server's worker threads and kernels, the build's precision).
 */
export async function createConfiguredEmbedder(env: NodeJS.ProcessEnv, useLite: UseLiteOptions = {}): Promise<ConfiguredEmbedder> {
  const file = env.EMBEDDINGS_CONFIG?.trim();
  if (!file) return { kind: 'use-lite', embedder: await createUseLiteEmbedder(useLite) };
  const config = loadEmbeddingsConfig(file);
  if (config.api_key_env && !env[config.api_key_env])
    throw new EmbeddingsConfigError(`${file}: api_key_env: the environment variable ${config.api_key_env} is not set`);
  return { kind: 'openai-compatible', embedder: await createOpenAIEmbedder({ config, env, source: file }), config, source: file };
}
