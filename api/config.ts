/** Server configuration, parsed once at start-up. A bad value fails with its name. */
import { availableParallelism } from 'node:os';
import path from 'node:path';
import { z } from 'zod';
import { REPO_ROOT, pathsFromEnv } from '../scripts/lib/paths.ts';

const EnvSchema = z.object({
  HOST: z.string().min(1).default('127.0.0.1'),
  PORT: z.coerce.number().int().min(0).max(65535).default(4321),
  SITE_DIR: z.string().optional(),
  STORE_PATH: z.string().min(1).optional().describe('SQLite file, or a postgres:// URL to share state between API processes'),
  JOB_LEASE_MS: z.coerce.number().int().min(0).default(180_000),
  JOB_SWEEP_MS: z.coerce.number().int().min(100).default(5_000),
  PANEL_CONFIG: z.string().min(1).optional(),
  INGEST_SECRET: z.string().min(16, 'must be at least 16 characters').optional(),
  JOB_CONCURRENCY: z.coerce.number().int().min(1).max(64).default(4),
  EMBED_WORKERS: z.coerce.number().int().min(0).max(16).default(1).describe('worker threads embedding questions; 0 embeds on the event loop'),
  EMBED_THREADS: z.coerce.number().int().min(1).max(8).optional().describe('CPU threads one question embedding uses (its matrix products)'),
  EMBED_KERNELS: z.enum(['auto', 'wasm']).default('auto').describe('matrix kernels of the embedder: native AVX2 + FMA where built (auto), or WebAssembly only'),
  CONTRIBUTE_RATE_LIMIT: z.string().regex(/^\d+\/\d+$/, 'must be <count>/<seconds>, e.g. 30/3600').optional(),
  LIVE_RATE_LIMIT: z.string().regex(/^\d+\/\d+$/, 'must be <count>/<seconds>').optional(),
  LIVE_GLOBAL_RATE_LIMIT: z.string().regex(/^\d+\/\d+$/, 'must be <count>/<seconds>').optional(),
  COUNCIL_RATE_LIMIT: z.string().regex(/^\d+\/\d+$/, 'must be <count>/<seconds>').optional(),
  COUNCIL_GLOBAL_RATE_LIMIT: z.string().regex(/^\d+\/\d+$/, 'must be <count>/<seconds>').optional(),
  FEDERATION_KEY_FILE: z.string().min(1).optional().describe('PKCS#8 PEM file of the Ed25519 federation key (created on first start); else the key lives in the store'),
  FEDERATION_PUSH: z.enum(['0', '1', 'false', 'true']).default('0').describe('1 accepts signed offers from pinned peers at POST /api/federation/offer'),
  FEDERATION_OFFER_RATE_LIMIT: z.string().regex(/^\d+\/\d+$/, 'must be <count>/<seconds>').optional(),
  FEDERATION_ORIGIN: z.string().url().optional().describe('public origin this deployment signs its federation manifest for'),
  TRUST_PROXY: z.string().optional().describe('Express trust proxy: "true", a hop count, or an address list'),
});

export interface ServerConfig {
  host: string;
  port: number;
  contentDir: string;
  artifactsDir: string;
  cacheDir: string;
  siteDir: string;
  storePath: string;
  panelConfig: string | undefined;
  ingestSecret: string | undefined;
  jobConcurrency: number;
  /** Worker threads that embed questions off the event loop (0: on it). */
  embedWorkers: number;
  /** CPU threads each embedding model instance uses for one question on WebAssembly (ADR 0006). */
  embedThreads: number;
  /** The same on the native kernels (ADR 0007): EMBED_THREADS if set, else 1. */
  embedNativeThreads: number;
  /** Matrix kernels of the embedder (api/providers/use-lite-runtime.cjs). */
  embedKernels: 'auto' | 'wasm';
  jobLeaseMs: number;
  jobSweepMs: number;
  trustProxy: boolean | number | string | undefined;
  /** Federation key file and public origin (docs/FEDERATION.md); both optional. */
  federation: { keyFile: string | undefined; origin: string | undefined; push: boolean; offerLimit?: { limit: number; windowMs: number } };
  /** Overrides of the default rate limits (api/http/rate-limit.ts), from `<count>/<seconds>` values. */
  limits: Partial<Record<'contribute' | 'live' | 'liveGlobal' | 'council' | 'councilGlobal', { limit: number; windowMs: number }>>;
}

/**
 * Two threads for one question's embedding when the cores allow it, counting the models that
 * share them (server processes, WORKERS, times embedding workers each, EMBED_WORKERS): threads
 * that wait for each other on an oversubscribed machine are slower than one (bench:load,
 * 2 processes × 2 threads on 2 cores: 150 distinct questions/s; one thread each: 212).
 */
export function defaultEmbedThreads(env: NodeJS.ProcessEnv): number {
  const count = (value: string | undefined) => {
    const number = Number(value ?? '1');
    return Number.isInteger(number) && number > 1 ? number : 1;
  };
  const models = count(env.WORKERS) * count(env.EMBED_WORKERS);
  return Math.max(1, Math.min(2, Math.floor(availableParallelism() / models)));
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): ServerConfig {
  const parsed = EnvSchema.safeParse(env);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`).join('; ');
    throw new Error(`invalid environment: ${problems}`);
  }
  return {
    host: parsed.data.HOST,
    port: parsed.data.PORT,
    ...pathsFromEnv(env),
    siteDir: path.resolve(parsed.data.SITE_DIR ?? path.join(REPO_ROOT, 'dist')),
    storePath: parsed.data.STORE_PATH ?? path.join(REPO_ROOT, '.data', 'polyphony.db'),
    panelConfig: parsed.data.PANEL_CONFIG,
    ingestSecret: parsed.data.INGEST_SECRET,
    jobConcurrency: parsed.data.JOB_CONCURRENCY,
    embedWorkers: parsed.data.EMBED_WORKERS,
    embedThreads: parsed.data.EMBED_THREADS ?? defaultEmbedThreads(env),
    // On the native kernels one thread gave the better fast path on 2 cores: the helper
    // thread competes with the event loop's share of each question (bench/README.md).
    embedNativeThreads: parsed.data.EMBED_THREADS ?? 1,
    embedKernels: parsed.data.EMBED_KERNELS,
    jobLeaseMs: parsed.data.JOB_LEASE_MS,
    jobSweepMs: parsed.data.JOB_SWEEP_MS,
    trustProxy: parseTrustProxy(parsed.data.TRUST_PROXY),
    federation: {
      keyFile: parsed.data.FEDERATION_KEY_FILE ? path.resolve(parsed.data.FEDERATION_KEY_FILE) : undefined,
      origin: parsed.data.FEDERATION_ORIGIN ? new URL(parsed.data.FEDERATION_ORIGIN).origin : undefined,
      push: parsed.data.FEDERATION_PUSH === '1' || parsed.data.FEDERATION_PUSH === 'true',
      ...(parsed.data.FEDERATION_OFFER_RATE_LIMIT ? { offerLimit: window(parsed.data.FEDERATION_OFFER_RATE_LIMIT)! } : {}),
    },
    limits: Object.fromEntries(
      (
        [
          ['contribute', parsed.data.CONTRIBUTE_RATE_LIMIT],
          ['live', parsed.data.LIVE_RATE_LIMIT],
          ['liveGlobal', parsed.data.LIVE_GLOBAL_RATE_LIMIT],
          ['council', parsed.data.COUNCIL_RATE_LIMIT],
          ['councilGlobal', parsed.data.COUNCIL_GLOBAL_RATE_LIMIT],
        ] as const
      ).flatMap(([name, value]) => (value ? [[name, window(value)!]] : [])),
    ),
  };
}

function parseTrustProxy(value: string | undefined): boolean | number | string | undefined {
  if (value === undefined || value === '') return undefined;
  if (value === 'true' || value === 'false') return value === 'true';
  if (/^\d+$/.test(value)) return Number(value);
  return value;
}

function window(value: string | undefined): { limit: number; windowMs: number } | undefined {
  if (!value) return undefined;
  const [count, seconds] = value.split('/').map(Number);
  return { limit: count!, windowMs: seconds! * 1000 };
}
