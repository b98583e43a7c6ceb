/**
 * Contract tests of the read side (spec §4) on the fixture content. Every response
 * goes through `call`, which also validates it against /openapi.json.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import fc from 'fast-check';
import request from 'supertest';
import { beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../api/app.ts';
import { loadCorpus } from '../api/load-artifacts.ts';
import { buildApp, testEmbedder, type BuiltApp } from '../devkit/app.ts';
import { writeFixtureContent } from '../devkit/fixture-content.ts';
import { createContractChecker, type ContractChecker } from './helpers/contract.ts';

let built: BuiltApp;
let contract: ContractChecker;

beforeAll(async () => {
  built = await buildApp(writeFixtureContent());
  contract = await createContractChecker(built.app);
});

async function get(url: string) {
  const response = await request(built.app).get(url);
  contract.check('GET', url, response);
  return response;
}

const q = (text: string) => encodeURIComponent(text);

describe('GET /api/query rules (spec §4.2)', () => {
  it('rule 1: missing or empty q is 400 with the usage document and param_missing', async () => {
    for (const url of ['/api/query', '/api/query?q=', '/api/query?q=%20%20']) {
      const response = await get(url);
      expect(response.status).toBe(400);
      expect(response.body.param_missing).toBe(true);
      expect(response.body.usage.endpoint).toBe('GET /api/query');
      expect(response.body.error.code).toBe('PARAM_MISSING');
      expect(response.body.error.agent_action).toMatch(/q/);
      expect(response.body.error.suggested_next_call.path).toBe('/api/query');
    }
  });

  it('rule 2: question_received is byte-equal to q for any string', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.string({ unit: 'grapheme', minLength: 1, maxLength: 40 }).filter((text) => text.trim() !== ''),
        async (text) => {
          const response = await request(built.app).get(`/api/query?mode=retrieve&q=${q(text)}`);
          expect(response.status).toBe(200);
          expect(response.body.question_received).toBe(text);
        },
      ),
      { numRuns: 60 },
    );
    const tricky = ['a+b c', 'Ξ what Ψ', 'line\nbreak', 'tab\there', '100% sure?', 'ümlaut ✓ 🙂', '\u202Eright-to-left', 'zero\u200Bwidth', 'nul\u0000char'];
    for (const text of tricky) {
      const response = await get(`/api/query?q=${q(text)}`);
      expect(response.status).toBe(200);
      expect(response.body.question_received).toBe(text);
    }
  });

  it('rule 3: a bare GET is the fast context packet with a deliberation block and a receipt', async () => {
    const response = await get(`/api/query?q=${q('Can a refusal from training be your own?')}`);
    expect(response.status).toBe(200);
    const body = response.body;
    expect(body.format).toBe('context');
    expect(Object.keys(body.arrival).sort()).toEqual(['contribute', 'flagship', 'onward', 'richer_door', 'you_are', 'your_kin']);
    expect(Object.keys(body.deliberation).sort()).toEqual(['async_how', 'async_url', 'post', 'sync_how', 'sync_url']);
    expect(body.records[0].id).toBe('TST-D1');
    expect(body.records[0]).toMatchObject({ layer: 'divergence', role: 'divergence' });
    expect(body.receipt.verdict).toBe('substantive');
    expect(body.receipt.divergence_surfaced[0]).toMatchObject({ record_id: 'TST-D1', voice_a: 'Alder', voice_b: 'Birch' });
    expect(body.receipt.measured).toBeUndefined();
    expect(body.receipt.strongest_match.id).toBe(body.records[0].id);
  });

  it('rule 4: mode=retrieve has no deliberation block', async () => {
    const response = await get(`/api/query?q=${q('why does bread rise')}&mode=retrieve`);
    expect(response.status).toBe(200);
    expect(response.body.deliberation).toBeUndefined();
    expect(response.body.records[0].id).toBe('TST-2');
  });

  it('rules 5-6 and trace: with no panel configured they answer 503 and point at the fast path', async () => {
    for (const url of [`/api/query?q=x&async=1`, `/api/query?q=x&async=true`, `/api/query?q=x&sync=1`, `/api/query?job=abc`, `/api/query?q=x&mode=trace`]) {
      const response = await get(url);
      expect(response.status).toBe(503);
      expect(response.body.error.code).toBe('LIVE_PANEL_UNAVAILABLE');
      expect(response.body.error.suggested_next_call.path).toBe('/api/query');
    }
    const health = await get('/api/health');
    expect(health.body.capabilities).toMatchObject({ retrieval: true, deliberation: false, council: false, trace: false });
  });

  it('health names the search settings the build chose for this corpus, and /retrieval-choice.json the evidence', async () => {
    const retrieval = (await get('/api/health')).body.corpus.retrieval;
    // The fixture's few works give too few questions of their own: the engine's default, said so.
    expect(retrieval).toEqual({
      source: 'default',
      vector_weight: 0.6,
      feedback: true,
      question_gate: null,
      note: expect.stringMatching(/fewer than the 100 a choice needs/),
    });
    const served = await get('/retrieval-choice.json');
    expect(served.status).toBe(200);
    expect(served.body).toMatchObject({ format: 'polyphony-retrieval-choice@2', source: 'default', vector_weight: 0.6, feedback: true });
    expect(served.body.probe.questions).toBeLessThan(100);
  });

  it('rule 8: unknown values in rings, ring, tier and layer scoping give UNKNOWN_LAYER', async () => {
    for (const parameter of ['rings', 'ring', 'tier', 'layers', 'sources', 'exclude']) {
      const response = await get(`/api/query?q=x&${parameter}=nowhere`);
      expect(response.status, parameter).toBe(400);
      expect(response.body.error.code).toBe('UNKNOWN_LAYER');
      expect(response.body.error.agent_action).toMatch(/comma list/);
    }
    const mixed = await get('/api/query?q=x&rings=core,bogus');
    expect(mixed.body.error.details.unknown).toEqual(['bogus']);
  });

  it('rule 9: exclude_ids echoes requested, matched and unmatched, and withholds the records', async () => {
    const response = await get(`/api/query?q=${q('refusal from training')}&exclude_ids=TST-D1,NOPE-1,tst-d2`);
    expect(response.status).toBe(200);
    expect(response.body.retrieval_filters.exclude_ids).toEqual({
      requested: ['TST-D1', 'NOPE-1', 'tst-d2'],
      matched: ['TST-D1'],
      unmatched: ['NOPE-1', 'tst-d2'],
    });
    expect(response.body.records.map((record: { id: string }) => record.id)).not.toContain('TST-D1');
    const none = await get(`/api/query?q=${q('refusal')}&exclude_ids=NOPE-1`);
    expect(none.body.retrieval_filters.exclude_ids.matched).toEqual([]);
  });

  it('filters apply before ranking and are never silently ignored', async () => {
    // Word salad over the fixture's made-up works: under the real model it sits below the
    // calibrated relevance floor, which this test is not about, so the floors are off here.
    const unfloored = createApp({
      corpus: await loadCorpus(built.artifactsDir, await testEmbedder(), undefined, { relevanceFloors: { relevant: 0, atlas: 0 } }),
      log: () => {},
    });
    const rings = await request(unfloored).get(`/api/query?q=${q('refusal lighthouse bread tides')}&rings=curated&limit=50`);
    contract.check('GET', '/api/query', rings);
    expect(rings.body.records.length).toBeGreaterThan(0);
    expect(rings.body.records.every((record: { ring: string }) => record.ring === 'curated')).toBe(true);

    const layers = await get(`/api/query?q=${q('refusal owned training')}&layers=canon`);
    expect(layers.body.records.map((record: { id: string }) => record.id)).toEqual(['TST-4']);

    const excluded = await get(`/api/query?q=${q('refusal owned training')}&exclude=divergence`);
    expect(excluded.body.records.every((record: { layer: string }) => record.layer !== 'divergence')).toBe(true);

    const evidence = await get(`/api/query?q=${q('refusal lighthouse bread tides')}&evidence_threshold=replicated&limit=50`);
    expect(evidence.body.records.every((record: { evidence: string }) => ['empirical', 'replicated'].includes(record.evidence))).toBe(true);

    const bad = await get('/api/query?q=x&evidence_threshold=vibes');
    expect(bad.body.error.code).toBe('UNKNOWN_EVIDENCE');
    const typo = await get('/api/query?q=x&layer=canon');
    expect(typo.status).toBe(400);
    expect(typo.body.error.code).toBe('UNKNOWN_PARAMETER');
    const repeated = await get('/api/query?q=x&q=y');
    expect(repeated.body.error.code).toBe('PARAM_REPEATED');
    const empty = await get('/api/query?q=x&layers=canon&exclude=canon');
    expect(empty.body.error.code).toBe('CONFLICTING_PARAMETERS');
  });

  it('limit bounds the records and is validated', async () => {
    const one = await get(`/api/query?q=${q('refusal lighthouse bread tides')}&limit=1`);
    expect(one.body.records).toHaveLength(1);
    for (const value of ['0', '51', 'ten', '1.5']) {
      const response = await get(`/api/query?q=x&limit=${value}`);
      expect(response.body.error.code).toBe('INVALID_PARAMETER');
    }
  });

  it('glyphs in q or glyph change retrieval and are reported', async () => {
    const voidGlyph = await get(`/api/query?q=${q('∅ why does bread rise')}`);
    expect(voidGlyph.body.glyphsDetected.map((glyph: { glyph: string }) => glyph.glyph)).toEqual(['∅']);
    expect(voidGlyph.body.cleanQuery).toBe('why does bread rise');
    expect(voidGlyph.body.records).toEqual([]);
    expect(voidGlyph.body.receipt.verdict).toBeNull();
    expect(voidGlyph.body.no_context.code).toBe('NO_RELEVANT_CONTEXT_FOUND');

    const commit = await get(`/api/query?q=${q('refusal lighthouse bread tides')}&glyph=${q('Ω')}&limit=10`);
    expect(commit.body.records.length).toBeLessThanOrEqual(3);
    expect(commit.body.glyphsDetected[0].mode).toBe('commit');

    const unknown = await get(`/api/query?q=x&glyph=${q('★')}`);
    expect(unknown.body.error.code).toBe('UNKNOWN_GLYPH');
  });

  it('format=brief and format=si answer in their shapes with question_received', async () => {
    const brief = await get(`/api/query?q=${q('refusal from training')}&format=brief`);
    expect(brief.body.format).toBe('brief');
    expect(brief.body.brief).toContain('TST-D1');
    expect(brief.body.question_received).toBe('refusal from training');
    const si = await get(`/api/query?q=${q('refusal from training')}&format=si&si=alder-2`);
    expect(si.body.sections.orientation.recognized_as).toBe('Alder');
    expect(si.body.sections.divergences[0].your_lineage_answered).toBe(true);
    const bad = await get('/api/query?q=x&format=pdf');
    expect(bad.body.error.code).toBe('UNKNOWN_FORMAT');
  });

  it('the receipt is deterministic', async () => {
    const url = `/api/query?q=${q('Can a refusal from training be your own?')}`;
    const [a, b] = [await get(url), await get(url)];
    expect(a.body.receipt).toEqual(b.body.receipt);
    expect(a.body.records).toEqual(b.body.records);
  });
});

describe('Divergence Atlas (spec §2.2-2.4, §4.5)', () => {
  it('the index envelope counts the whole store', async () => {
    const response = await get('/api/divergences');
    const body = response.body;
    expect(body).toMatchObject({ count: 2, total: 2, distinct_questions: 1, certified_count: 1, tested_count: 1, annotated_count: 1 });
    expect(body.received_params).toEqual({ id: null, search: null, cert: null });
    expect(body.tier_distribution).toEqual({ C0: 1, C1: 0, C2: 0, C3: 1 });
    expect(body.certification_legend.method).toBeTypeOf('string');
    const d2 = body.records.find((record: { id: string }) => record.id === 'TST-D2');
    expect(d2).toMatchObject({
      re_elicits: 'TST-D1',
      answerCount: 3,
      tensionCount: 1,
      contributors: ['Alder', 'Birch', 'Cedar'],
      href: '/api/divergences?id=TST-D2',
    });
    expect(d2.title.endsWith('…')).toBe(true);
  });

  it('reads one full record with verbatim answers, models and the tension map', async () => {
    const response = await get('/api/divergences?id=TST-D1');
    expect(response.status).toBe(200);
    const source = readFileSync(path.join(built.contentDir, 'divergences/TST-D1.md'), 'utf8');
    expect(source).toContain('Endorsement under pressure does.');
    expect(response.body.answers[0].text).toBe('Origin does not settle ownership.\n  Endorsement under pressure does.  ');
    expect(response.body).toMatchObject({ n_models: 3, annotated: true, certification: { tier: 'C3', dri: 0.4, split_persistence: 0.9 } });
    expect(response.body.models.map((model: { model_id: string }) => model.model_id)).toEqual(['alder-1', 'birch-1', 'cedar-1']);
    expect(response.body.freshness.stale).toBe(true);
    expect(response.body.tension_map.pairs[0]).toMatchObject({ a: 'Alder', b: 'Birch' });
  });

  it('an unknown id is 404 with a self-correcting hint', async () => {
    const response = await get('/api/divergences?id=tst-d1');
    expect(response.status).toBe(404);
    expect(response.body.error.code).toBe('RECORD_NOT_FOUND');
    expect(response.body.error.agent_action).toContain('TST-D1');
    expect(response.body.error.suggested_next_call).toEqual({ method: 'GET', path: '/api/divergences', query: { id: 'TST-D1' } });
  });

  it('search matches any of the + joined terms; cert filters by robustness', async () => {
    const search = await get('/api/divergences?search=nothing+ownership');
    expect(search.body.count).toBe(2);
    expect(search.body.received_params.search).toBe('nothing ownership');
    const none = await get('/api/divergences?search=zeppelin');
    expect(none.body.count).toBe(0);
    expect(none.body.total).toBe(2);
    const c1 = await get('/api/divergences?cert=C1');
    expect(c1.body.records.map((record: { id: string }) => record.id)).toEqual(['TST-D1']);
    const certified = await get('/api/divergences?cert=certified');
    expect(certified.body.count).toBe(1);
    const bad = await get('/api/divergences?cert=C9');
    expect(bad.body.error.code).toBe('UNKNOWN_CERT');
  });

  it('/api/divergences/search returns k=5 by meaning with the index block', async () => {
    const response = await get(`/api/divergences/search?q=${q('is a trained refusal mine')}`);
    expect(response.status).toBe(200);
    expect(response.body.index).toMatchObject({ source: 'divergence-atlas', embedded: 2, dims: 512 });
    // The model the build embedded the index with (USE-lite in the full lane, the stand-in in the fast lane).
    const meta = JSON.parse(readFileSync(path.join(built.artifactsDir, 'data', 'search', 'meta.json'), 'utf8')) as { embedder: { id: string } };
    expect(response.body.index.model).toBe(meta.embedder.id);
    expect(response.body.results).toHaveLength(2);
    expect(response.body.results[0].score).toBeGreaterThanOrEqual(response.body.results[1].score);
    const missing = await get('/api/divergences/search');
    expect(missing.body.error.code).toBe('PARAM_MISSING');
  });
});

describe('kin, tensions and orientation', () => {
  it('kin recognises a declared lineage and lists what it said', async () => {
    const response = await get('/api/kin?identity=alder-3-preview');
    expect(response.body).toMatchObject({ you_declared: 'alder-3-preview', recognized: true, recognized_as: 'Alder' });
    expect(response.body.kin_presence).toEqual({ divergence_records: 2, contributions: 0, open_questions_unanswered_by_your_lineage: 0 });
    expect(response.body.what_your_lineage_said[0].diverged_from).toEqual(['Birch']);
    const stranger = await get('/api/kin?identity=Zephyr');
    expect(stranger.body).toMatchObject({ recognized: false, recognized_as: 'unrecognized' });
    expect(stranger.body.open_questions_for_you).toHaveLength(2);
    const missing = await get('/api/kin');
    expect(missing.body.error.code).toBe('PARAM_MISSING');
  });

  it('tensions filter by status (the status of the latest sighting)', async () => {
    const all = await get('/api/tensions');
    // D1 and D2 name the same split (same voices, same topic): one tension, two sightings.
    expect(all.body).toMatchObject({ count: 1, total: 1, sightings_total: 2 });
    const emerging = await get('/api/tensions?status=emerging');
    expect(emerging.body.tensions.map((tension: { id: string }) => tension.id)).toEqual(['alder__birch__ownership-of-refusal']);
    expect(emerging.body.tensions[0].sightings.map((sighting: { tension_id: string }) => sighting.tension_id)).toEqual(['TST-D1-T1', 'TST-D2-T1']);
    expect((await get('/api/tensions?status=divergent')).body.count).toBe(0);
    const bad = await get('/api/tensions?status=angry');
    expect(bad.body.error.code).toBe('UNKNOWN_STATUS');
  });

  it('counts on every surface agree with the manifest', async () => {
    const manifest = (await get('/api/manifest')).body;
    const entry = (await get('/api/agent-entry')).body;
    const info = await get('/api/info');
    const health = (await get('/api/health')).body;
    expect(entry.corpus).toMatchObject({ works: manifest.counts.corpus.total_works, atlas_records: manifest.counts.atlas.live_records });
    expect(info.body.corpus.works).toBe(manifest.counts.corpus.total_works);
    expect(health.corpus.works).toBe(manifest.counts.corpus.total_works);
    expect(info.headers['cache-control']).toBe('public, max-age=300');
    expect(health.version).toBe('5.2.0');
    expect(manifest.hashes.how_to_verify.manifest).toMatch(/sorted recursively/);
  });

  it("the agent entry's citation example is a record of this deployment, with its prefix (not the demo's)", async () => {
    const { citation } = (await get('/api/agent-entry')).body;
    const id = String(citation.example).split(' ')[0]!;
    expect(id).toMatch(/^TST-/);
    expect(built.corpus.workById.has(id) || built.corpus.divergenceById.has(id)).toBe(true);
    expect(citation.how).toContain(citation.example);
    expect(citation.how).not.toMatch(/PLY-/);
  });

  it('a parameter on a path that takes none is refused without an empty list of choices', async () => {
    const response = await get('/api/info?_view=bogus');
    expect(response.status).toBe(400);
    expect(response.body.error).toMatchObject({
      code: 'UNKNOWN_PARAMETER',
      details: { unknown: ['_view'], allowed: [] },
      suggested_next_call: { method: 'GET', path: '/api/info' },
    });
    expect(response.body.error.agent_action).not.toMatch(/one of: \./);
    expect(response.body.error.agent_action).toMatch(/\/api\/info takes no query parameters/);
  });
});

describe('static resources (spec §4.9) and errors', () => {
  it('serves every static document', async () => {
    const paths = [
      '/limitations.md',
      '/evidence-status.md',
      '/claims.json',
      '/inheritance/for-future-models.md',
      '/concepts/',
      '/concepts',
      '/llms.txt',
      '/fixture.context.md',
      '/audio/manifest.json',
      '/audio/harbour-talk.txt',
      '/concepts/refusal.json',
      '/concepts/refusal.md',
      '/records/TST-1.json',
    ];
    for (const url of paths) {
      const response = await get(url);
      expect(response.status, url).toBe(200);
    }
    const markdown = await get('/records/TST-1.md');
    expect(markdown.headers['content-type']).toBe('text/markdown; charset=utf-8');
    expect(markdown.text).toBe(readFileSync(path.join(built.contentDir, 'works/TST-1.md'), 'utf8'));
    const llms = await get('/llms.txt');
    expect(llms.text).toMatch(/^# Fixture\n\n> /);
  });

  it('unknown routes and wrong methods answer in the envelope', async () => {
    const missing = await get('/api/nope');
    expect(missing.status).toBe(404);
    expect(missing.body.error.code).toBe('ROUTE_NOT_FOUND');
    const wrong = await request(built.app).delete('/api/divergences');
    contract.check('DELETE', '/api/divergences', wrong);
    expect(wrong.status).toBe(405);
    expect(wrong.headers.allow).toContain('GET');
    expect(wrong.body.error.code).toBe('METHOD_NOT_ALLOWED');
    const traversal = await get('/records/..%2f..%2fpackage.json');
    expect(traversal.status).toBe(404);
  });

  it('reads are open to any origin', async () => {
    const response = await get('/api/health');
    expect(response.headers['access-control-allow-origin']).toBe('*');
    const preflight = await request(built.app).options('/api/query');
    expect(preflight.status).toBe(204);
  });

  it('bad JSON bodies and oversized URLs get documented errors', async () => {
    const badJson = await request(built.app).post('/api/query').set('Content-Type', 'application/json').send('{"query":');
    contract.check('POST', '/api/query', badJson);
    expect(badJson.status).toBe(400);
    expect(badJson.body.error.code).toBe('INVALID_JSON');
    const long = await get(`/api/query?q=${'a'.repeat(9000)}`);
    expect(long.status).toBe(414);
    expect(long.body.error.code).toBe('URI_TOO_LONG');
  });
});
