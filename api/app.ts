/**
 * The Express app: wiring only. Routes are thin; behaviour lives in core/.
 * Order: headers (security, CORS, discovery links, compression) → API routes (405 for wrong methods) → static artifacts and site → 404 → errors.
 */
import { existsSync, statSync } from 'node:fs';
import path from 'node:path';
import express, { type Express } from 'express';
import type { Capabilities } from '../core/capabilities.ts';
import { ApiError, apiError } from '../schemas/errors.ts';
import { createBodyPreflight } from './http/body-preflight.ts';
import type { LingerOptions } from './http/lingering-close.ts';
import { createCompression } from './http/compression.ts';
import { discoveryLinks } from './http/discovery.ts';
import { cors, createErrorHandler, handle, parseQueryString, securityHeaders } from './http/middleware.ts';
import { isMediaPath, mediaFiles } from './http/media.ts';
import { AGENT_ENTRY_CALL, createSuggest, routeCall } from './http/suggest.ts';
import type { Corpus } from './load-artifacts.ts';
import type { LiveService } from './live/service.ts';
import { divergenceRoutes } from './routes/divergences.ts';
import { kinRoutes } from './routes/kin.ts';
import { liveRoutes } from './routes/live.ts';
import { mcpBodyErrorHandler, mcpRoutes, type McpHttpOptions } from './mcp/http.ts';
import { contributeRoutes } from './routes/contribute.ts';
import { crawlerRoutes } from './routes/crawlers.ts';
import { DEFAULT_OFFER_LIMIT, federationRoutes } from './routes/federation.ts';
import { loadNodeKey } from './federation/keys.ts';
import { createFederationNode, type FederationNode } from './federation/node.ts';
import { readRotations } from './federation/rotation.ts';
import { readRecordTwin } from './load-artifacts.ts';
import { createLimiter, DEFAULT_RATE_LIMITS, type RateLimits } from './http/rate-limit.ts';
import { createSqliteStore } from '../storage/sqlite-store.ts';
import type { Store } from '../storage/store.ts';
import { orientationRoutes } from './routes/orientation.ts';
import { queryRoutes } from './routes/query.ts';
import { tensionRoutes } from './routes/tensions.ts';
import { lineageRoutes } from './routes/lineage.ts';
import { dispositionRoutes } from './routes/dispositions.ts';
import { changeHistoryOf } from './changes-file.ts';
import { CHANGES_PATH, changeRoutes } from './routes/changes.ts';
import { staticRoutes } from './routes/static.ts';
import { opsRoutes } from './routes/ops.ts';
import { requestContext, requestId } from './http/request-id.ts';
import { observeRequests } from './http/observe-requests.ts';
import { lineLog, type Logger } from './ops/logger.ts';
import type { Metrics } from './ops/metrics.ts';
import { createReadiness, type Readiness } from './ops/readiness.ts';
import type { Method, RouteContext, RouteDefinition } from './routes/types.ts';
import { routeInput } from './routes/input.ts';
import { exampleQuery } from '../core/examples.ts';

export interface AppOptions {
  corpus: Corpus;
  capabilities?: Partial<Capabilities>;
  /** Built Astro site (dist/); served at / when present. */
  siteDir?: string;
  now?: () => Date;
  log?: (line: string) => void;
  /** The live panel service; live paths answer 503 without it. */
  live?: LiveService;
  ingestSecret?: string;
  /** Durable state (contributions, plays, rate limits); an in-memory store when omitted. */
  store?: Store;
  limits?: Partial<RateLimits>;
  /** Express `trust proxy` setting, so rate limits see the real client behind a proxy. */
  trustProxy?: boolean | number | string;
  /** Writes a tension disposition into the content folder (server: CONTENT_DIR); see api/tensions/. */
  appendDisposition?: RouteContext['appendDisposition'];
  /** POST /api/mcp options (allowed browser origins); defaults from MCP_ALLOWED_ORIGINS. */
  mcp?: McpHttpOptions;
  /** PUBLIC_BASE_URL: origin of the absolute URLs in sitemap.xml and robots.txt; else each request's own. */
  publicBaseUrl?: string;
  /** This deployment as a federation node; by default keyed by the store secret (docs/FEDERATION.md). */
  federation?: { keyFile?: string | undefined; origin?: string | undefined; push?: boolean; offerLimit?: { limit: number; windowMs: number } };
  /** How long a connection refused 413 before its body was read keeps reading it (api/http/lingering-close.ts). */
  linger?: LingerOptions;
  /** JSON logs (api/ops/logger.ts): one line per request; `log` lines go to it when `log` is not given. */
  logger?: Logger;
  /** Prometheus series (api/ops/metrics.ts), observed per request; served by api/ops/metrics-server.ts. */
  metrics?: Metrics;
  /** GET /api/ready (api/ops/readiness.ts); by default ready when the store answers. */
  readiness?: Readiness;
}

export const MAX_URL_BYTES = 8192;
/** Same value as DOCUMENTED_MAX_BODY in api/openapi.ts. */
export const MAX_JSON_BODY_BYTES = 64 * 1024;

export function defaultCapabilities(siteBuilt: boolean, live: boolean, persist: boolean): Capabilities {
  return {
    retrieval: true,
    atlas: true,
    atlas_search: true,
    kin: true,
    tensions: true,
    deliberation: live,
    council: live,
    council_persist: live && persist,
    trace: live,
    jobs: live,
    sessions: live,
    contributions: true,
    proposals: true,
    invite: true,
    play: true,
    mcp: true,
    site: siteBuilt,
  };
}

/** Documents computed per request outside /api/: served without ETag, never answered 304. */
const COMPUTED_PATHS = [
  '/openapi.json',
  '/concepts',
  '/concepts/',
  '/robots.txt',
  '/sitemap.xml',
  '/.well-known/polyphony-node.json',
  '/federation/manifest.json',
  '/federation/manifest.sig',
  '/.well-known/polyphony-key-rotations.json',
];

const routeTables = new WeakMap<Express, readonly RouteDefinition[]>();

/** The route table of an app made by createApp: what /openapi.json is generated from. */
export function routeTable(app: Express): readonly RouteDefinition[] {
  const table = routeTables.get(app);
  if (!table) throw new Error('not an app made by createApp');
  return table;
}

export function createApp(options: AppOptions): Express {
  const log = options.log ?? (options.logger ? lineLog(options.logger) : (line: string) => console.error(line));
  const errorLog = options.logger ? lineLog(options.logger, 'error') : log;
  const siteBuilt = options.siteDir !== undefined && existsSync(options.siteDir);
  const context: RouteContext = {
    corpus: options.corpus,
    capabilities: { ...defaultCapabilities(siteBuilt, options.live !== undefined, Boolean(options.ingestSecret)), ...options.capabilities },
    now: options.now ?? (() => new Date()),
    ...(options.live ? { live: options.live } : {}),
    ...(options.ingestSecret ? { ingestSecret: options.ingestSecret } : {}),
    ...(options.appendDisposition ? { appendDisposition: options.appendDisposition } : {}),
  };

  const store = options.store ?? createSqliteStore(':memory:');
  const limits: RateLimits = { ...DEFAULT_RATE_LIMITS, ...options.limits };
  const limiter = createLimiter(store, context.now);
  context.limiter = limiter;
  context.limits = limits;
  context.log = log;
  context.store = store;

  const app = express();
  app.disable('x-powered-by');
  if (options.trustProxy !== undefined) app.set('trust proxy', options.trustProxy);
  // API answers carry no ETag (a conditional request must never skip live work with a 304),
  // but GET /api/changes, which sets its own; static files keep theirs. Paths are exact:
  // /API/HEALTH and /api/health/ are not routes.
  app.set('etag', false);
  app.set('case sensitive routing', true);
  app.set('strict routing', true);
  app.set('query parser', parseQueryString);
  app.use(
    requestId,
    observeRequests({
      ...(options.logger ? { logger: options.logger } : {}),
      ...(options.metrics ? { metrics: options.metrics } : {}),
      clientSalt: () => store.secret('client-hash-salt'),
    }),
  );
  app.use(securityHeaders, cors, discoveryLinks, createCompression());
  app.use(ignoreConditionalHeaders, refuseLongUrls);
  // Bodies are read only where a body means something, and checked in one place: size → depth → text.
  const ownBodyChecks = new Set<string>();
  app.use(
    createBodyPreflight({
      maxBytes: MAX_JSON_BODY_BYTES,
      answersOwnBodyChecks: (path) => ownBodyChecks.has(path),
      ...(options.linger ? { linger: options.linger } : {}),
    }),
  );
  app.use(requestContext);

  const federation: FederationNode = createFederationNode({
    corpus: options.corpus,
    key: () => loadNodeKey({ keyFile: options.federation?.keyFile, secret: (name) => store.secret(name) }),
    readTwin: (id, suffix) => readRecordTwin(options.corpus, id, suffix),
    origin: options.federation?.origin,
    push: options.federation?.push ?? false,
    rotations: () => readRotations(store),
    history: () => changeHistoryOf(options.corpus),
  });

  const routes: RouteDefinition[] = [
    ...orientationRoutes(context),
    ...opsRoutes(options.readiness ?? createReadiness({ store }), options.corpus.search.embedder),
    ...queryRoutes(context),
    ...divergenceRoutes(context),
    ...kinRoutes(context),
    ...tensionRoutes(context, store),
    ...lineageRoutes(context),
    ...dispositionRoutes(context, store),
    ...changeRoutes(context),
    ...liveRoutes(context),
    ...contributeRoutes(context, store, limiter, limits),
    ...mcpRoutes(options.mcp),
    ...federationRoutes(context, federation, {
      enabled: options.federation?.push ?? false,
      limit: options.federation?.offerLimit ?? DEFAULT_OFFER_LIMIT,
      store,
    }),
    ...staticRoutes(context, () => routes),
    ...crawlerRoutes(context, {
      ...(siteBuilt ? { siteDir: options.siteDir! } : {}),
      ...(options.publicBaseUrl ? { publicBaseUrl: options.publicBaseUrl } : {}),
    }),
  ];
  routeTables.set(app, routes);
  for (const route of routes) if (route.answersDeepBodies) ownBodyChecks.add(route.path);
  for (const route of routes) app.all(route.path, routeHandler(route, routes, options.corpus));

  const staticDirs = [options.corpus.publicDir, ...(siteBuilt ? [options.siteDir!] : [])];
  app.use(staticMethodGuard(staticDirs));
  app.use(mediaFiles(options.corpus.publicDir, setStaticHeaders));
  const staticOptions = { extensions: false as const, redirect: false, acceptRanges: false, setHeaders: setStaticHeaders };
  app.use(express.static(options.corpus.publicDir, { ...staticOptions, index: false }));
  if (siteBuilt) app.use(express.static(options.siteDir!, { ...staticOptions, index: ['index.html'] }));

  app.use((request, _response, next) => next(routeNotFound(request)));
  app.use(mcpBodyErrorHandler(errorLog));
  app.use(createErrorHandler(errorLog, createSuggest(options.corpus, routes)));
  return app;
}

/**
 * Conditional and range headers this server does not honour, dropped before anything reads them,
 * and a doubled slash answered as no route (Express would otherwise fold it onto one).
 */
function ignoreConditionalHeaders(request: express.Request, _response: express.Response, next: express.NextFunction): void {
  // Write preconditions have no use on this read API and its files; byte ranges only on media, so players can seek.
  const ignored = isMediaPath(request.path) ? ['if-match', 'if-unmodified-since'] : ['range', 'if-range', 'if-match', 'if-unmodified-since'];
  for (const header of ignored) delete request.headers[header];
  // API answers are computed per request (and may start live work): never 304, but for the one
  // that names its answer with an ETag (/api/changes: the build's history, fixed for the process).
  // So are the federation documents (signed per request, no validator), whatever Cache-Control allows.
  if ((request.path.startsWith('/api/') && request.path !== CHANGES_PATH) || COMPUTED_PATHS.includes(request.path)) {
    delete request.headers['if-none-match'];
    delete request.headers['if-modified-since'];
  }
  if (request.path.includes('//')) {
    next(routeNotFound(request));
    return;
  }
  next();
}

function refuseLongUrls(request: express.Request, _response: express.Response, next: express.NextFunction): void {
  if (Buffer.byteLength(request.originalUrl) > MAX_URL_BYTES) {
    next(apiError('URI_TOO_LONG', `the request URL is longer than ${MAX_URL_BYTES} bytes`, 'Shorten the query; send long questions with POST /api/query.'));
    return;
  }
  next();
}

function routeNotFound(request: express.Request): ApiError {
  return new ApiError(
    404,
    'ROUTE_NOT_FOUND',
    `nothing is served at ${request.method} ${request.path}`,
    'Start from GET /api/agent-entry, or see /openapi.json for every path.',
    { suggestedNextCall: AGENT_ENTRY_CALL },
  );
}

/**
 * One path of the route table: its declared input parsed before its handler runs (HEAD answered
 * as GET), and a method it does not declare answered 405 with Allow.
 */
function routeHandler(route: RouteDefinition, routes: readonly RouteDefinition[], corpus: Corpus): express.RequestHandler {
  const allowed = Object.keys(route.methods);
  if (allowed.includes('GET')) allowed.push('HEAD');
  return (request, response, next) => {
    response.locals.route = route.path;
    const method = request.method === 'HEAD' ? 'GET' : request.method;
    const handler = route.methods[method as keyof typeof route.methods];
    if (!handler) {
      response.setHeader('Allow', [...allowed, 'OPTIONS'].join(', '));
      next(
        apiError('METHOD_NOT_ALLOWED', `${request.method} is not allowed on ${route.path}`, `Use ${allowed.join(' or ')} on ${route.path}.`, {
          details: { allowed },
          suggestedNextCall: routeCall(corpus, routes, 'GET', route.path) ?? null,
        }),
      );
      return;
    }
    handle(async (request, response) => {
      const input = await routeInput(route, method as Method, request, response, exampleQuery(corpus, route.path));
      await handler(request, response, input);
    })(request, response, next);
  };
}

/** Files answer GET and HEAD; any other method on an existing file is 405 with Allow. */
function staticMethodGuard(dirs: readonly string[]): express.RequestHandler {
  return (request, response, next) => {
    if (request.method === 'GET' || request.method === 'HEAD' || request.method === 'OPTIONS') {
      next();
      return;
    }
    let relative: string;
    try {
      relative = decodeURIComponent(request.path);
    } catch {
      next();
      return;
    }
    const template = /^\/(records|concepts)\/[^/]+\.(json|md)$|^\/audio\/[^/]+\.txt$|^\/changes\/page-[^/]+\.json$/.test(relative) || isMediaPath(relative);
    const exists =
      template ||
      dirs.some((dir) => {
        const file = path.resolve(dir, `.${relative}`);
        if (!file.startsWith(path.resolve(dir) + path.sep)) return false;
        return existsSync(file) && (statSync(file).isFile() || existsSync(path.join(file, 'index.html')));
      });
    if (!exists) {
      next();
      return;
    }
    response.setHeader('Allow', 'GET, HEAD, OPTIONS');
    next(
      apiError('METHOD_NOT_ALLOWED', `${request.method} is not allowed on ${request.path}`, `Use GET on ${request.path}.`, {
        details: { allowed: ['GET', 'HEAD'] },
        suggestedNextCall: { method: 'GET', path: request.path },
      }),
    );
  };
}

/** The site's pages carry small inline scripts and styles; nothing loads from elsewhere. */
const SITE_CSP =
  "default-src 'self'; script-src 'self' 'unsafe-inline'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; media-src 'self'; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'; object-src 'none'";

function setStaticHeaders(response: express.Response, file: string): void {
  if (file.endsWith('.html')) response.setHeader('Content-Security-Policy', SITE_CSP);
  if (file.endsWith('.md')) response.setHeader('Content-Type', 'text/markdown; charset=utf-8');
  else if (file.endsWith('.txt')) response.setHeader('Content-Type', 'text/plain; charset=utf-8');
  else if (file.endsWith('.jsonl')) response.setHeader('Content-Type', 'application/x-ndjson; charset=utf-8');
  // The feeds (core/feeds.ts): Atom, and JSON Feed's own type for the JSON beside it.
  else if (file.endsWith('.atom')) response.setHeader('Content-Type', 'application/atom+xml; charset=utf-8');
  else if (/[\\/]feeds[\\/][^\\/]+\.json$/.test(file)) response.setHeader('Content-Type', 'application/feed+json; charset=utf-8');
  response.setHeader('Cache-Control', 'public, max-age=300');
}
