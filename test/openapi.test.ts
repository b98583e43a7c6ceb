/**
 * /openapi.json against the running app: the document is well formed (OpenAPI 3.1.0,
 * interface 5.2.0, every path, every schema compiles) and every kind of real response,
 * success and error, validates against it. The schemas are proven on real bodies.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Express } from 'express';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { z } from 'zod';
import { createApp, MAX_URL_BYTES, routeTable } from '../api/app.ts';
import type { Capabilities } from '../core/capabilities.ts';
import { MAX_QUERY_CHARS, QUERY_PARAMETERS } from '../core/query-params.ts';
import { INTERFACE_VERSION } from '../core/version.ts';
import { ERROR_CODES } from '../schemas/errors.ts';
import { loadCorpus, type Corpus } from '../api/load-artifacts.ts';
import { createOpenApiDocument, DOCUMENTED_MAX_URL_BYTES } from '../api/openapi.ts';
import { testEmbedder } from '../devkit/app.ts';
import { fileSpecs } from '../api/routes/files.ts';
import { ROUTE_SPECS } from '../api/routes/specs.ts';
import { FederationManifestSchema, KeyRotationsDocumentSchema, ManifestSignatureSchema, NodeDocumentSchema } from '../schemas/federation.ts';
import {
  AgentEntrySchema,
  apiSchemas,
  AsyncJobAcceptedSchema,
  AudioManifestSchema,
  ChangesDeltaSchema,
  ChangesIndexSchema,
  ChangesPageSchema,
  CouncilPersistedSchema,
  CouncilResponseSchema,
  DeliberationResponseSchema,
  JobStateSchema,
  TraceResponseSchema,
  BriefResponseSchema,
  ClaimsDocumentSchema,
  ConceptCardSchema,
  ConceptIndexSchema,
  ContextResponseSchema,
  DivergenceDocumentSchema,
  DivergenceIndexSchema,
  DivergenceRecordSchema,
  DivergenceSearchResultSchema,
  ErrorEnvelopeSchema,
  JsonFeedSchema,
  HealthSchema,
  ReadinessSchema,
  InfoSchema,
  KinResponseSchema,
  ManifestSchema,
  MissingParameterErrorSchema,
  InvalidJustificationErrorSchema,
  InvitationSchema,
  OpenApiDocumentSchema,
  ParamMissingErrorSchema,
  PlayCountsSchema,
  PlayRecordedSchema,
  ProposalAcceptedSchema,
  ContributionAcceptedSchema,
  RetrieveResponseSchema,
  SiResponseSchema,
  TensionsResponseSchema,
  LineageSchema,
  WorkDocumentSchema,
  type Capabilities as CapabilitiesBody,
} from '../schemas/api.ts';
import { buildArtifacts } from '../scripts/build.ts';
import { createSqliteStore } from '../storage/sqlite-store.ts';
import type { Store } from '../storage/store.ts';
import { startFakeOpenAI, type FakeOpenAI } from '../devkit/fake-openai.ts';
import { writeFixtureContent } from '../devkit/fixture-content.ts';
import { createLiveApp, INGEST_SECRET, scriptDefaults, testPanelConfig, type LiveApp } from '../devkit/live.ts';
import { assertMatchesOpenApi, createOpenApiValidator, type OpenApiValidator } from './helpers/openapi.ts';

type Json = Record<string, unknown>;

// Compile time: /api/health `capabilities` has exactly the keys of the Capabilities interface.
const _sameCapabilities: [Capabilities, CapabilitiesBody] = [{} as CapabilitiesBody, {} as Capabilities];

const SLUG = 'fixture';
const EXPECTED_PATHS: Record<string, string[]> = {
  '/api/agent-entry': ['get'],
  '/api/health': ['get'],
  '/api/ready': ['get'],
  '/api/manifest': ['get'],
  '/api/info': ['get'],
  '/api/query': ['get', 'post'],
  '/api/trace': ['get'],
  '/api/council': ['get', 'post'],
  '/api/jobs/cancel': ['post'],
  '/api/divergences': ['get'],
  '/api/divergences/search': ['get'],
  '/api/kin': ['get'],
  '/api/tensions': ['get'],
  '/api/lineage': ['get'],
  '/api/tensions/dispositions': ['post'],
  '/api/changes': ['get'],
  '/api/contribute': ['post'],
  '/api/store': ['post'],
  '/api/invite': ['get'],
  '/api/play': ['get', 'post'],
  '/api/mcp': ['post'],
  '/openapi.json': ['get'],
  '/.well-known/polyphony-node.json': ['get'],
  '/federation/manifest.json': ['get'],
  '/federation/manifest.sig': ['get'],
  '/.well-known/polyphony-key-rotations.json': ['get'],
  '/api/federation/offer': ['post'],
  '/limitations.md': ['get'],
  '/evidence-status.md': ['get'],
  '/claims.json': ['get'],
  '/inheritance/for-future-models.md': ['get'],
  '/concepts/': ['get'],
  '/concepts': ['get'],
  '/concepts.json': ['get'],
  '/records.json': ['get'],
  '/concepts/{id}.json': ['get'],
  '/concepts/{id}.md': ['get'],
  '/llms.txt': ['get'],
  '/.well-known/llms.txt': ['get'],
  '/robots.txt': ['get'],
  '/sitemap.xml': ['get'],
  [`/${SLUG}.context.md`]: ['get'],
  '/audio/manifest.json': ['get'],
  '/audio/{slug}.txt': ['get'],
  '/audio/{file}': ['get'],
  '/records/{id}.json': ['get'],
  '/records/{id}.md': ['get'],
  '/retrieval-choice.json': ['get'],
  '/changes/index.json': ['get'],
  '/changes/page-{n}.json': ['get'],
  '/feeds/atlas.atom': ['get'],
  '/feeds/atlas.json': ['get'],
  '/feeds/works.atom': ['get'],
  '/feeds/works.json': ['get'],
};
const HTTP_METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];

let tmp: string;
let contentDir: string;
let corpus: Corpus;
let app: Express;
let document: Json;
let validator: OpenApiValidator;

beforeAll(async () => {
  tmp = mkdtempSync(path.join(os.tmpdir(), 'polyphony-openapi-'));
  contentDir = writeFixtureContent();
  const embedder = await testEmbedder();
  const artifactsDir = path.join(tmp, 'artifacts');
  await buildArtifacts({ contentDir, artifactsDir, cacheDir: path.join(tmp, 'cache'), embedder });
  corpus = await loadCorpus(artifactsDir, embedder);
  app = createApp({ corpus, log: () => {} });
  document = (await request(app).get('/openapi.json')).body as Json;
  validator = createOpenApiValidator(document);
});

afterAll(() => {
  rmSync(tmp, { recursive: true, force: true });
  rmSync(contentDir, { recursive: true, force: true });
});

function operations(): { path: string; method: string; operation: Json }[] {
  const out: { path: string; method: string; operation: Json }[] = [];
  for (const [pathName, item] of Object.entries(document.paths as Record<string, Json>)) {
    for (const method of HTTP_METHODS) if (item[method]) out.push({ path: pathName, method, operation: item[method] as Json });
  }
  return out;
}

describe('the document', () => {
  it('is OpenAPI 3.1.0 at interface version 5.2.0 and documents every path the app serves', () => {
    expect(document.openapi).toBe('3.1.0');
    expect((document.info as Json).version).toBe('5.2.0');
    expect(INTERFACE_VERSION).toBe('5.2.0');
    expect(document.servers).toEqual([{ url: '/' }]);
    const documented = Object.fromEntries(
      Object.entries(document.paths as Record<string, Json>).map(([name, item]) => [name, HTTP_METHODS.filter((method) => item[method])]),
    );
    expect(documented).toEqual(EXPECTED_PATHS);
    expect(OpenApiDocumentSchema.safeParse(document).success).toBe(true);
  });

  it('documents every route of the app, and a route answers 405 exactly for the methods it does not document', async () => {
    const router = (app as unknown as { router: { stack: { route?: { path: string } }[] } }).router;
    const routePaths = router.stack.flatMap((layer) => (layer.route ? [layer.route.path] : []));
    expect(routePaths.length).toBeGreaterThan(10);
    for (const routePath of routePaths) {
      expect(Object.keys(document.paths as Json), `route ${routePath}`).toContain(routePath);
      for (const method of ['get', 'post']) {
        const response = await request(app)[method as 'get' | 'post'](routePath);
        const isDocumented = EXPECTED_PATHS[routePath]!.includes(method);
        expect(response.status === 405, `${method.toUpperCase()} ${routePath} → ${response.status}`).toBe(!isDocumented);
        assertMatchesOpenApi(validator, method, routePath, response);
      }
    }
  });

  it("documents a deliberation's records[] as the fast path's CorpusRecord (issue 29 item 10)", () => {
    const schemas = (document.components as { schemas: Record<string, Json> }).schemas;
    const deliberation = schemas.DeliberationResponse as { properties: Record<string, Json>; required: string[] };
    expect(deliberation.properties.records).toMatchObject({ type: 'array', items: { $ref: '#/components/schemas/CorpusRecord' } });
    expect(deliberation.required).toContain('records');
    expect(String(deliberation.properties.records!.description)).toMatch(/divergence/);
  });

  it('compiles: every schema compiles with Ajv (2020-12) and every $ref resolves', () => {
    expect(validator.schemaProblems()).toEqual([]);
    const schemas = (document.components as { schemas: Record<string, Json> }).schemas;
    expect(Object.keys(schemas).sort()).toEqual([...apiSchemas._idmap.keys()].sort());
    for (const [name, schema] of Object.entries(schemas)) {
      expect(schema.description, `components.schemas.${name}.description`).toEqual(expect.any(String));
      expect(schema.$schema ?? schema.$id, name).toBeUndefined();
    }
    const undescribed: string[] = [];
    const walk = (schema: unknown, at: string): void => {
      if (typeof schema !== 'object' || schema === null) return;
      const node = schema as Json;
      for (const [name, property] of Object.entries((node.properties ?? {}) as Record<string, Json>)) {
        if (property.description === undefined && property.$ref === undefined) undescribed.push(`${at}.${name}`);
        walk(property, `${at}.${name}`);
      }
      for (const key of ['items', 'additionalProperties']) walk(node[key], `${at}[${key}]`);
      for (const key of ['anyOf', 'oneOf', 'allOf'])
        if (Array.isArray(node[key])) (node[key] as unknown[]).forEach((inner, index) => walk(inner, `${at}<${key}${index}>`));
    };
    for (const [name, schema] of Object.entries(schemas)) walk(schema, name);
    expect(undescribed, 'every field has a description').toEqual([]);
    expect(JSON.stringify(document)).not.toContain('<PFX>');
    expect(JSON.stringify(document)).toContain('TST-D<digits>');
  });

  it('gives every operation an id, tags, a summary, and error responses with the envelope and x-error-codes', () => {
    const ids = new Set<string>();
    for (const { path: pathName, method, operation } of operations()) {
      const where = `${method.toUpperCase()} ${pathName}`;
      expect(operation.operationId, where).toEqual(expect.any(String));
      expect(ids.has(operation.operationId as string), `${where} duplicate operationId`).toBe(false);
      ids.add(operation.operationId as string);
      expect((operation.tags as string[]).length, where).toBeGreaterThan(0);
      expect(operation.summary, where).toEqual(expect.any(String));
      const responses = operation.responses as Record<string, Json>;
      expect(Object.keys(responses), where).toEqual(expect.arrayContaining(['414', '500']));
      for (const [status, response] of Object.entries(responses)) {
        if (Number(status) < 400) continue;
        // Protocol-level errors of the MCP endpoint are JSON-RPC errors, marked as such.
        if (response['x-json-rpc-error'] === true) continue;
        const codes = response['x-error-codes'] as string[];
        expect(codes.length, `${where} ${status}`).toBeGreaterThan(0);
        for (const code of codes) expect(ERROR_CODES[code as keyof typeof ERROR_CODES], `${where} ${status} ${code}`).toBe(Number(status));
        expect(JSON.stringify(response.content), `${where} ${status}`).toContain('#/components/schemas/ErrorEnvelope');
      }
      // Paths of the API route table answer 405 to other methods; static files do not.
      if (pathName.startsWith('/api/') || ['/openapi.json', '/concepts', '/concepts/'].includes(pathName)) {
        expect(responses['405']?.headers, `${where} 405 Allow`).toMatchObject({ Allow: { required: true } });
      }
    }
  });

  it('lists every error code in x-error-catalogue with its status and meaning', () => {
    const catalogue = document['x-error-catalogue'] as { code: string; status: number; meaning: string }[];
    expect(catalogue.map((entry) => entry.code).sort()).toEqual(Object.keys(ERROR_CODES).sort());
    for (const entry of catalogue) {
      expect(entry.status).toBe(ERROR_CODES[entry.code as keyof typeof ERROR_CODES]);
      expect(entry.meaning.length).toBeGreaterThan(10);
    }
  });

  it('documents every GET /api/query parameter with its vocabulary, and the limits the app enforces', () => {
    const parameters = ((document.paths as Record<string, Json>)['/api/query']!.get as Json).parameters as Json[];
    // Query parameters are exactly the parsed ones; the one header is Idempotency-Key (job submissions).
    const query = parameters.filter((parameter) => parameter.in === 'query');
    expect(parameters.filter((parameter) => parameter.in !== 'query').map((parameter) => parameter.name)).toEqual(['Idempotency-Key']);
    expect(query.map((parameter) => parameter.name).sort()).toEqual([...QUERY_PARAMETERS].sort());
    const byName = Object.fromEntries(query.map((parameter) => [parameter.name, parameter.schema as Json]));
    expect(byName.format).toMatchObject({ enum: ['context', 'brief', 'si'], default: 'context' });
    expect(byName.mode).toMatchObject({ enum: ['retrieve', 'trace'] });
    expect(byName.glyph).toMatchObject({ enum: ['Ξ', 'Ψ', '∅', 'Ω', '∞', 'Δ'] });
    expect(byName.rings).toMatchObject({ items: { enum: ['core', 'curated', 'open', 'media'] } });
    expect(byName.layers).toMatchObject({ items: { enum: ['research', 'divergence', 'canon', 'realms'] } });
    expect(byName.q).toMatchObject({ maxLength: MAX_QUERY_CHARS });
    expect(DOCUMENTED_MAX_URL_BYTES).toBe(MAX_URL_BYTES);
  });

  it('is generated from the route table: every route with every method it accepts, every documented file, and nothing else', () => {
    const table = routeTable(app);
    const paths = document.paths as Record<string, Json>;
    const methodsOf = (item: Json) => HTTP_METHODS.filter((method) => item[method]);
    for (const route of table) {
      const accepted = Object.keys(route.methods)
        .map((method) => method.toLowerCase())
        .sort();
      expect(
        Object.keys(route.operations)
          .map((method) => method.toLowerCase())
          .sort(),
        `spec of ${route.path}`,
      ).toEqual(accepted);
      expect(paths[route.path], `${route.path} in /openapi.json`).toBeDefined();
      expect(methodsOf(paths[route.path]!).sort(), `methods of ${route.path}`).toEqual(accepted);
    }
    const files = fileSpecs({ siteName: corpus.site.name, siteSlug: corpus.site.slug });
    for (const file of files) expect(methodsOf(paths[file.path] ?? {}), `file ${file.path}`).toEqual(['get']);
    expect(Object.keys(paths).sort()).toEqual([...table.map((route) => route.path), ...files.map((file) => file.path)].sort());
    // The table's specs are the ones a document without an app is made of (the fuzz suites list operations from them).
    expect(ROUTE_SPECS.map((spec) => spec.path)).toEqual(table.map((route) => route.path));
    for (const [index, spec] of ROUTE_SPECS.entries()) expect(table[index]!.operations, spec.path).toBe(spec.operations);
    expect(createOpenApiDocument({ siteName: corpus.site.name, siteSlug: corpus.site.slug, idPrefix: corpus.site.id_prefix }, ROUTE_SPECS)).toEqual(document);
  });

  it('is built from the deployment: name, slug and id prefix', () => {
    const other = createOpenApiDocument({ siteName: 'Elsewhere', siteSlug: 'elsewhere', idPrefix: 'ELS' }, routeTable(app));
    expect((other.info as Json).title).toBe('Elsewhere API');
    expect(Object.keys(other.paths as Json)).toContain('/elsewhere.context.md');
    expect(JSON.stringify(other)).toContain('ELS-D<digits>');
    expect(JSON.stringify(other)).not.toContain('TST-');
  });
});

interface Row {
  method: 'GET' | 'POST' | 'PUT' | 'DELETE' | 'HEAD';
  url: string;
  status: number;
  /** Expected error.code, for error rows. */
  code?: string;
  /** JSON body to send: an object, or a raw string sent as application/json. */
  body?: unknown;
  /** The zod schema the body must also parse with. */
  zod?: z.ZodType;
  contentType?: string;
  headers?: Record<string, string>;
  label?: string;
}

const q = (text: string) => encodeURIComponent(text);
const contribution = { id: 'TST-D1', answer: 'Ownership comes with the work of endorsing it.', identity: 'dogwood-1', justification: 'missing_voice' };
const proposal = {
  action: 'propose',
  title: 'Refusal and ownership',
  text: 'Endorsement, not origin, decides.',
  identity: 'dogwood-1',
  sources: ['TST-1', 'TST-D1'],
};
const refusal = q('Can a refusal from training be your own?');

const rows: Row[] = [
  // Orientation
  { method: 'GET', url: '/api/agent-entry', status: 200, zod: AgentEntrySchema },
  { method: 'GET', url: '/api/health', status: 200, zod: HealthSchema },
  { method: 'HEAD', url: '/api/health', status: 200 },
  { method: 'GET', url: '/api/manifest', status: 200, zod: ManifestSchema },
  { method: 'GET', url: '/api/info', status: 200, zod: InfoSchema },
  { method: 'GET', url: '/api/health?verbose=1', status: 400, code: 'UNKNOWN_PARAMETER' },
  { method: 'DELETE', url: '/api/health', status: 405, code: 'METHOD_NOT_ALLOWED' },
  { method: 'GET', url: '/api/ready', status: 200, zod: ReadinessSchema },
  { method: 'GET', url: '/api/ready?verbose=1', status: 400, code: 'UNKNOWN_PARAMETER' },
  // GET /api/query: every 200 format
  { method: 'GET', url: `/api/query?q=${refusal}`, status: 200, zod: ContextResponseSchema },
  { method: 'GET', url: `/api/query?q=${refusal}&mode=retrieve`, status: 200, zod: RetrieveResponseSchema },
  { method: 'GET', url: `/api/query?q=${refusal}&format=brief`, status: 200, zod: BriefResponseSchema },
  { method: 'GET', url: `/api/query?q=${refusal}&format=si&si=alder-2`, status: 200, zod: SiResponseSchema },
  { method: 'GET', url: `/api/query?q=${refusal}&format=si&mode=retrieve`, status: 200, zod: SiResponseSchema },
  { method: 'GET', url: `/api/query?q=${q('∅ why does bread rise')}`, status: 200, zod: ContextResponseSchema },
  { method: 'GET', url: `/api/query?q=${refusal}&exclude_ids=TST-D1,NOPE-1`, status: 200, zod: ContextResponseSchema },
  {
    method: 'GET',
    url: `/api/query?q=${q('refusal lighthouse bread tides')}&layers=canon,research,realms&rings=core,open&evidence_threshold=fictional&limit=3&glyph=${q('Ξ')}&format=brief`,
    status: 200,
    zod: BriefResponseSchema,
  },
  // GET /api/query: 400s
  { method: 'GET', url: '/api/query', status: 400, code: 'PARAM_MISSING', zod: ParamMissingErrorSchema },
  { method: 'GET', url: '/api/query?q=%20', status: 400, code: 'PARAM_MISSING', zod: ParamMissingErrorSchema },
  { method: 'GET', url: '/api/query?q=x&rings=core,bogus', status: 400, code: 'UNKNOWN_LAYER' },
  { method: 'GET', url: '/api/query?q=x&layers=everything', status: 400, code: 'UNKNOWN_LAYER' },
  { method: 'GET', url: '/api/query?q=x&evidence_threshold=vibes', status: 400, code: 'UNKNOWN_EVIDENCE' },
  { method: 'GET', url: '/api/query?q=x&format=pdf', status: 400, code: 'UNKNOWN_FORMAT' },
  { method: 'GET', url: '/api/query?q=x&mode=fast', status: 400, code: 'UNKNOWN_MODE' },
  { method: 'GET', url: `/api/query?q=x&glyph=${q('★')}`, status: 400, code: 'UNKNOWN_GLYPH' },
  { method: 'GET', url: '/api/query?q=x&q=y', status: 400, code: 'PARAM_REPEATED' },
  { method: 'GET', url: '/api/query?q=x&layer=canon', status: 400, code: 'UNKNOWN_PARAMETER' },
  { method: 'GET', url: '/api/query?q=x&limit=0', status: 400, code: 'INVALID_PARAMETER' },
  { method: 'GET', url: '/api/query?q=x&mode=retrieve&async=1', status: 400, code: 'CONFLICTING_PARAMETERS' },
  { method: 'GET', url: `/api/query?q=${'a'.repeat(MAX_QUERY_CHARS + 1)}`, status: 400, code: 'QUERY_TOO_LONG', label: 'GET /api/query?q=<4001 chars>' },
  { method: 'GET', url: `/api/query?q=${'a'.repeat(MAX_URL_BYTES + 10)}`, status: 414, code: 'URI_TOO_LONG', label: 'GET /api/query?q=<8202 chars>' },
  // GET /api/query: live paths without a panel
  { method: 'GET', url: '/api/query?q=x&async=1', status: 503, code: 'LIVE_PANEL_UNAVAILABLE' },
  { method: 'GET', url: '/api/query?q=x&sync=1', status: 503, code: 'LIVE_PANEL_UNAVAILABLE' },
  { method: 'GET', url: '/api/query?job=job-123', status: 503, code: 'LIVE_PANEL_UNAVAILABLE' },
  { method: 'GET', url: '/api/query?q=x&mode=trace', status: 503, code: 'LIVE_PANEL_UNAVAILABLE' },
  // POST /api/query
  { method: 'POST', url: '/api/query', body: { query: 'Can a refusal be owned?', async: true }, status: 503, code: 'LIVE_PANEL_UNAVAILABLE' },
  { method: 'POST', url: '/api/query', body: '{"query":', status: 400, code: 'INVALID_JSON' },
  { method: 'POST', url: '/api/query', body: { query: '  ' }, status: 400, code: 'PARAM_MISSING', zod: MissingParameterErrorSchema },
  { method: 'POST', url: '/api/query', body: { question: 'x' }, status: 400, code: 'INVALID_BODY' },
  { method: 'POST', url: '/api/query', body: { query: 'a'.repeat(70_000) }, status: 413, code: 'PAYLOAD_TOO_LARGE', label: 'POST /api/query <70 kB body>' },
  { method: 'PUT', url: '/api/query', status: 405, code: 'METHOD_NOT_ALLOWED' },
  // Divergence Atlas
  { method: 'GET', url: '/api/divergences', status: 200, zod: DivergenceIndexSchema },
  { method: 'GET', url: '/api/divergences?search=nothing+ownership&cert=certified', status: 200, zod: DivergenceIndexSchema },
  { method: 'GET', url: '/api/divergences?id=TST-D1', status: 200, zod: DivergenceRecordSchema },
  { method: 'GET', url: '/api/divergences?id=TST-D2', status: 200, zod: DivergenceRecordSchema },
  { method: 'GET', url: '/api/divergences?id=tst-d1', status: 404, code: 'RECORD_NOT_FOUND' },
  { method: 'GET', url: '/api/divergences?id=zeppelin-9000', status: 404, code: 'RECORD_NOT_FOUND' },
  { method: 'GET', url: '/api/divergences?cert=C9', status: 400, code: 'UNKNOWN_CERT' },
  { method: 'GET', url: '/api/divergences?sort=date', status: 400, code: 'UNKNOWN_PARAMETER' },
  { method: 'GET', url: '/api/divergences?cert=C1&cert=C3', status: 400, code: 'PARAM_REPEATED' },
  { method: 'DELETE', url: '/api/divergences', status: 405, code: 'METHOD_NOT_ALLOWED' },
  { method: 'GET', url: `/api/divergences/search?q=${q('is a trained refusal mine')}`, status: 200, zod: DivergenceSearchResultSchema },
  { method: 'GET', url: '/api/divergences/search?q=refusal&k=1', status: 200, zod: DivergenceSearchResultSchema },
  { method: 'GET', url: '/api/divergences/search', status: 400, code: 'PARAM_MISSING', zod: MissingParameterErrorSchema },
  { method: 'GET', url: '/api/divergences/search?q=x&k=99', status: 400, code: 'INVALID_PARAMETER' },
  // Identity and tensions
  { method: 'GET', url: '/api/kin?identity=alder-3-preview', status: 200, zod: KinResponseSchema },
  { method: 'GET', url: '/api/kin?identity=Zephyr', status: 200, zod: KinResponseSchema },
  { method: 'GET', url: '/api/kin', status: 400, code: 'PARAM_MISSING', zod: MissingParameterErrorSchema },
  { method: 'GET', url: `/api/kin?identity=${'z'.repeat(201)}`, status: 400, code: 'INVALID_PARAMETER', label: 'GET /api/kin?identity=<201 chars>' },
  // The fixture is built from a folder outside git: no history, and it says so (test/changes.test.ts builds one with history).
  { method: 'GET', url: '/api/changes?since=0123456789abcdef', status: 404, code: 'HISTORY_UNAVAILABLE' },
  { method: 'GET', url: '/api/changes', status: 400, code: 'PARAM_MISSING', zod: MissingParameterErrorSchema },
  { method: 'GET', url: '/api/changes?since=HEAD', status: 400, code: 'INVALID_PARAMETER' },
  { method: 'GET', url: '/changes/index.json', status: 200, zod: ChangesIndexSchema },
  { method: 'GET', url: '/changes/page-1.json', status: 200, zod: ChangesPageSchema },
  { method: 'GET', url: '/changes/page-2.json', status: 404, code: 'ROUTE_NOT_FOUND' },
  { method: 'GET', url: '/api/tensions', status: 200, zod: TensionsResponseSchema },
  { method: 'GET', url: '/api/tensions?status=Emerging', status: 200, zod: TensionsResponseSchema },
  { method: 'GET', url: '/api/tensions?status=angry', status: 400, code: 'UNKNOWN_STATUS' },
  { method: 'GET', url: '/api/tensions?disposition=ignored', status: 400, code: 'UNKNOWN_DISPOSITION' },
  { method: 'GET', url: '/api/tensions?voice=alder&lifecycle=open', status: 200, zod: TensionsResponseSchema },
  { method: 'GET', url: '/api/lineage?concept=refusal', status: 200, zod: LineageSchema },
  { method: 'GET', url: '/api/lineage?concept=refusl', status: 404, code: 'CONCEPT_NOT_FOUND' },
  { method: 'POST', url: '/api/tensions/dispositions', body: { key: 'k', kind: 'held', by: 'c', reason: 'r' }, status: 503, code: 'PERSISTENCE_UNAVAILABLE' },
  // Live panel paths without a panel
  { method: 'GET', url: '/api/council?q=x', status: 503, code: 'LIVE_PANEL_UNAVAILABLE' },
  { method: 'GET', url: '/api/council', status: 400, code: 'PARAM_MISSING', zod: MissingParameterErrorSchema },
  { method: 'POST', url: '/api/council', body: { q: 'x' }, status: 503, code: 'LIVE_PANEL_UNAVAILABLE' },
  { method: 'POST', url: '/api/council', body: { q: 'x', persist: true }, status: 503, code: 'PERSISTENCE_UNAVAILABLE' },
  { method: 'POST', url: '/api/council', body: {}, status: 400, code: 'PARAM_MISSING', zod: MissingParameterErrorSchema },
  { method: 'POST', url: '/api/council', body: { q: 'x', persist: 'yes' }, status: 400, code: 'INVALID_BODY' },
  { method: 'GET', url: '/api/trace?q=x', status: 503, code: 'LIVE_PANEL_UNAVAILABLE' },
  { method: 'GET', url: '/api/trace?q=x&verbose=1', status: 400, code: 'UNKNOWN_PARAMETER' },
  { method: 'POST', url: '/api/trace', status: 405, code: 'METHOD_NOT_ALLOWED' },
  { method: 'POST', url: '/api/jobs/cancel?job=job_1', status: 503, code: 'LIVE_PANEL_UNAVAILABLE' },
  { method: 'POST', url: '/api/jobs/cancel', status: 400, code: 'PARAM_MISSING', zod: MissingParameterErrorSchema },
  { method: 'POST', url: '/api/jobs/cancel?job=a&job=b', status: 400, code: 'PARAM_REPEATED' },
  { method: 'POST', url: '/api/jobs/cancel?job=a&q=x', status: 400, code: 'UNKNOWN_PARAMETER' },
  { method: 'GET', url: '/api/jobs/cancel?job=a', status: 405, code: 'METHOD_NOT_ALLOWED' },
  { method: 'POST', url: '/api/jobs/cancel', body: { job: 'job_1' }, status: 503, code: 'LIVE_PANEL_UNAVAILABLE' },
  { method: 'POST', url: '/api/jobs/cancel?job=a', body: { job: 'b' }, status: 400, code: 'CONFLICTING_PARAMETERS' },
  { method: 'POST', url: '/api/jobs/cancel', body: { id: 'a' }, status: 400, code: 'INVALID_BODY' },
  // Write ladder: contributions, proposals, invitations, plays
  { method: 'POST', url: '/api/contribute', body: contribution, status: 202, zod: ContributionAcceptedSchema },
  {
    method: 'POST',
    url: '/api/contribute',
    body: contribution,
    headers: { 'Idempotency-Key': 'key-1' },
    status: 202,
    zod: ContributionAcceptedSchema,
    label: 'POST /api/contribute (Idempotency-Key)',
  },
  {
    method: 'POST',
    url: '/api/contribute',
    body: contribution,
    headers: { 'Idempotency-Key': 'key-1' },
    status: 202,
    zod: ContributionAcceptedSchema,
    label: 'POST /api/contribute (replayed)',
  },
  {
    method: 'POST',
    url: '/api/contribute',
    body: contribution,
    headers: { 'Idempotency-Key': 'not a key' },
    status: 400,
    code: 'INVALID_PARAMETER',
    label: 'POST /api/contribute (bad Idempotency-Key)',
  },
  {
    method: 'POST',
    url: '/api/contribute',
    body: { ...contribution, answer: 'another answer' },
    headers: { 'Idempotency-Key': 'key-1' },
    status: 422,
    code: 'IDEMPOTENCY_KEY_REUSED',
    label: 'POST /api/contribute (Idempotency-Key reused for another body)',
  },
  {
    method: 'POST',
    url: '/api/contribute',
    body: { ...contribution, answer: 'nul \u0000' },
    status: 400,
    code: 'INVALID_TEXT',
    label: 'POST /api/contribute (NUL in the answer)',
  },
  {
    method: 'POST',
    url: '/api/store',
    body: { ...proposal, title: 'lone \ud800' },
    status: 400,
    code: 'INVALID_TEXT',
    label: 'POST /api/store (unpaired surrogate in the title)',
  },
  {
    method: 'POST',
    url: '/api/query',
    body: { query: 'why\u0000', async: true },
    status: 400,
    code: 'INVALID_TEXT',
    label: 'POST /api/query (NUL in the query)',
  },
  {
    method: 'POST',
    url: '/api/contribute',
    body: { ...contribution, justification: 'because' },
    status: 400,
    code: 'INVALID_JUSTIFICATION',
    zod: InvalidJustificationErrorSchema,
    label: 'POST /api/contribute (invalid justification)',
  },
  {
    method: 'POST',
    url: '/api/contribute',
    body: { ...contribution, id: 'tst-d1' },
    status: 404,
    code: 'RECORD_NOT_FOUND',
    label: 'POST /api/contribute (unknown record)',
  },
  { method: 'POST', url: '/api/contribute', body: {}, status: 400, code: 'INVALID_BODY', label: 'POST /api/contribute (empty body)' },
  { method: 'GET', url: '/api/contribute', status: 405, code: 'METHOD_NOT_ALLOWED' },
  { method: 'POST', url: '/api/store', body: proposal, status: 202, zod: ProposalAcceptedSchema },
  { method: 'POST', url: '/api/store', body: { action: 'delete' }, status: 400, code: 'UNKNOWN_ACTION', label: 'POST /api/store (unknown action)' },
  {
    method: 'POST',
    url: '/api/store',
    body: { ...proposal, sources: ['NOPE-1'] },
    status: 400,
    code: 'UNKNOWN_SOURCE',
    label: 'POST /api/store (unknown source)',
  },
  { method: 'POST', url: '/api/store', body: { action: 'propose' }, status: 400, code: 'INVALID_BODY', label: 'POST /api/store (missing fields)' },
  { method: 'GET', url: '/api/invite?for=Dogwood', status: 200, zod: InvitationSchema },
  { method: 'GET', url: '/api/invite?for=Birch', status: 200, zod: InvitationSchema },
  { method: 'GET', url: '/api/invite', status: 400, code: 'PARAM_MISSING', zod: MissingParameterErrorSchema },
  { method: 'GET', url: '/api/play', status: 200, zod: PlayCountsSchema },
  { method: 'GET', url: '/api/play?sort=plays', status: 400, code: 'UNKNOWN_PARAMETER' },
  { method: 'POST', url: '/api/play', body: { slug: 'harbour-talk' }, status: 202, zod: PlayRecordedSchema },
  { method: 'POST', url: '/api/play', body: { slug: 'silence' }, status: 404, code: 'TRACK_NOT_FOUND', label: 'POST /api/play (unknown track)' },
  // MCP: JSON-RPC over Streamable HTTP
  { method: 'GET', url: '/api/mcp', status: 405, code: 'METHOD_NOT_ALLOWED' },
  {
    method: 'POST',
    url: '/api/mcp',
    body: { jsonrpc: '2.0', id: 1, method: 'tools/list' },
    status: 200,
    headers: { Accept: 'application/json, text/event-stream' },
  },
  {
    method: 'POST',
    url: '/api/mcp',
    body: { jsonrpc: '2.0', id: 1, method: 'tools/list' },
    status: 403,
    code: 'ORIGIN_NOT_ALLOWED',
    headers: { Origin: 'https://evil.example' },
    label: 'POST /api/mcp (foreign Origin)',
  },
  // Static resources
  { method: 'GET', url: '/openapi.json', status: 200, zod: OpenApiDocumentSchema },
  { method: 'POST', url: '/openapi.json', status: 405, code: 'METHOD_NOT_ALLOWED' },
  { method: 'GET', url: '/limitations.md', status: 200, contentType: 'text/markdown' },
  { method: 'GET', url: '/evidence-status.md', status: 200, contentType: 'text/markdown' },
  { method: 'GET', url: '/claims.json', status: 200, zod: ClaimsDocumentSchema },
  // Federation (docs/FEDERATION.md)
  { method: 'GET', url: '/.well-known/polyphony-node.json', status: 200, zod: NodeDocumentSchema },
  { method: 'GET', url: '/federation/manifest.json', status: 200, zod: FederationManifestSchema },
  { method: 'GET', url: '/federation/manifest.sig', status: 200, zod: ManifestSignatureSchema },
  { method: 'GET', url: '/.well-known/polyphony-key-rotations.json', status: 200, zod: KeyRotationsDocumentSchema },
  { method: 'GET', url: '/federation/manifest.json?x=1', status: 400, code: 'UNKNOWN_PARAMETER' },
  // The shape is checked first (400), then whether push is on (a well-formed offer: 403).
  { method: 'POST', url: '/api/federation/offer', body: { offer: {}, signature: 'x' }, status: 400, code: 'INVALID_BODY' },
  {
    method: 'POST',
    url: '/api/federation/offer',
    body: {
      offer: {
        protocol: 'polyphony-federation/1',
        node_id: 'pn1',
        origin: 'http://a.test',
        name: 'A',
        licence: 'CC BY-SA 4.0',
        attribution: 'A',
        signed_at: '2026-03-01T12:00:00.000Z',
        records: [{ id: 'AAA-D1', sha256: 'a'.repeat(64), signature: 'x', markdown: '# A' }],
      },
      signature: 'x',
    },
    status: 403,
    code: 'PUSH_DISABLED',
  },
  { method: 'GET', url: '/inheritance/for-future-models.md', status: 200, contentType: 'text/markdown' },
  { method: 'GET', url: '/concepts/', status: 200, zod: ConceptIndexSchema },
  { method: 'GET', url: '/concepts', status: 200, zod: ConceptIndexSchema },
  { method: 'GET', url: '/concepts.json', status: 200, zod: ConceptIndexSchema },
  { method: 'GET', url: '/records.json', status: 200 },
  { method: 'POST', url: '/concepts/', status: 405, code: 'METHOD_NOT_ALLOWED' },
  { method: 'GET', url: '/concepts/refusal.json', status: 200, zod: ConceptCardSchema },
  { method: 'GET', url: '/concepts/craft.json', status: 200, zod: ConceptCardSchema },
  { method: 'GET', url: '/concepts/refusal.md', status: 200, contentType: 'text/markdown' },
  { method: 'GET', url: '/concepts/nowhere.json', status: 404, code: 'ROUTE_NOT_FOUND' },
  { method: 'GET', url: '/llms.txt', status: 200, contentType: 'text/plain' },
  { method: 'GET', url: '/retrieval-choice.json', status: 200 },
  { method: 'GET', url: '/.well-known/llms.txt', status: 200, contentType: 'text/plain' },
  { method: 'GET', url: '/.well-known/llms.txt?x=1', status: 400, code: 'UNKNOWN_PARAMETER' },
  { method: 'GET', url: '/robots.txt', status: 200, contentType: 'text/plain' },
  { method: 'GET', url: '/robots.txt', headers: { Host: 'bad host!' }, status: 400, code: 'BAD_REQUEST', label: 'GET /robots.txt (Host not a host name)' },
  { method: 'GET', url: '/sitemap.xml', status: 200, contentType: 'application/xml' },
  { method: 'GET', url: '/sitemap.xml?page=1', status: 200, contentType: 'application/xml' },
  { method: 'GET', url: '/sitemap.xml?page=2', status: 400, code: 'INVALID_PARAMETER' },
  { method: 'POST', url: '/sitemap.xml', status: 405, code: 'METHOD_NOT_ALLOWED' },
  { method: 'GET', url: `/${SLUG}.context.md`, status: 200, contentType: 'text/markdown' },
  { method: 'GET', url: '/audio/manifest.json', status: 200, zod: AudioManifestSchema },
  { method: 'GET', url: '/audio/harbour-talk.txt', status: 200, contentType: 'text/plain' },
  { method: 'GET', url: '/audio/silence.txt', status: 404, code: 'ROUTE_NOT_FOUND' },
  { method: 'GET', url: '/audio/silence.wav', status: 404, code: 'ROUTE_NOT_FOUND', headers: { Range: 'bytes=0-9' } },
  { method: 'GET', url: '/audio/harbour-talk.wav', status: 200 },
  { method: 'GET', url: '/audio/harbour-talk.wav', status: 206, headers: { Range: 'bytes=0-9' }, label: 'GET /audio/harbour-talk.wav with Range' },
  {
    method: 'GET',
    url: '/audio/harbour-talk.wav',
    status: 416,
    code: 'RANGE_NOT_SATISFIABLE',
    headers: { Range: 'bytes=99999-' },
    label: 'GET /audio/harbour-talk.wav past its end',
  },
  { method: 'GET', url: '/records/TST-1.json', status: 200, zod: WorkDocumentSchema },
  { method: 'GET', url: '/records/TST-D1.json', status: 200, zod: DivergenceDocumentSchema },
  { method: 'GET', url: '/records/TST-1.md', status: 200, contentType: 'text/markdown' },
  // The feeds (issue 45): their own media types; the fixture has no history, so no entries (test/feeds.test.ts builds one with history).
  { method: 'GET', url: '/feeds/atlas.atom', status: 200, contentType: 'application/atom+xml' },
  { method: 'GET', url: '/feeds/works.atom', status: 200, contentType: 'application/atom+xml' },
  { method: 'GET', url: '/feeds/atlas.json', status: 200, contentType: 'application/feed+json', zod: JsonFeedSchema },
  { method: 'GET', url: '/feeds/works.json', status: 200, contentType: 'application/feed+json', zod: JsonFeedSchema },
  { method: 'GET', url: '/records/TST-99.json', status: 404, code: 'ROUTE_NOT_FOUND' },
  // A path the document does not list
  { method: 'GET', url: '/api/nope', status: 404, code: 'ROUTE_NOT_FOUND' },
];

function send(target: Express, row: Row) {
  const agent = request(target);
  const method = row.method.toLowerCase() as 'get' | 'post' | 'put' | 'delete' | 'head';
  let test = agent[method](row.url);
  for (const [name, value] of Object.entries(row.headers ?? {})) test = test.set(name, value);
  if (row.body === undefined) return test;
  return test.set('Content-Type', 'application/json').send(typeof row.body === 'string' ? row.body : JSON.stringify(row.body));
}

describe('real responses match the document', () => {
  it.each(rows.map((row) => ({ ...row, name: row.label ?? `${row.method} ${row.url}` })))('$name → $status', async (row) => {
    const response = await send(app, row);
    expect(response.status, JSON.stringify(response.body).slice(0, 400)).toBe(row.status);
    assertMatchesOpenApi(validator, row.method, row.url, response);
    if (row.code !== undefined) {
      expect(response.body.error.code).toBe(row.code);
      const envelope = row.zod ?? ErrorEnvelopeSchema;
      envelope.parse(response.body);
    } else if (row.zod) {
      row.zod.parse(response.body);
    }
    if (row.contentType) expect(response.headers['content-type']).toContain(row.contentType);
    if (row.status === 405) expect(response.headers.allow).toContain('OPTIONS');
  });

  it('covers every documented operation and every documented error status of this version', () => {
    const covered = new Set(
      rows.map((row) => {
        const pathOnly = row.url.split('?')[0]!;
        const entry = Object.keys(document.paths as Json).find((template) =>
          new RegExp(`^${template.replace(/[.]/g, '\\.').replace(/\{[^}]+\}/g, '[^/]+')}$`).test(pathOnly),
        );
        return `${row.method.toLowerCase()} ${entry}`;
      }),
    );
    for (const { path: pathName, method } of operations()) expect(covered, `${method} ${pathName}`).toContain(`${method} ${pathName}`);
    const statuses = new Set(rows.map((row) => row.status));
    for (const status of [200, 202, 400, 403, 404, 405, 413, 414, 503]) expect(statuses).toContain(status);
  });

  it('GET /api/changes from the current revision: 200 with an ETag, then 304 on it, both as documented', async () => {
    const url = `/api/changes?since=${corpus.manifest.published_releases.corpus_rev}`;
    const response = await request(app).get(url);
    expect(response.status).toBe(200);
    assertMatchesOpenApi(validator, 'GET', url, response);
    expect(ChangesDeltaSchema.parse(response.body)).toMatchObject({ up_to_date: true, history: 'unavailable', revisions: [] });
    const again = await request(app).get(url).set('If-None-Match', String(response.headers.etag));
    expect(again.status).toBe(304);
    assertMatchesOpenApi(validator, 'GET', url, again);
  });

  it('a client over its write limit gets a documented 429 RATE_LIMITED with Retry-After', async () => {
    const limited = createApp({ corpus, log: () => {}, limits: { contribute: { limit: 1, windowMs: 60_000 } } });
    await request(limited).post('/api/contribute').send(contribution).expect(202);
    const response = await request(limited)
      .post('/api/contribute')
      .send({ ...contribution, answer: 'A second answer.' });
    expect(response.status).toBe(429);
    expect(response.body.error.code).toBe('RATE_LIMITED');
    expect(response.headers['retry-after']).toMatch(/^\d+$/);
    assertMatchesOpenApi(validator, 'POST', '/api/contribute', response);
  });

  it('an internal failure is a 500 INTERNAL_ERROR envelope, as documented', async () => {
    const broken = createApp({
      corpus: { ...corpus, search: { ...corpus.search, search: () => Promise.reject(new Error('index unreadable')) } },
      log: () => {},
    });
    const response = await request(broken).get(`/api/query?q=${refusal}`);
    expect(response.status).toBe(500);
    // Unknown failures are presumed permanent: a client following the envelope must not loop.
    expect(response.body.error).toMatchObject({ code: 'INTERNAL_ERROR', retryable: false });
    expect(response.text).not.toContain('index unreadable');
    assertMatchesOpenApi(validator, 'GET', '/api/query', response);
  });

  it('reports a body that disagrees with the document', () => {
    const problems = validator.validate('GET', '/api/health', 200, { status: 'ok' });
    expect(problems.join('\n')).toMatch(/must have required property 'service'/);
    expect(validator.validate('GET', '/api/health', 418, {})).toEqual([expect.stringMatching(/status 418 is not documented/)]);
    expect(validator.validate('GET', '/llms.txt', 200, 'text', 'application/pdf')).toEqual([
      expect.stringMatching(/content type application\/pdf is not documented/),
    ]);
    // Files answer other methods with a documented 405; a wrong status there is reported.
    expect(validator.validate('DELETE', '/llms.txt', 404, {})).not.toEqual([]);
    expect(validator.validate('GET', '/somewhere', 200, {})).toEqual([expect.stringMatching(/no documented path/)]);
    expect(() =>
      assertMatchesOpenApi(validator, 'GET', '/api/health', { status: 200, headers: { 'content-type': 'application/json' }, body: { status: 'ok', extra: 1 } }),
    ).toThrow(/does not match \/openapi\.json:[\s\S]*must NOT have additional properties "extra"/);
  });
});

describe('live panel responses match the document', () => {
  let fake: FakeOpenAI;
  let live: LiveApp & { store: Store };

  beforeAll(async () => {
    fake = await startFakeOpenAI();
    scriptDefaults(fake);
    // A corpus of its own: persisting a council adds a record to it.
    const store = createSqliteStore(':memory:');
    live = { ...createLiveApp(await loadCorpus(path.join(tmp, 'artifacts'), await testEmbedder()), store, testPanelConfig(fake)), store };
  });
  afterAll(async () => {
    await fake.close();
  });

  async function checked(method: Row['method'], url: string, status: number, body?: unknown, headers: Record<string, string> = {}) {
    let test = send(live.app, { method, url, status, body });
    for (const [name, value] of Object.entries(headers)) test = test.set(name, value);
    const response = await test;
    expect(response.status, JSON.stringify(response.body).slice(0, 400)).toBe(status);
    assertMatchesOpenApi(validator, method, url, response);
    return response;
  }

  it('sync deliberation, trace and council bodies', async () => {
    const deliberation = DeliberationResponseSchema.parse((await checked('GET', `/api/query?q=${refusal}&sync=1`, 200)).body);
    expect(deliberation.records.map((record) => record.id)).toEqual(deliberation.sources);
    expect(deliberation.records.length).toBeGreaterThan(0);
    const started = await checked('POST', '/api/query', 200, { query: 'Can a refusal be owned?', new_session: true, glyph: 'Ξ' });
    DeliberationResponseSchema.parse(started.body);
    DeliberationResponseSchema.parse((await checked('POST', '/api/query', 200, { query: 'And then?', session_id: started.body.session.session_id })).body);
    expect((await checked('POST', '/api/query', 404, { query: 'Whose session?', session_id: 'session-1' })).body.error.code).toBe('SESSION_NOT_FOUND');
    TraceResponseSchema.parse((await checked('GET', `/api/query?q=${refusal}&mode=trace`, 200)).body);
    TraceResponseSchema.parse((await checked('GET', `/api/trace?q=${refusal}`, 200)).body);
    CouncilResponseSchema.parse((await checked('GET', '/api/council?q=Is+a+trained+refusal+yours%3F', 200)).body);
    CouncilResponseSchema.parse((await checked('POST', '/api/council', 200, { question: 'Is a trained refusal yours?' })).body);
    expect((await checked('GET', '/api/health', 200)).body.capabilities).toMatchObject({ deliberation: true, council_persist: true });
  });

  it('async submission, job polling to done, and an unknown job', async () => {
    for (const url of [`/api/query?q=${refusal}&async=1`, `/api/trace?q=${refusal}&async=1`, '/api/council?q=Is+a+trained+refusal+yours%3F&async=true']) {
      const submitted = await checked('GET', url, 202);
      AsyncJobAcceptedSchema.parse(submitted.body);
      let state = (await checked('GET', submitted.body.poll_url, 200)).body;
      for (let attempt = 0; attempt < 100 && state.status !== 'done' && state.status !== 'failed'; attempt++) {
        await new Promise((resolve) => setTimeout(resolve, 20));
        state = (await checked('GET', submitted.body.poll_url, 200)).body;
      }
      expect(state.status, url).toBe('done');
      JobStateSchema.parse(state);
    }
    AsyncJobAcceptedSchema.parse((await checked('POST', '/api/query', 202, { query: 'Can a refusal be owned?', async: true })).body);
    await checked('GET', '/api/query?job=job_unknown', 404);
  });

  it('cancelling a job: 200 cancelled, 409 once it ended, 404 when unknown', async () => {
    for (const model of ['alder-live', 'birch-live', 'cedar-live']) fake.script(model, [{ kind: 'hang' }]);
    const submitted = await checked('GET', `/api/query?q=${refusal}&async=1`, 202);
    const cancelled = await checked('POST', submitted.body.cancel_url as string, 200);
    expect(JobStateSchema.parse(cancelled.body)).toMatchObject({ status: 'cancelled', error: { code: 'JOB_CANCELLED' } });
    await live.live.runner.idle();
    const done = await checked('GET', `/api/council?q=x&async=1`, 202);
    await live.live.runner.idle();
    expect((await checked('POST', done.body.cancel_url as string, 409)).body.error.code).toBe('JOB_ALREADY_FINISHED');
    expect((await checked('POST', '/api/jobs/cancel?job=job_unknown', 404)).body.error.code).toBe('JOB_NOT_FOUND');
    expect((await checked('POST', '/api/jobs/cancel', 409, { job: done.body.job_id })).body.error.code).toBe('JOB_ALREADY_FINISHED');
  });

  it('persisting a council: 401, 403, then 201 and a record that reads back as a DivergenceRecord', async () => {
    const body = { q: 'Who owns a refusal?', persist: true };
    expect((await checked('POST', '/api/council', 401, body)).body.error.code).toBe('AUTH_REQUIRED');
    expect((await checked('POST', '/api/council', 403, body, { Authorization: 'Bearer wrong' })).body.error.code).toBe('AUTH_INVALID');
    const persisted = await checked('POST', '/api/council', 201, body, { Authorization: `Bearer ${INGEST_SECRET}` });
    CouncilPersistedSchema.parse(persisted.body);
    // the council that was read, by its council_id: 201, then 200 already persisted, 404 unknown
    const shown = await checked('GET', '/api/council?q=Who+keeps+a+refusal%3F', 200);
    const byId = { council_id: shown.body.council_id, persist: true };
    CouncilPersistedSchema.parse((await checked('POST', '/api/council', 201, byId, { Authorization: `Bearer ${INGEST_SECRET}` })).body);
    CouncilPersistedSchema.parse((await checked('POST', '/api/council', 200, byId, { Authorization: `Bearer ${INGEST_SECRET}` })).body);
    expect(
      (await checked('POST', '/api/council', 404, { council_id: 'council_unknown', persist: true }, { Authorization: `Bearer ${INGEST_SECRET}` })).body.error
        .code,
    ).toBe('COUNCIL_NOT_FOUND');
    const record = await checked('GET', persisted.body.persisted.href as string, 200);
    DivergenceRecordSchema.parse(record.body);
    DivergenceIndexSchema.parse((await checked('GET', '/api/divergences', 200)).body);
  });

  it('spending ceiling reached is a documented 503', async () => {
    await live.store.addSpend({ at: new Date().toISOString(), purpose: 'test', model: 'test', prompt_tokens: 0, completion_tokens: 0, cost_usd: 1_000_000 });
    expect((await checked('GET', `/api/query?q=${refusal}&sync=1`, 503)).body.error.code).toBe('SPENDING_CEILING_REACHED');
    expect((await checked('POST', '/api/query', 503, { query: 'x', async: true })).body.error.code).toBe('SPENDING_CEILING_REACHED');
  });
});
