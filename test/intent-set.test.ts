/**
 * Atlas records earn their place in GET /api/query by relevance (core/atlas-admission.ts),
 * checked on the judged set of bench/intent-set.json over the Omnarai corpus and Atlas
 * imported from ../shared/omnarai into a temporary folder, with default parameters.
 *
 * The aim: no factual question shows an Atlas record in its top 8, and every contested one
 * (a paraphrase of an Atlas question) shows its record. Measured: the factual half of the aim
 * holds on all 40; 39 of 40 contested questions show their record. contested-05 misses with or
 * without the admission test (its record is fourth among Atlas records by similarity, and
 * retrieval places it below the eighth place), so it is listed here as a known miss: any
 * other miss fails. Questions about works worded as disagreements, which the intent reader
 * calls contested, are held to the same rule but for the one Atlas record they always keep.
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import request from 'supertest';
import { beforeAll, describe, expect, it } from 'vitest';
import { importOmnarai } from '../scripts/import-omnarai.ts';
import { REPO_ROOT } from '../core/paths.ts';
import { ATLAS_RELEVANCE_RATIO } from '../core/atlas-admission.ts';
import { confusion, judge, loadIntentSet, misses, type Outcome } from '../bench/intent-eval.ts';
import { buildApp, tempDir } from '../devkit/app.ts';

const dataDir = path.resolve(REPO_ROOT, '../shared/omnarai');
const hasData = existsSync(path.join(dataDir, 'divergences.jsonl')) && existsSync(path.join(dataDir, 'corpus.json'));
const KNOWN_CONTESTED_MISSES = ['contested-05'];
/** The question of the issue that started this: "What year was…" is no lookup form the intent reader knows. */
const UUID_QUESTION = 'What year was the UUID version 7 specification standardized and what database advantage does it provide?';
/**
 * Questions about works worded as a disagreement, an either/or or an "should": the intent
 * reader calls them contested. Their Atlas records must earn their place all the same; only
 * the one best Atlas record a contested question always shows may fall short.
 */
const WORDED_AS_DISAGREEMENT = [
  'Is UUID version 7 better for database indexes, or is version 4 still preferable?',
  'What was debated at the Electric Intelligence Summit 2025?',
  'Should municipalities use AI in public service delivery?',
  'Where do Claude and Grok disagree about UUID version 7?',
];

interface RecordOut {
  id: string;
  role: string;
  relevanceScore: number;
}

describe.skipIf(!hasData)('Atlas admission on the judged set (bench/intent-set.json, imported ../shared/omnarai)', () => {
  const items = loadIntentSet();
  let outcomes: Outcome[] = [];
  let uuidRecords: RecordOut[] = [];
  const worded = new Map<string, RecordOut[]>();

  beforeAll(async () => {
    const contentDir = tempDir('intent-content');
    importOmnarai({ from: dataDir, out: contentDir, force: true });
    const { app } = await buildApp(contentDir);
    const ask = async (question: string) => {
      const response = await request(app).get(`/api/query?q=${encodeURIComponent(question)}`);
      expect(response.status, question).toBe(200);
      return (response.body.records as { id: string; role: string }[]).map((record) => ({ id: record.id, atlas: record.role === 'divergence' }));
    };
    outcomes = await judge(items, ask);
    uuidRecords = (await request(app).get(`/api/query?q=${encodeURIComponent(UUID_QUESTION)}`)).body.records;
    for (const question of WORDED_AS_DISAGREEMENT) worded.set(question, (await request(app).get(`/api/query?q=${encodeURIComponent(question)}`)).body.records);
    console.log(`Atlas admission misses:\n${misses(outcomes).join('\n') || 'none'}`);
  });

  it('the set holds at least 40 factual and 40 contested questions, each half split for calibration and hold-out', () => {
    for (const kind of ['factual', 'contested'] as const) {
      const ofKind = items.filter((item) => item.kind === kind);
      expect(ofKind.length).toBeGreaterThanOrEqual(40);
      expect(ofKind.filter((item) => item.split === 'holdout').length).toBe(ofKind.length / 2);
    }
  });

  it('no factual question shows an Atlas record in its top 8, on either half', () => {
    const shown = outcomes
      .filter((outcome) => outcome.item.kind === 'factual' && outcome.atlas.length > 0)
      .map((outcome) => `${outcome.item.id}: ${outcome.atlas.join(', ')}`);
    expect(shown).toEqual([]);
  });

  it('the question of the issue gets its work first and no Atlas record', () => {
    expect(uuidRecords[0]?.role).toBe('relevance');
    expect(uuidRecords.filter((record) => record.role === 'divergence')).toEqual([]);
  });

  it('every contested question shows the Atlas record it paraphrases, but for the known miss', () => {
    const missing = outcomes.filter((outcome) => outcome.item.kind === 'contested' && !outcome.ownShown).map((outcome) => outcome.item.id);
    expect(missing.filter((id) => !KNOWN_CONTESTED_MISSES.includes(id))).toEqual([]);
    const table = confusion(outcomes);
    expect(table.contested.ownShown).toBeGreaterThanOrEqual(table.contested.total - KNOWN_CONTESTED_MISSES.length);
    expect(table.contested.noAtlas).toBe(0);
  });

  it('a question worded as a disagreement shows at most one Atlas record that did not earn its place', () => {
    for (const [question, records] of worded) {
      const bestWork = Math.max(0, ...records.filter((record) => record.role !== 'divergence').map((record) => record.relevanceScore));
      // Scores are rounded to 4 decimals in the response.
      const below = records.filter((record) => record.role === 'divergence' && record.relevanceScore < ATLAS_RELEVANCE_RATIO * bestWork - 1e-4);
      expect(below.length, `${question}: ${below.map((record) => record.id).join(', ')}`).toBeLessThanOrEqual(1);
    }
  });

  it('the held-out half meets the aim as the calibration half does', () => {
    const holdout = confusion(outcomes.filter((outcome) => outcome.item.split === 'holdout'));
    expect(holdout.factual.atlasShown).toBe(0);
    expect(holdout.contested.ownShown).toBe(holdout.contested.total);
  });
});
