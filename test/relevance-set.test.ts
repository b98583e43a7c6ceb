/**
 * The judged relevance set (bench/relevance-set.json, issue 24): its shape, its balance and its
 * split rule hold without any data; with ../shared/omnarai imported into a temporary folder,
 * every expected id exists there, of the kind its family expects, and no question shares six
 * words in a row with a work or an Atlas question — a guard against writing the questions from
 * the corpus's own vocabulary, which would make retrieval look better than it is. No embedding,
 * no retrieval: this pins the set, not the engine. Skipped without ../shared locally; under CI
 * a missing fixture fails.
 */
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { INTENT_SET_FILE } from '../bench/intent-eval.ts';
import {
  ATLAS_ID,
  loadRelevanceSet,
  questionNumber,
  RELEVANCE_FAMILIES,
  RelevanceQuestionSchema,
  separation,
  splitFor,
  summariseRelevance,
  type RelevanceOutcome,
  type RelevanceQuestion,
} from '../bench/relevance-set.ts';
import { parseMarkdown } from '../content-files/frontmatter.ts';
import { importOmnarai } from '../scripts/import-omnarai.ts';
import { haveFixtures, sharedPath } from './helpers/shared-fixtures.ts';
import { words } from '../devkit/hashed-embedder.ts';

const set = loadRelevanceSet();
const byFamily = (family: string) => set.questions.filter((item) => item.family === family);
/** Fewest questions a family may hold: enough that each half says something on its own. */
const FLOOR = { answers: 50, off_corpus: 70, contested: 50 } as const;
const SHINGLE = 6;

function shingles(text: string, size = SHINGLE): Set<string> {
  const list = words(text);
  const out = new Set<string>();
  for (let start = 0; start + size <= list.length; start++) out.add(list.slice(start, start + size).join(' '));
  return out;
}

describe('the judged relevance set (bench/relevance-set.json)', () => {
  it('holds each family at its floor, each split exactly in half', () => {
    for (const family of RELEVANCE_FAMILIES) {
      const items = byFamily(family);
      expect(items.length, family).toBeGreaterThanOrEqual(FLOOR[family]);
      expect(items.filter((item) => item.split === 'holdout').length, family).toBe(items.length / 2);
    }
  });

  it('splits by the rule its about states (the number alone: odd calibrate, even holdout)', () => {
    expect(set.about).toMatch(/odd numbers are calibrate/);
    const off = set.questions.filter((item) => item.split !== splitFor(item.id)).map((item) => item.id);
    expect(off).toEqual([]);
  });

  it('has unique ids and unique questions', () => {
    const ids = set.questions.map((item) => item.id);
    expect(ids.filter((id, index) => ids.indexOf(id) !== index)).toEqual([]);
    const texts = set.questions.map((item) => words(item.question).join(' '));
    expect(texts.filter((text, index) => texts.indexOf(text) !== index)).toEqual([]);
  });

  it('keeps the contested questions of bench/intent-set.json as they are, ids and splits included', () => {
    const intent = JSON.parse(readFileSync(INTENT_SET_FILE, 'utf8')) as {
      questions: { id: string; kind: string; split: string; question: string; expect?: string }[];
    };
    const copied = intent.questions.filter((item) => item.kind === 'contested');
    expect(copied.length).toBe(40);
    for (const item of copied) {
      const mine = set.questions.find((candidate) => candidate.id === item.id);
      expect(mine, item.id).toMatchObject({ family: 'contested', split: item.split, question: item.question, expect: [item.expect] });
    }
  });

  it('marks the off-corpus questions that borrow a corpus word in another sense, about a quarter of them', () => {
    const off = byFamily('off_corpus');
    const marked = off.filter((item) => /shares the word '[^']+'/.test(item.note ?? ''));
    expect(marked.length).toBeGreaterThanOrEqual(Math.ceil(off.length / 5));
    expect(marked.length).toBeLessThanOrEqual(Math.ceil(off.length / 2));
  });

  it('rejects a question whose expectation does not fit its family', () => {
    const base = { id: 'off-corpus-01', family: 'off_corpus', split: 'calibrate', question: 'What is the capital of Peru?' };
    expect(RelevanceQuestionSchema.safeParse({ ...base, expect: [] }).success).toBe(true);
    expect(RelevanceQuestionSchema.safeParse({ ...base, expect: ['OMN-001'] }).success).toBe(false);
    const contested = { ...base, id: 'contested-01', family: 'contested', expect: ['OMN-001'] };
    expect(RelevanceQuestionSchema.safeParse(contested).success).toBe(false);
    expect(RelevanceQuestionSchema.safeParse({ ...contested, expect: ['OMN-D1780429830432'] }).success).toBe(true);
    const answers = { ...base, id: 'answers-01', family: 'answers', expect: ['OMN-D1780429830432'] };
    expect(RelevanceQuestionSchema.safeParse(answers).success).toBe(false);
    expect(RelevanceQuestionSchema.safeParse({ ...answers, id: 'contested-02' }).success).toBe(false);
  });
});

describe('scoring the judged relevance set (bench/relevance.ts)', () => {
  const item = (id: string, family: RelevanceQuestion['family'], expect: string[]): RelevanceQuestion => ({
    id,
    family,
    split: splitFor(id),
    question: `question ${id}`,
    expect,
  });
  const shown = (...records: [string, number][]) => records.map(([id, similarity]) => ({ id, atlas: ATLAS_ID.test(id), similarity }));
  const outcomes: RelevanceOutcome[] = [
    { item: item('answers-01', 'answers', ['OMN-002', 'OMN-009']), shown: shown(['OMN-001', 0.5], ['OMN-009', 0.4]) },
    { item: item('answers-02', 'answers', ['OMN-003']), shown: shown(['OMN-003', 0.6], ['OMN-D1', 0.3]) },
    { item: item('answers-03', 'answers', ['OMN-004']), shown: shown(['OMN-005', 0.2]) },
    { item: item('off-corpus-01', 'off_corpus', []), shown: [] },
    { item: item('off-corpus-02', 'off_corpus', []), shown: shown(['OMN-001', 0.3], ['OMN-D2', 0.25]) },
    { item: item('contested-01', 'contested', ['OMN-D1']), shown: shown(['OMN-001', 0.4], ['OMN-D1', 0.5]) },
    { item: item('contested-02', 'contested', ['OMN-D1']), shown: shown(['OMN-D2', 0.5]) },
    { item: item('contested-03', 'contested', ['OMN-D1']), shown: shown(['OMN-001', 0.5]) },
  ];

  it('counts places, reciprocal ranks and Atlas records by family', () => {
    const summary = summariseRelevance(outcomes);
    expect(summary.answers).toEqual({ total: 3, expectedShown: 2, expectedFirst: 1, reciprocalRank: (1 / 2 + 1) / 3, atlasShown: 1 });
    expect(summary.offCorpus).toEqual({ total: 2, nothingShown: 1, atlasShown: 1 });
    expect(summary.contested).toEqual({ total: 3, ownShown: 1, otherAtlasOnly: 1, noAtlas: 1 });
    expect(summary.medianBestSimilarity).toEqual({ answers: 0.5, off_corpus: 0.15, contested: 0.5 });
  });

  it('separates two families by the share of pairs ordered right, ties counting half', () => {
    expect(separation([0.5, 0.6], [0.1, 0.2])).toBe(1);
    expect(separation([0.1], [0.1, 0.5])).toBe(0.25);
    expect(separation([], [0.1])).toBeUndefined();
    // answers' best similarities 0.5, 0.6, 0.2 against off-corpus 0 and 0.3: five of six pairs.
    expect(summariseRelevance(outcomes).answersOverOffCorpus).toBeCloseTo(5 / 6, 10);
  });
});

const hasData = haveFixtures(['corpus.json', 'media-corpus.jsonl', 'divergences.jsonl', 'concepts.json'].map((file) => sharedPath('omnarai', file)));

describe.skipIf(!hasData)('the judged relevance set against the imported ../shared/omnarai', () => {
  const temp = mkdtempSync(path.join(os.tmpdir(), 'polyphony-relevance-set-'));
  const works = new Map<string, string>();
  const atlas = new Map<string, string>();
  afterAll(() => rmSync(temp, { recursive: true, force: true }));

  beforeAll(() => {
    const content = path.join(temp, 'content');
    importOmnarai({ from: sharedPath('omnarai'), out: content });
    const read = (folder: string, into: Map<string, string>, text: (data: Record<string, unknown>, body: string) => string) => {
      for (const name of readdirSync(path.join(content, folder)).filter((file) => file.endsWith('.md'))) {
        const { data, body } = parseMarkdown(readFileSync(path.join(content, folder, name), 'utf8'));
        into.set(String(data.id), text(data, body));
      }
    };
    read('works', works, (data, body) => `${String(data.title)}\n${body}`);
    read('divergences', atlas, (data) => String(data.question));
  });

  it('imports the corpus and the Atlas the set was written on', () => {
    expect(works.size).toBeGreaterThan(500);
    expect(atlas.size).toBe(100);
  });

  it('expects only ids the import has: works for answers, Atlas records for contested', () => {
    const unknown = (item: RelevanceQuestion) =>
      item.expect.filter((id) => (item.family === 'contested' ? !atlas.has(id) : !works.has(id))).map((id) => `${item.id}: ${id}`);
    expect(set.questions.flatMap(unknown)).toEqual([]);
    expect(set.questions.flatMap((item) => item.expect).filter((id) => ATLAS_ID.test(id) && !atlas.has(id))).toEqual([]);
  });

  it('gives the new contested questions Atlas records the copied forty do not cover', () => {
    const contested = byFamily('contested');
    const copied = new Set(contested.filter((item) => questionNumber(item.id) <= 40).flatMap((item) => item.expect));
    const fresh = contested.filter((item) => questionNumber(item.id) > 40);
    expect(fresh.length).toBeGreaterThanOrEqual(10);
    expect(fresh.filter((item) => copied.has(item.expect[0]!)).map((item) => item.id)).toEqual([]);
  });

  it('answers spread over many works, media records among them', () => {
    const expected = new Set(byFamily('answers').flatMap((item) => item.expect));
    expect(expected.size).toBeGreaterThanOrEqual(50);
    expect([...expected].some((id) => id.startsWith('video_'))).toBe(true);
  });

  it('shares no run of six words with any work or Atlas question', () => {
    const source = new Set<string>();
    for (const text of [...works.values(), ...atlas.values()]) for (const shingle of shingles(text)) source.add(shingle);
    const copied = set.questions.flatMap((item) =>
      [...shingles(item.question)].filter((shingle) => source.has(shingle)).map((shingle) => `${item.id}: "${shingle}"`),
    );
    expect(copied).toEqual([]);
  });
});
