/**
 * Calibrated relevance through GET /api/query on the fixture content: each record's `match`,
 * the floors (absolute, the same whatever the best record scores), no_context's reason, best
 * relevance and floor, the ∞ glyph's wider field, the configured floors, and the build serving
 * the calibration in effect. The model here is fitted by hand for the test's embedder, so the
 * floors apply whatever TEST_EMBEDDER is; the real fit on real data is test/intent-set.test.ts.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import request from 'supertest';
import { beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../api/app.ts';
import { loadConfig } from '../api/config.ts';
import { loadCorpus } from '../api/load-artifacts.ts';
import { artifactPaths } from '../core/artifacts.ts';
import { calibratedRelevance, DEFAULT_RELEVANCE_MODEL, RELEVANCE_CALIBRATION_FILE, type RelevanceModel } from '../core/search/relevance.ts';
import { buildApp, TEST_CACHE_DIR, testEmbedder, type BuiltApp } from '../devkit/app.ts';
import { writeFixtureContent } from '../devkit/fixture-content.ts';
import { buildArtifacts } from '../scripts/build.ts';
import { ContentError } from '../content-files/issues.ts';
import { createContractChecker, type ContractChecker } from './helpers/contract.ts';

let built: BuiltApp;
let contract: ContractChecker;

/** A model for the test's embedder: relevance rises with cosine and coverage; floors set per test. */
async function modelFor(floors: RelevanceModel['floors']): Promise<RelevanceModel> {
  const embedder = await testEmbedder();
  return { ...DEFAULT_RELEVANCE_MODEL, embedder: embedder.id, intercept: -3, cosine: 6, coverage: 6, floors, signals: { cosine: 0.3, coverage: 0.1 } };
}

async function appWith(floors: RelevanceModel['floors'], relevanceFloors = {}) {
  const corpus = await loadCorpus(built.artifactsDir, await testEmbedder(), undefined, { relevance: await modelFor(floors), relevanceFloors });
  return createApp({ corpus, log: () => {} });
}

const q = encodeURIComponent;
/** A question that finds a work and both fixture Atlas records, at different relevance. */
const MIXED = 'Is a refusal learned in training your own, and what of refusing as a model?';

beforeAll(async () => {
  built = await buildApp(writeFixtureContent());
  contract = await createContractChecker(built.app);
}, 300_000);

describe('calibrated relevance on GET /api/query', () => {
  it('every record says its calibrated relevance and which signals made it relevant', async () => {
    const app = await appWith({ relevant: 0, atlas: 0 });
    const response = await request(app).get(`/api/query?q=${q('why does bread rise')}`);
    contract.check('GET', '/api/query', response);
    expect(response.body.records.length).toBeGreaterThan(0);
    const model = await modelFor({ relevant: 0, atlas: 0 });
    for (const record of response.body.records) {
      const { relevance, signals, semantic, lexical } = record.match;
      expect(relevance).toBeCloseTo(calibratedRelevance(model, semantic, lexical), 3);
      const isSemantic = semantic >= 0.3;
      const isLexical = lexical >= 0.1;
      expect(signals).toBe(isSemantic && isLexical ? 'both' : isSemantic ? 'semantic' : isLexical ? 'lexical' : 'neither');
    }
    const bread = response.body.records.find((record: { title: string }) => record.title === 'Why bread rises');
    expect(bread.match.lexical).toBeGreaterThan(0);
  });

  it('a floor above every record empties records and no_context says the best relevance and the floor', async () => {
    const open = await request(await appWith({ relevant: 0, atlas: 0 })).get(`/api/query?q=${q('why does bread rise')}`);
    const best = Math.max(...open.body.records.map((record: { match: { relevance: number } }) => record.match.relevance));
    const floor = Math.min(1, Math.round((best + 0.01) * 100) / 100);
    for (const mode of ['', '&mode=retrieve']) {
      const response = await request(await appWith({ relevant: floor, atlas: floor })).get(`/api/query?q=${q('why does bread rise')}${mode}`);
      contract.check('GET', '/api/query', response);
      expect(response.body.records).toEqual([]);
      expect(response.body.no_context).toMatchObject({ code: 'NO_RELEVANT_CONTEXT_FOUND', reason: 'below_floor', relevance_floor: floor });
      expect(response.body.no_context.best_relevance).toBeCloseTo(best, 3);
      expect(response.body.no_context.message).toContain(String(floor));
      expect(response.body.receipt.verdict).toBeNull();
    }
  });

  it('the floor is absolute: a record just below it goes, one at it stays, whatever the best scores', async () => {
    const open = await request(await appWith({ relevant: 0, atlas: 0 })).get(`/api/query?q=${q(MIXED)}&limit=20`);
    const scores = open.body.records.map((record: { match: { relevance: number } }) => record.match.relevance).sort((a: number, b: number) => b - a);
    expect(scores.length).toBeGreaterThan(1);
    const floor = scores[1];
    const cut = await request(await appWith({ relevant: floor, atlas: 0 })).get(`/api/query?q=${q(MIXED)}&limit=20`);
    expect(cut.body.records.every((record: { match: { relevance: number } }) => record.match.relevance >= floor)).toBe(true);
    expect(cut.body.records.length).toBe(scores.filter((score: number) => score >= floor).length);
  });

  it('the ∞ glyph asks for the wider field: no calibrated floor', async () => {
    const app = await appWith({ relevant: 1, atlas: 1 });
    const strict = await request(app).get(`/api/query?q=${q('why does bread rise')}`);
    expect(strict.body.records).toEqual([]);
    const wide = await request(app).get(`/api/query?q=${q('why does bread rise')}&glyph=${q('∞')}`);
    expect(wide.body.records.length).toBeGreaterThan(0);
  });

  it('the void glyph and an empty question say so in no_context.reason', async () => {
    const response = await request(built.app).get(`/api/query?q=${q('why does bread rise')}&glyph=${q('∅')}`);
    expect(response.body.no_context).toMatchObject({ reason: 'void_glyph', best_relevance: null });
  });

  it('an Atlas record below the Atlas floor is not shown beside works; no_context names the floor it needed', async () => {
    const open = await request(await appWith({ relevant: 0, atlas: 0 })).get(`/api/query?q=${q(MIXED)}&limit=20`);
    const atlas = open.body.records.filter((record: { role: string }) => record.role === 'divergence');
    expect(atlas.length).toBeGreaterThan(0);
    const strict = await request(await appWith({ relevant: 0, atlas: 1 })).get(`/api/query?q=${q(MIXED)}&limit=20`);
    expect(strict.body.records.filter((record: { role: string }) => record.role === 'divergence')).toEqual([]);
    // A caller who scopes to the Atlas asked for it: the Atlas floor weighs records against works only.
    const scoped = await request(await appWith({ relevant: 0, atlas: 1 })).get(`/api/query?q=${q(MIXED)}&layers=divergence`);
    expect(scoped.body.records.length).toBeGreaterThan(0);
  });

  it('configured floors override the calibration (RELEVANCE_FLOOR, ATLAS_RELEVANCE_FLOOR)', async () => {
    expect(loadConfig({ RELEVANCE_FLOOR: '0.4', ATLAS_RELEVANCE_FLOOR: '0.8' }).relevanceFloors).toEqual({ relevant: 0.4, atlas: 0.8 });
    expect(loadConfig({}).relevanceFloors).toEqual({});
    expect(() => loadConfig({ RELEVANCE_FLOOR: '1.5' })).toThrow(/RELEVANCE_FLOOR/);
    const app = await appWith({ relevant: 0, atlas: 0 }, { relevant: 1 });
    const response = await request(app).get(`/api/query?q=${q('why does bread rise')}`);
    expect(response.body.records).toEqual([]);
    expect(response.body.no_context.relevance_floor).toBe(1);
  });
});

describe("the corpus's question gate (the build's retrieval choice)", () => {
  /** The fixture's build with a question gate written into its choice, as a probed build writes one. */
  async function withGate<T>(gate: number, use: () => Promise<T>): Promise<T> {
    const file = artifactPaths(built.artifactsDir).searchRetrieval;
    const original = readFileSync(file, 'utf8');
    writeFileSync(file, JSON.stringify({ ...JSON.parse(original), question_gate: gate }));
    try {
      return await use();
    } finally {
      writeFileSync(file, original);
    }
  }

  it('turns a question away when its best record is below the gate, and no_context names the gate; at the gate it passes', async () => {
    const open = await request(await appWith({ relevant: 0, atlas: 0 })).get(`/api/query?q=${q('why does bread rise')}`);
    const best = Math.max(...open.body.records.map((record: { match: { relevance: number } }) => record.match.relevance));
    const above = Math.min(1, Math.ceil((best + 0.001) * 1000) / 1000);
    await withGate(above, async () => {
      const app = await appWith({ relevant: 0, atlas: 0 });
      for (const mode of ['', '&mode=retrieve']) {
        const response = await request(app).get(`/api/query?q=${q('why does bread rise')}${mode}`);
        contract.check('GET', '/api/query', response);
        expect(response.body.records).toEqual([]);
        expect(response.body.no_context).toMatchObject({ code: 'NO_RELEVANT_CONTEXT_FOUND', reason: 'below_floor', relevance_floor: above });
        expect(response.body.no_context.best_relevance).toBeCloseTo(best, 3);
        expect(response.body.no_context.message).toMatch(/question gate/);
        expect(response.body.no_context.agent_action).toMatch(/∞/);
      }
      const health = await request(app).get('/api/health');
      expect(health.body.corpus.retrieval.question_gate).toBe(above);
      // The ∞ glyph asks for the wider field: no gate either.
      const wide = await request(app).get(`/api/query?q=${q('why does bread rise')}&glyph=${q('∞')}`);
      expect(wide.body.records.length).toBeGreaterThan(0);
      // Not the floor: every record the question found stays when the best reaches the gate.
    });
    const below = Math.floor((best - 0.001) * 1000) / 1000;
    await withGate(below, async () => {
      const response = await request(await appWith({ relevant: 0, atlas: 0 })).get(`/api/query?q=${q('why does bread rise')}`);
      expect(response.body.records.map((record: { id: string }) => record.id)).toEqual(open.body.records.map((record: { id: string }) => record.id));
    });
  });

  it("steps aside for an operator's own floor (RELEVANCE_FLOOR)", async () => {
    await withGate(1, async () => {
      const app = await appWith({ relevant: 0, atlas: 0 }, { relevant: 0 });
      const response = await request(app).get(`/api/query?q=${q('why does bread rise')}`);
      expect(response.body.records.length).toBeGreaterThan(0);
      expect((await request(app).get('/api/health')).body.corpus.retrieval.question_gate).toBeNull();
    });
  });
});

describe('the calibration in effect, from the build', () => {
  it('is the engine default without a fit in the content, served at /relevance-calibration.json', () => {
    const served = JSON.parse(readFileSync(path.join(artifactPaths(built.artifactsDir).public, RELEVANCE_CALIBRATION_FILE), 'utf8'));
    expect(served).toEqual(DEFAULT_RELEVANCE_MODEL);
  });

  it("is the content's own fit when it has one, validated; an invalid one fails the build", async () => {
    const contentDir = writeFixtureContent();
    const own = await modelFor({ relevant: 0.3, atlas: 0.6 });
    writeFileSync(path.join(contentDir, RELEVANCE_CALIBRATION_FILE), JSON.stringify(own));
    const rebuilt = await buildApp(contentDir);
    expect(rebuilt.corpus.search.relevance).toEqual(own);
    expect(existsSync(path.join(artifactPaths(rebuilt.artifactsDir).data, 'search', 'relevance.json'))).toBe(true);

    writeFileSync(path.join(contentDir, RELEVANCE_CALIBRATION_FILE), JSON.stringify({ ...own, floors: { relevant: 2, atlas: 0.6 } }));
    await expect(
      buildArtifacts({ contentDir, artifactsDir: rebuilt.artifactsDir, cacheDir: TEST_CACHE_DIR, embedder: await testEmbedder() }),
    ).rejects.toBeInstanceOf(ContentError);
  }, 300_000);

  it('a model fitted on another embedder reports relevance but applies no floor', async () => {
    const corpus = await loadCorpus(built.artifactsDir, await testEmbedder(), undefined, {
      relevance: { ...DEFAULT_RELEVANCE_MODEL, embedder: 'some-other-embedder', floors: { relevant: 1, atlas: 1 } },
    });
    expect(corpus.search.relevance.floors).toEqual({ relevant: 0, atlas: 0 });
    const response = await request(createApp({ corpus, log: () => {} })).get(`/api/query?q=${q('why does bread rise')}`);
    expect(response.body.records.length).toBeGreaterThan(0);
  });
});
