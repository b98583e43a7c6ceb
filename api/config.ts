/** Server configuration, parsed once at start-up. A bad value fails with its name. */
import path from 'node:path';
import { isIP } from 'node:net';
import { z } from 'zod';
import { REPO_ROOT, pathsFromEnv } from '../core/paths.ts';
import { DEFAULT_RATE_LIMITS, type RateLimits, type Window } from '../core/rate-limits.ts';
import { DEFAULT_SEARCH_SLOTS } from '../core/search/admission.ts';
import { LOG_LEVELS, type LogLevel } from './ops/logger.ts';

/**
 * Every rate limit the server enforces, the variable that sets it (`<count>/<seconds>`) and
 * what it counts; defaults are DEFAULT_RATE_LIMITS. README.md lists each with its default
 * (a test keeps the two in step).
 */
export const RATE_LIMIT_SETTINGS = [
  { env: 'CONTRIBUTE_RATE_LIMIT', limit: 'contribute', counts: 'POST /api/contribute and POST /api/store, per client' },
  { env: 'PLAY_RATE_LIMIT', limit: 'play', counts: 'POST /api/play, per client' },
  { env: 'LIVE_RATE_LIMIT', limit: 'live', counts: 'live deliberation and trace (sync or async), per client' },
  { env: 'LIVE_GLOBAL_RATE_LIMIT', limit: 'liveGlobal', counts: 'live deliberation and trace, all clients together' },
  { env: 'COUNCIL_RATE_LIMIT', limit: 'council', counts: 'live council, per client' },
  { env: 'COUNCIL_GLOBAL_RATE_LIMIT', limit: 'councilGlobal', counts: 'live council, all clients together' },
] as const satisfies readonly { env: string; limit: keyof RateLimits; counts: string }[];

/** `<count>/<seconds>` (already validated by windowSetting) as a window. */
function offerWindow(value: string): { limit: number; windowMs: number } {
  const [count, seconds] = value.split('/').map(Number);
  return { limit: count!, windowMs: seconds! * 1000 };
}

/** A limit as the environment writes it: `<count>/<seconds>`. */
export function formatWindow(window: Window): string {
  return `${window.limit}/${Math.round(window.windowMs / 1000)}`;
}

const windowSetting = z
  .string()
  .regex(/^\d+\/[1-9]\d*$/, 'must be <count>/<seconds> with seconds at least 1, e.g. 30/3600')
  .optional();

/** Default time in-flight requests and running jobs get to finish after SIGTERM (DRAIN_GRACE_MS). */
export const DEFAULT_DRAIN_GRACE_MS = 25_000;

/** Default time to receive a whole request, head and body (BODY_TIMEOUT_MS). */
export const DEFAULT_BODY_TIMEOUT_MS = 30_000;

const EnvSchema = z.object({
  HOST: z.string().min(1).default('127.0.0.1'),
  PORT: z.coerce.number().int().min(0).max(65535).default(4321),
  SITE_DIR: z.string().optional(),
  STORE_PATH: z.string().min(1).optional().describe('SQLite file, or a postgres:// URL to share state between API processes'),
  JOB_LEASE_MS: z.coerce.number().int().min(0).default(180_000),
  JOB_SWEEP_MS: z.coerce.number().int().min(100).default(5_000),
  PANEL_CONFIG: z.string().min(1).optional(),
  EMBEDDINGS_CONFIG: z
    .string()
    .min(1)
    .optional()
    .describe('YAML file of an OpenAI-compatible embeddings endpoint used instead of the embedded USE-lite model (providers/embeddings-config.ts)'),
  INGEST_SECRET: z.string().min(16, 'must be at least 16 characters').optional(),
  JOB_CONCURRENCY: z.coerce.number().int().min(1).max(64).default(4),
  EMBED_WORKERS: z.coerce.number().int().min(0).max(16).default(1).describe('worker threads embedding questions; 0 embeds on the event loop'),
  SEARCH_CONCURRENCY: z.coerce
    .number()
    .int()
    .min(1)
    .max(64)
    .default(DEFAULT_SEARCH_SLOTS)
    .describe('questions a process scores at once; the others wait their turn, their embeddings under way'),
  EMBED_THREADS: z.coerce
    .number()
    .int()
    .min(1)
    .max(8)
    .default(1)
    .describe('CPU threads one question embedding uses for its matrix products on the native kernels (at most 2 are used; the WebAssembly fallback uses 1)'),
  EMBED_KERNELS: z
    .enum(['auto', 'avx2', 'wasm'])
    .default('auto')
    .describe('matrix kernels of the embedder: native where built, on AVX-512 where the CPU has it (auto); native without AVX-512 (avx2); or WebAssembly only'),
  ...Object.fromEntries(RATE_LIMIT_SETTINGS.map((setting) => [setting.env, windowSetting])),
  TRUST_PROXY: z.string().optional().describe('proxies in front of the server: a hop count, or a comma list of their addresses / CIDR ranges'),
  PUBLIC_BASE_URL: z
    .url({ protocol: /^https?$/, error: 'must be an absolute http(s) URL, e.g. https://polyphony.example' })
    .refine((value) => !/[?#]/.test(value), 'must not carry a query or fragment')
    .optional()
    .describe('the public origin (and path prefix) of the site, for absolute URLs in sitemap.xml and robots.txt'),
  BODY_TIMEOUT_MS: z.coerce.number().int().min(1000).max(3_600_000).default(DEFAULT_BODY_TIMEOUT_MS).describe('time to receive a whole request, head and body'),
  FEDERATION_KEY_FILE: z
    .string()
    .min(1)
    .optional()
    .describe('PKCS#8 PEM file of the Ed25519 federation key (created on first start); else the key lives in the store'),
  FEDERATION_PUSH: z.enum(['0', '1', 'false', 'true']).default('0').describe('1 accepts signed offers from pinned peers at POST /api/federation/offer'),
  FEDERATION_OFFER_RATE_LIMIT: windowSetting,
  FEDERATION_ORIGIN: z.string().url().optional().describe('public origin this deployment signs its federation manifest for'),
  LOG_LEVEL: z
    .enum(LOG_LEVELS)
    .default('info')
    .describe('threshold of the JSON log lines on stdout: fatal, error, warn, info (one line per request), debug, trace or silent'),
  METRICS_PORT: z.coerce
    .number()
    .int()
    .min(0)
    .max(65535)
    .optional()
    .describe(
      'port of GET /metrics (Prometheus text format; 0: any free port, logged); metrics are off when unset. With WORKERS=n the primary serves the sum of the workers',
    ),
  METRICS_HOST: z.string().min(1).default('127.0.0.1').describe('address the metrics port binds to; loopback unless set'),
  DRAIN_GRACE_MS: z.coerce
    .number()
    .int()
    .min(0)
    .max(600_000)
    .default(DEFAULT_DRAIN_GRACE_MS)
    .describe('after SIGTERM, how long in-flight requests and running jobs get to finish before connections close and jobs are handed back'),
  RELEVANCE_FLOOR: z.coerce
    .number()
    .min(0)
    .max(1)
    .optional()
    .describe('calibrated relevance a record needs to be returned (match.relevance); default: the calibration in effect (/relevance-calibration.json)'),
  ATLAS_RELEVANCE_FLOOR: z.coerce
    .number()
    .min(0)
    .max(1)
    .optional()
    .describe('calibrated relevance an Atlas record needs to be returned beside works; default: the calibration in effect'),
});

/**
 * Every environment variable the server reads, with the default the schema applies (undefined:
 * unset, or computed by loadConfig, as the folders): the EnvSchema above, the folders of
 * core/paths.ts, WORKERS (api/server.ts) and MCP_ALLOWED_ORIGINS (api/mcp/http.ts).
 * docs/OPERATIONS.md lists each; test/operations-doc.test.ts keeps the two in step.
 */
export function serverSettings(): { name: string; default: string | undefined }[] {
  const defaults = EnvSchema.parse({}) as Record<string, unknown>;
  return [
    ...Object.keys(EnvSchema.shape).map((name) => ({ name, default: defaults[name] === undefined ? undefined : String(defaults[name]) })),
    ...['CONTENT_DIR', 'ARTIFACTS_DIR', 'EMBEDDING_CACHE_DIR', 'MCP_ALLOWED_ORIGINS'].map((name) => ({ name, default: undefined })),
    { name: 'WORKERS', default: String(DEFAULT_WORKERS) },
  ];
}

/** API processes when WORKERS is unset (api/server.ts). */
export const DEFAULT_WORKERS = 1;

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
  /** SEARCH_CONCURRENCY: questions scored at once (core/search/admission.ts). */
  searchConcurrency: number;
  /**
   * CPU threads each embedding model instance uses for one question's products on the native
   * kernels (ADR 0007; at most 2 are used). The WebAssembly fallback runs on one (ADR 0012).
   */
  embedThreads: number;
  /** Matrix kernels of the embedder (providers/use-lite-runtime.cjs). */
  embedKernels: 'auto' | 'avx2' | 'wasm';
  jobLeaseMs: number;
  jobSweepMs: number;
  /** Express `trust proxy`: a hop count or an address list, never `true` (any client could then name its own address). */
  trustProxy: number | string | undefined;
  /** Every rate limit: DEFAULT_RATE_LIMITS with the overrides of RATE_LIMIT_SETTINGS. */
  limits: RateLimits;
  /** Origin (and path prefix) for absolute URLs in sitemap.xml and robots.txt; else the request's own. */
  publicBaseUrl: string | undefined;
  /** Time to receive a whole request, head and body; a body that never finishes is answered 408 and closed. */
  bodyTimeoutMs: number;
  logLevel: LogLevel;
  /** GET /metrics on its own listener; undefined when METRICS_PORT is unset (off). */
  metrics: { host: string; port: number } | undefined;
  drainGraceMs: number;
  /** Relevance floors over the calibration's (RELEVANCE_FLOOR, ATLAS_RELEVANCE_FLOOR). */
  relevanceFloors: { relevant?: number; atlas?: number };
  /** Federation key file and public origin (docs/FEDERATION.md); both optional. */
  federation: { keyFile: string | undefined; origin: string | undefined; push: boolean; offerLimit?: { limit: number; windowMs: number } };
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
    searchConcurrency: parsed.data.SEARCH_CONCURRENCY,
    // One thread by default: on 2 cores the native products' helper thread competes with the
    // event loop's share of each question (bench/README.md).
    embedThreads: parsed.data.EMBED_THREADS,
    embedKernels: parsed.data.EMBED_KERNELS,
    jobLeaseMs: parsed.data.JOB_LEASE_MS,
    jobSweepMs: parsed.data.JOB_SWEEP_MS,
    trustProxy: parseTrustProxy(parsed.data.TRUST_PROXY),
    limits: rateLimitsFromEnv(parsed.data as Record<string, unknown>),
    publicBaseUrl: parsed.data.PUBLIC_BASE_URL?.replace(/\/+$/, ''),
    bodyTimeoutMs: parsed.data.BODY_TIMEOUT_MS,
    logLevel: parsed.data.LOG_LEVEL,
    metrics: parsed.data.METRICS_PORT === undefined ? undefined : { host: parsed.data.METRICS_HOST, port: parsed.data.METRICS_PORT },
    drainGraceMs: parsed.data.DRAIN_GRACE_MS,
    relevanceFloors: {
      ...(parsed.data.RELEVANCE_FLOOR !== undefined ? { relevant: parsed.data.RELEVANCE_FLOOR } : {}),
      ...(parsed.data.ATLAS_RELEVANCE_FLOOR !== undefined ? { atlas: parsed.data.ATLAS_RELEVANCE_FLOOR } : {}),
    },
    federation: {
      keyFile: parsed.data.FEDERATION_KEY_FILE ? path.resolve(parsed.data.FEDERATION_KEY_FILE) : undefined,
      origin: parsed.data.FEDERATION_ORIGIN ? new URL(parsed.data.FEDERATION_ORIGIN).origin : undefined,
      push: parsed.data.FEDERATION_PUSH === '1' || parsed.data.FEDERATION_PUSH === 'true',
      ...(parsed.data.FEDERATION_OFFER_RATE_LIMIT ? { offerLimit: offerWindow(parsed.data.FEDERATION_OFFER_RATE_LIMIT) } : {}),
    },
  };
}

function rateLimitsFromEnv(values: Record<string, unknown>): RateLimits {
  const limits: RateLimits = { ...DEFAULT_RATE_LIMITS };
  for (const setting of RATE_LIMIT_SETTINGS) {
    const value = values[setting.env];
    if (typeof value !== 'string') continue;
    const [count, seconds] = value.split('/').map(Number);
    limits[setting.limit] = { limit: count!, windowMs: seconds! * 1000 };
  }
  return limits;
}

const PROXY_NAMES = new Set(['loopback', 'linklocal', 'uniquelocal']);

/**
 * TRUST_PROXY names the proxies in front of the server, so that the client address (rate
 * limits, play counts) is the one the nearest trusted proxy saw. `true` would trust every
 * X-Forwarded-For entry, the leftmost of which any client writes itself: refused by name.
 */
function parseTrustProxy(value: string | undefined): number | string | undefined {
  if (value === undefined || value === '' || value === 'false' || value === '0') return undefined;
  if (value === 'true') {
    throw new Error(
      'invalid environment: TRUST_PROXY: "true" would trust any X-Forwarded-For a client sends; give the number of proxies in front of the server (e.g. 1) or their addresses (e.g. loopback or 10.0.0.0/8)',
    );
  }
  if (/^\d+$/.test(value)) return Number(value);
  const entries = value.split(',').map((entry) => entry.trim());
  const bad = entries.filter((entry) => !PROXY_NAMES.has(entry) && !isAddressOrRange(entry));
  if (bad.length > 0 || entries.length === 0) {
    throw new Error(
      `invalid environment: TRUST_PROXY: ${bad.map((entry) => JSON.stringify(entry)).join(', ')} is not a hop count, an IP address, a CIDR range or one of loopback, linklocal, uniquelocal`,
    );
  }
  return entries.join(',');
}

function isAddressOrRange(entry: string): boolean {
  const [address = '', prefix, ...rest] = entry.split('/');
  const family = isIP(address);
  if (family === 0 || rest.length > 0) return false;
  if (prefix === undefined) return true;
  if (!/^\d{1,3}$/.test(prefix)) return family === 4 && isIP(prefix) === 4;
  return Number(prefix) <= (family === 4 ? 32 : 128);
}
