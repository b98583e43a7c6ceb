/**
 * Ranking that serves the spec, on real data: the typed gold queries of ../shared/omnarai
 * (eval-gold-set.json, read at run time, never copied) asked of GET /api/query with default
 * parameters, over the Omnarai corpus and Atlas imported into a temporary folder.
 *
 * What a correct service must do, by query type (the expectations were set by reading what
 * the records say, not from what the ranking happened to return):
 * - every question gets attributed records;
 * - a plainly factual question (technical, narrative or conceptual, no tensions expected)
 *   is answered from the works: no Atlas record first, none in the top five, and no
 *   cross-model tension reported as surfaced — none of the Atlas questions is about the
 *   terms, characters or mechanisms these ask about;
 * - a question that expects tensions gets Atlas records, and a bridge question that names two
 *   voices gets, as its first Atlas record and within the top five, a record in which those
 *   two voices split over what the question asks about (found here from the source tensions);
 * - an identity question of the form "What is X?" finds the work that defines X.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import request from 'supertest';
import { beforeAll, describe, expect, it } from 'vitest';
import { importOmnarai } from '../scripts/import-omnarai.ts';
import { buildApp, tempDir, type BuiltApp } from '../devkit/app.ts';
import { createContractChecker } from './helpers/contract.ts';
import { haveFixtures, sharedPath } from './helpers/shared-fixtures.ts';

const dataDir = sharedPath('omnarai');
/**
 * Questions that expect tensions and get no Atlas record since the Atlas floor of calibrated
 * relevance (core/search/relevance.ts, bench/README.md "Calibrated relevance"): their best
 * Atlas records score below it, as the best Atlas matches of some questions off the corpus
 * score above what these reach, and no Atlas record is shown to a question off the corpus.
 * Asserted as measured: any other miss fails, and so does one of these being fixed.
 */
const KNOWN_WITHOUT_ATLAS = ['eval-identity-05', 'eval-bridge-04', 'eval-narrative-03', 'eval-conceptual-05'];
const hasData = haveFixtures(['eval-gold-set.json', 'divergences.jsonl'].map((file) => path.join(dataDir, file)));

interface GoldQuery {
  id: string;
  query: string;
  type: 'identity' | 'bridge' | 'technical' | 'narrative' | 'conceptual';
  expect_tensions: boolean;
}

interface SourceTension {
  voice_a: string;
  claim_a: string;
  voice_b: string;
  claim_b: string;
  topic: string;
}

interface SourceDivergence {
  id: string;
  answers: string | { model: string }[];
  tensions: string | SourceTension[];
}

interface RecordOut {
  id: string;
  title: string;
  role: 'relevance' | 'divergence';
  contributors: string[];
  date: string;
}

interface QueryBody {
  question_received: string;
  records: RecordOut[];
  receipt: {
    verdict: 'substantive' | 'marginal' | null;
    records_used: number;
    contributors: string[];
    divergence_surfaced: { record_id: string; voice_a: string; voice_b: string; topic: string }[];
  };
}

const gold: GoldQuery[] = hasData ? JSON.parse(readFileSync(path.join(dataDir, 'eval-gold-set.json'), 'utf8')) : [];
const divergences: SourceDivergence[] = hasData
  ? readFileSync(path.join(dataDir, 'divergences.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as SourceDivergence)
  : [];
const parsed = <T>(value: string | T[]): T[] => (typeof value === 'string' ? (JSON.parse(value) as T[]) : value);
const tensionsOf = new Map(divergences.map((record) => [record.id, parsed<SourceTension>(record.tensions)]));
/** Every voice label that answers in the Atlas ("Claude", "GPT-4o", …). */
const voiceLabels = [...new Set(divergences.flatMap((record) => parsed<{ model: string }>(record.answers).map((answer) => answer.model)))];

/** The voices a question names, as whole words. */
function namedVoices(question: string): string[] {
  return voiceLabels.filter((label) =>
    new RegExp(`(^|[^\\p{L}\\p{N}-])${label.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}($|[^\\p{L}\\p{N}-])`, 'iu').test(question),
  );
}

/**
 * What each bridge question that names two voices asks them to split over, read from the
 * question: a tension between the two voices is on topic when its label or claims match.
 */
const BRIDGE_TOPICS: Record<string, RegExp> = {
  'eval-bridge-01': /conscious|phenomen|sentien|subjective|inner (?:life|experience)|what it is like/i,
  'eval-bridge-02': /technical|philosoph/i,
};

/** Whether the Atlas record has a tension between voices a and b (either way round) over the topic. */
function splitsOn(recordId: string, [a, b]: readonly string[], topic: RegExp): boolean {
  const same = (x: string, y: string) => x.toLowerCase() === y.toLowerCase();
  return (tensionsOf.get(recordId) ?? []).some(
    (tension) =>
      ((same(tension.voice_a, a!) && same(tension.voice_b, b!)) || (same(tension.voice_a, b!) && same(tension.voice_b, a!))) &&
      topic.test(`${tension.topic} ${tension.claim_a} ${tension.claim_b}`),
  );
}

const PLAINLY_FACTUAL = new Set(['technical', 'narrative', 'conceptual']);
const isPlainlyFactual = (item: GoldQuery) => PLAINLY_FACTUAL.has(item.type) && !item.expect_tensions;
const TOP = 5;
const atlas = (records: readonly RecordOut[]) => records.filter((record) => record.role === 'divergence');

describe.skipIf(!hasData)('typed gold queries on the imported Omnarai data (../shared/omnarai)', () => {
  let built: BuiltApp;
  const responses = new Map<string, { status: number; body: QueryBody }>();

  beforeAll(async () => {
    const contentDir = tempDir('omnarai-gold-content');
    importOmnarai({ from: dataDir, out: contentDir, force: true });
    built = await buildApp(contentDir);
    const contract = await createContractChecker(built.app);
    const summary: string[] = [];
    for (const item of gold) {
      const url = `/api/query?q=${encodeURIComponent(item.query)}`;
      const response = await request(built.app).get(url);
      contract.check('GET', url, response);
      responses.set(item.id, { status: response.status, body: response.body as QueryBody });
      const body = response.body as QueryBody;
      summary.push(
        `${item.id.padEnd(20)} ${item.type.padEnd(10)} tensions ${String(item.expect_tensions).padEnd(5)} ` +
          `surfaced ${body.receipt?.divergence_surfaced.length ?? '-'}  ` +
          (body.records ?? [])
            .slice(0, TOP)
            .map((record) => `${record.role === 'divergence' ? 'D' : 'w'}:${record.id}`)
            .join(' '),
      );
    }
    console.log(`gold queries (top ${TOP}, D = Atlas record):\n${summary.join('\n')}`);
  });

  const answer = (item: GoldQuery) => responses.get(item.id)!.body;
  const select = (predicate: (item: GoldQuery) => boolean) => {
    const chosen = gold.filter(predicate);
    expect(chosen.length, 'the gold set has queries of this kind').toBeGreaterThan(0);
    return chosen;
  };

  it('the gold set covers every type', () => {
    expect(new Set(gold.map((item) => item.type))).toEqual(new Set(['identity', 'bridge', 'technical', 'narrative', 'conceptual']));
    expect(responses.size).toBe(gold.length);
  });

  it('every query returns attributed records on the fast path', () => {
    for (const item of gold) {
      const { status, body } = responses.get(item.id)!;
      expect(status, item.id).toBe(200);
      expect(body.question_received, item.id).toBe(item.query);
      expect(body.records.length, `${item.id}: no record`).toBeGreaterThan(0);
      for (const record of body.records) {
        expect(record.contributors.length, `${item.id}: ${record.id} has no contributor`).toBeGreaterThan(0);
        expect(
          record.contributors.every((name) => name.trim() !== ''),
          `${item.id}: ${record.id}`,
        ).toBe(true);
        expect(record.date, `${item.id}: ${record.id}`).toMatch(/^\d{4}-\d{2}-\d{2}$/);
      }
      expect(body.receipt.records_used, item.id).toBe(body.records.length);
      expect(body.receipt.contributors.length, item.id).toBeGreaterThan(0);
    }
  });

  it('plainly factual questions are answered from the works: the Atlas stays out', () => {
    for (const item of select(isPlainlyFactual)) {
      const { records, receipt } = answer(item);
      expect(records[0]!.role, `${item.id}: an Atlas record ranked first`).not.toBe('divergence');
      expect(
        atlas(records.slice(0, TOP)).map((record) => record.id),
        `${item.id}: Atlas records in the top ${TOP}`,
      ).toEqual([]);
      expect(
        receipt.divergence_surfaced.map((tension) => tension.record_id),
        `${item.id}: tensions reported as surfaced`,
      ).toEqual([]);
    }
  });

  it('questions that expect tensions get Atlas records, but for the known misses of the Atlas floor', () => {
    const missing = select((candidate) => candidate.expect_tensions)
      .filter((item) => atlas(answer(item).records).length === 0)
      .map((item) => item.id);
    expect(missing).toEqual(KNOWN_WITHOUT_ATLAS);
  });

  it('a bridge question that names two voices gets, first among its Atlas records and in the top five, a record where those two split on its topic', () => {
    for (const item of select((candidate) => candidate.type === 'bridge' && namedVoices(candidate.query).length === 2)) {
      const voices = namedVoices(item.query);
      const topic = BRIDGE_TOPICS[item.id];
      expect(topic, `${item.id}: name its topic in BRIDGE_TOPICS`).toBeDefined();
      const expected = divergences.filter((record) => splitsOn(record.id, voices, topic!)).map((record) => record.id);
      expect(expected.length, `${item.id}: the Atlas holds such a record`).toBeGreaterThan(0);
      const { records } = answer(item);
      const firstAtlas = atlas(records)[0];
      expect(
        firstAtlas && expected.includes(firstAtlas.id),
        `${item.id}: first Atlas record ${firstAtlas?.id} does not split ${voices.join(' and ')} on the topic`,
      ).toBe(true);
      expect(
        records.slice(0, TOP).some((record) => expected.includes(record.id)),
        `${item.id}: none in the top ${TOP}`,
      ).toBe(true);
    }
  });

  it('bridge questions that name no voice get named tensions from the Atlas records they return', () => {
    for (const item of select(
      (candidate) => candidate.type === 'bridge' && namedVoices(candidate.query).length === 0 && !KNOWN_WITHOUT_ATLAS.includes(candidate.id),
    )) {
      const { records, receipt } = answer(item);
      expect(receipt.divergence_surfaced.length, `${item.id}: no tension surfaced`).toBeGreaterThan(0);
      const returned = new Set(atlas(records).map((record) => record.id));
      for (const tension of receipt.divergence_surfaced) expect(returned.has(tension.record_id), `${item.id}: ${tension.record_id}`).toBe(true);
    }
  });

  /**
   * The deterministic receipt (core/receipt.ts) counts an Atlas record's tensions as
   * surfaced when the whole question's cosine reaches SURFACE_SIMILARITY. The records that
   * answer these questions are returned (previous test) but sit below it: the question's voice
   * names and "disagree" weigh in its embedding and the records' text never names the voices.
   * Retrieval hands the receipt the tensions that set the named voices apart on the topic
   * (Retrieval.answering), and the receipt lists them first.
   */
  it('a bridge question naming two voices gets their split on its topic in the receipt, first', () => {
    for (const item of select((candidate) => candidate.type === 'bridge' && namedVoices(candidate.query).length === 2)) {
      const voices = namedVoices(item.query).map((voice) => voice.toLowerCase());
      const { receipt } = answer(item);
      const named = receipt.divergence_surfaced.filter(
        (tension) => voices.includes(tension.voice_a.toLowerCase()) && voices.includes(tension.voice_b.toLowerCase()) && tension.voice_a !== tension.voice_b,
      );
      expect(
        named.some((tension) => splitsOn(tension.record_id, namedVoices(item.query), BRIDGE_TOPICS[item.id]!)),
        item.id,
      ).toBe(true);
      const first = receipt.divergence_surfaced[0]!;
      expect(named.includes(first), `${item.id}: first surfaced is ${first.voice_a} vs ${first.voice_b}`).toBe(true);
      expect(receipt.verdict, item.id).toBe('substantive');
    }
  });

  it('a "What is X?" question names the glossary concept for X first, with its definition', () => {
    const glossary = (
      JSON.parse(readFileSync(path.join(dataDir, 'concepts.json'), 'utf8')) as { nodes: { id: string; label: string; type: string }[] }
    ).nodes.filter((node) => node.type === 'glossary');
    let checked = 0;
    for (const item of select((candidate) => /^what is /i.test(candidate.query))) {
      const term = item.query
        .replace(/^what is (?:the |an? )?/i, '')
        .replace(/\?$/, '')
        .trim()
        .toLowerCase();
      const defining = glossary.filter((node) => node.label.toLowerCase().includes(term));
      if (defining.length === 0) continue;
      checked++;
      const body = responses.get(item.id)!.body as QueryBody & { concepts: string[]; conceptSubgraph: { nodes: { id: string; definition?: string }[] } };
      expect(
        defining.map((node) => node.id),
        `${item.id}: concepts ${JSON.stringify(body.concepts.slice(0, 3))}`,
      ).toContain(body.concepts[0]);
      expect(body.conceptSubgraph.nodes.find((node) => node.id === body.concepts[0])?.definition, item.id).toBeTruthy();
    }
    expect(checked).toBeGreaterThanOrEqual(2); // "What is holdform?", "What is an epistemic ring?"
  });

  it('an identity question "What is X?" finds the work that defines X in the top three', () => {
    for (const item of select((candidate) => candidate.type === 'identity' && /^what is /i.test(candidate.query))) {
      const term = item.query
        .replace(/^what is (?:the |an? )?/i, '')
        .replace(/\?$/, '')
        .trim();
      const titles = answer(item)
        .records.slice(0, 3)
        .map((record) => record.title.toLowerCase());
      expect(
        titles.some((title) => title.includes(term.toLowerCase())),
        `${item.id}: "${term}" not in ${JSON.stringify(titles)}`,
      ).toBe(true);
    }
  });
});
