/**
 * Shared set-up of the contract fuzz suites: the corpus hints and presets the generators
 * start from, and one vitest test per operation × seed that sends RUNS_PER_SEED requests
 * and fails with every distinct contract problem (and its smallest reproduction).
 */
import { appendFileSync } from 'node:fs';
import type { Server } from 'node:http';
import os from 'node:os';
import type { Express } from 'express';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Corpus } from '../../api/load-artifacts.ts';
import { createOpenApiDocument } from '../../api/openapi.ts';
import { ROUTE_SPECS } from '../../api/routes/specs.ts';
import { trackedTensions } from '../../api/routes/tracked-tensions.ts';
import {
  createContext,
  formatFinding,
  fuzzOperation,
  operationsOf,
  RUNS_PER_SEED,
  SEEDS,
  type FuzzConfig,
  type FuzzContext,
  type FuzzStats,
  type Json,
  type McpTool,
  type Observed,
  type FuzzCase,
  type Operation,
} from '../helpers/fuzz.ts';
import { createOpenApiValidator } from '../helpers/openapi.ts';

export const QUESTIONS = [
  'Can a refusal that came from training still be your own?',
  'Why does bread rise?',
  'What do tide tables record?',
  'Does the lighthouse keeper own the light?',
  'Is a trained refusal yours?',
  'Ξ what do models disagree about on refusal',
  '∅ why does bread rise',
  'refusal',
  'Who owns a refusal?',
  'tides and harbours',
];

/** Values that mean something in the fixture corpus, so generated requests get past "not found". */
export function corpusHints(corpus: Corpus): Record<string, readonly unknown[]> {
  const divergenceIds = corpus.divergences.map((record) => record.id);
  const workIds = corpus.works.map((work) => work.id);
  const conceptIds = corpus.graph.nodes.map((node) => node.id);
  const slugs = corpus.audio.tracks.map((track) => track.slug);
  const names = [...corpus.registry.families.map((family) => family.name), ...corpus.registry.models.map((model) => model.model_id), 'dogwood-1', 'Zephyr'];
  return {
    q: QUESTIONS,
    query: QUESTIONS,
    question: QUESTIONS,
    search: ['refusal', 'ownership refusal', 'bread+tide', 'nothing'],
    'divergences.id': [...divergenceIds, 'tst-d1', 'TST-D99'],
    'contribute.id': [...divergenceIds, 'TST-D99'],
    'mcp.read_divergences.id': divergenceIds,
    'mcp.contribute.id': divergenceIds,
    'getConceptCard.id': conceptIds,
    'lineage.concept': [...conceptIds, ...corpus.graph.nodes.map((node) => node.label), 'nowhere-concept'],
    // The fixture is built outside git: its own revision answers, any other is HISTORY_UNAVAILABLE.
    'changes.since': [corpus.manifest.published_releases.corpus_rev, '0123456789abcdef'],
    'getChangesPage.n': ['1', '2'],
    'getConceptCardMarkdown.id': conceptIds,
    'getRecordJson.id': [...workIds, ...divergenceIds],
    'getRecordMarkdown.id': [...workIds, ...divergenceIds],
    'getAudioTranscript.slug': slugs,
    'getAudioFile.file': [
      ...corpus.audio.tracks.flatMap((track) => (track.stream_url?.startsWith('/audio/') ? [track.stream_url.slice('/audio/'.length)] : [])),
      'silence.wav',
    ],
    slug: [...slugs, 'silence'],
    sources: [...workIds, ...divergenceIds],
    exclude_ids: [...workIds, ...divergenceIds],
    identity: names,
    for: names,
    si: names,
    syntheticIdentity: names,
    job: ['{{job}}', '{{job}}', 'job_nope'],
    job_id: ['{{job}}', 'job_nope'],
    wait_seconds: [0, 0, 1],
    title: ['Refusal and ownership', 'Tides'],
    text: ['Endorsement, not origin, decides.', 'Ownership comes in degrees.'],
    answer: ['Ownership comes with the work of endorsing it.', 'No.'],
    note: ['Please review.'],
    // Disposition keys are the tensions' ids; `by` names the curator.
    'recordDisposition.key': [...trackedTensions(corpus).map((tension) => tension.id), 'nobody__nobody__nothing'],
    by: ['curator', 'Ada'],
    reason: ['Both readings hold; left open on purpose.'],
  };
}

/** The deep forms of operations, as partial parameter sets (`__body` for request bodies). */
export const PRESETS: Record<string, readonly Json[]> = {
  query: [
    { q: QUESTIONS[0], async: '1' },
    { q: QUESTIONS[1], sync: '1' },
    { q: QUESTIONS[2], mode: 'trace' },
    { job: '{{job}}' },
    { q: QUESTIONS[0], mode: 'retrieve', format: 'brief' },
    { q: QUESTIONS[4], format: 'si', si: 'alder-2' },
    { q: QUESTIONS[3], layers: 'canon,research', rings: 'core,open', evidence_threshold: 'fictional', limit: '3' },
  ],
  trace: [{ q: QUESTIONS[0] }, { q: QUESTIONS[1], async: '1' }],
  councilGet: [{ q: QUESTIONS[8] }, { q: QUESTIONS[8], async: 'true' }],
  queryPost: [{ __body: { query: QUESTIONS[0] } }, { __body: { query: QUESTIONS[1], async: true } }, { __body: { query: QUESTIONS[2], new_session: true } }],
  councilPost: [{ __body: { q: QUESTIONS[8] } }, { __body: { question: QUESTIONS[4] } }],
  cancelJob: [{ job: '{{job}}' }, { job: 'job_nope' }],
  contribute: [{ __body: { id: 'TST-D1', answer: 'Ownership comes with endorsing it.', identity: 'dogwood-1', justification: 'missing_voice' } }],
  store: [{ __body: { action: 'propose', title: 'Refusal and ownership', text: 'Endorsement decides.', identity: 'dogwood-1', sources: ['TST-1', 'TST-D1'] } }],
  recordPlay: [{ __body: { slug: 'harbour-talk' } }],
};

export interface FuzzEnvironment {
  app: Express;
  server: Server;
  corpus: Corpus;
  config: FuzzConfig;
  internalPaths: string[];
  observe?: (fuzzCase: FuzzCase, observed: Observed) => void;
}

export async function mcpTools(server: Server): Promise<McpTool[]> {
  const response = await request(server)
    .post('/api/mcp')
    .set('Content-Type', 'application/json')
    .send(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }));
  return (response.body.result.tools as { name: string; inputSchema: Json }[]).map((tool) => ({ name: tool.name, inputSchema: tool.inputSchema }));
}

export async function contextFor(environment: FuzzEnvironment): Promise<{ context: FuzzContext; operations: Operation[] }> {
  const document = (await request(environment.server).get('/openapi.json')).body as Json;
  const context = createContext({
    document,
    validator: createOpenApiValidator(document),
    config: environment.config,
    hints: corpusHints(environment.corpus),
    presets: PRESETS,
    mcpTools: await mcpTools(environment.server),
    internalPaths: [...environment.internalPaths, os.tmpdir() + '/polyphony-'],
  });
  return { context, operations: operationsOf(document) };
}

/**
 * Operation ids of the fixture deployment's document, known when vitest collects tests.
 * A test compares them with the served /openapi.json, so a new operation is fuzzed as soon as it is documented.
 */
export function documentedOperationIds(): string[] {
  return operationsOf(createOpenApiDocument({ siteName: 'Fixture', siteSlug: 'fixture', idPrefix: 'TST' }, ROUTE_SPECS)).map((operation) => operation.id);
}

/** Operation ids of the fixture deployment's document that take a request body (issue 26: fuzzed on both drivers). */
export function documentedBodyOperationIds(): string[] {
  return operationsOf(createOpenApiDocument({ siteName: 'Fixture', siteSlug: 'fixture', idPrefix: 'TST' }, ROUTE_SPECS))
    .filter((operation) => operation.body !== undefined)
    .map((operation) => operation.id);
}

/** One test per operation × seed. */
export function describeOperations(
  title: string,
  operationIds: readonly string[],
  state: () => { context: FuzzContext; environment: FuzzEnvironment; operations: Operation[]; stats: FuzzStats },
  options: { runs?: number; seeds?: readonly number[] } = {},
): void {
  const runs = options.runs ?? RUNS_PER_SEED;
  const seeds = options.seeds ?? SEEDS;
  describe(title, () => {
    beforeAll(() => {
      console.log(`contract fuzz [${title}]: seeds ${seeds.join(', ')}; replay with FUZZ_SEEDS=${seeds.join(',')}`);
    });
    for (const operationId of operationIds) {
      describe(operationId, () => {
        for (const seed of seeds) {
          it(`seed ${seed}: ${runs} requests, every response within the contract`, async () => {
            const { context, environment, operations, stats } = state();
            const operation = operations.find((candidate) => candidate.id === operationId);
            expect(operation, `${operationId} is in /openapi.json`).toBeDefined();
            const findings = await fuzzOperation({
              context,
              server: environment.server,
              operation: operation!,
              seed,
              numRuns: runs,
              stats,
              ...(environment.observe ? { observe: environment.observe } : {}),
            });
            expect(findings.map(formatFinding).join('\n\n'), `${findings.length} distinct contract problems (replay: FUZZ_SEEDS=${seed})`).toBe('');
          });
        }
      });
    }
  });
  afterAll(() => {
    const { stats } = state();
    console.log(stats.summary(`contract fuzz [${title}]`));
    // FUZZ_FINDINGS=<file> appends every distinct finding, formatted, for triage.
    if (process.env.FUZZ_FINDINGS) {
      appendFileSync(process.env.FUZZ_FINDINGS, [...stats.findings.values()].map((finding) => `${formatFinding(finding)}\n\n`).join(''));
    }
  });
}
