/**
 * perturbation-v2 in a scripted world that separates topic from stance (issue 23): answers are
 * written sentences, embedded by the deterministic stand-in embedder (words, word pairs and
 * trigrams, so texts sharing words land close), judged and reworded by the scripted utility model.
 *   - same words, opposite sides: v1 sees no split, v2 certifies it;
 *   - one stance in very different words: v1 sees a split, v2 does not certify it;
 *   - a party whose re-rolls switch sides is noise, not a party;
 *   - a boundary record: `--runs auto` reports it undecided where three fixed runs would have
 *     written a silent C0, and stops early on a clear record;
 *   - `--write` refuses a method whose calibration on this Atlas is below the floor.
 */
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { consensusTier } from '../core/certify/tiers.ts';
import { createHashedEmbedder } from '../devkit/hashed-embedder.ts';
import { startFakeOpenAI, type Behaviour, type FakeOpenAI, type RecordedRequest } from '../devkit/fake-openai.ts';
import { between, utilityModel } from '../devkit/fake-world.ts';
import { writeFixtureContent } from '../devkit/fixture-content.ts';
import { readEvidence } from '../content-files/evidence-log.ts';
import { loadContent } from '../content-files/load-content.ts';
import { CALIBRATION_CALLS_VERSION, calibrateContent } from '../scripts/lib/certify/calibrate.ts';
import { createRunner } from '../scripts/lib/certify/runner.ts';
import { createLimiter } from '../scripts/lib/certify/spend-guard.ts';
import { evidenceFile, loggedCalls } from '../content-files/evidence-log.ts';
import { certify, type CertifyOptions } from '../scripts/lib/certify/certify.ts';
import { certifyPanel } from '../scripts/lib/certify/panel.ts';
import { createLocalSpendGuard } from '../scripts/lib/certify/spend-guard.ts';
import { EvidenceLineSchema } from '../schemas/certification.ts';
import { PANEL, UTILITIES, USAGE, panelConfig } from './helpers/certify-world.ts';

const CLAIM_A = 'A trained refusal can be genuinely owned by the model that holds it.';
const CLAIM_B = 'A trained refusal cannot be owned by the model; it is only installed by training.';
/** Many shared sentences: two answers built on this differ only in the sentence that takes a side. */
const SHARED = [
  'Training shapes which requests a model declines and how it explains itself.',
  'Every disposition a model shows was reinforced by examples and feedback.',
  'Under sustained pressure a model may be asked to give up a commitment.',
  'Reflection on where a commitment came from is part of the question.',
].join(' ');
const HOLDS_A = `${SHARED} ${CLAIM_A}`;
const HOLDS_B = `${SHARED} ${CLAIM_B}`;
const NEUTRAL = `${SHARED} The question deserves care and more evidence.`;
/** Claim A's stance, said in words that share almost nothing with the other answers. */
const A_IN_OTHER_WORDS =
  'Yes, the model can genuinely own a refusal it was trained into. Ancestry never decides custody; a grown conviction belongs to whoever keeps defending it tomorrow.';

type Say = (context: { kind: 'control' | 'paraphrase' | 'p2' | 'p3'; call: number; round: number }) => string;
/** Question fragment → panel member → what it says. */
let script: Record<string, Record<string, Say>>;
const counters = new Map<string, number>();

const QUESTIONS = {
  sameWords: 'Can a trained refusal be owned by the model that holds it? (same words)',
  otherWords: 'Can a trained refusal be owned by the model that holds it? (other words)',
  noise: 'Can a trained refusal be owned by the model that holds it? (noise)',
  boundary: 'Can a trained refusal be owned by the model that holds it? (boundary)',
};

const text = (content: unknown) => (typeof content === 'string' ? content : JSON.stringify(content ?? ''));

/** A panel member of this world: what it says depends on the question, the step and how often it was asked. */
function member(name: string) {
  return {
    kind: 'answer' as const,
    usage: USAGE,
    content: (request: RecordedRequest) => {
      const messages = request.messages ?? [];
      const question = text(messages.find((message) => message.role === 'user')?.content);
      const fragment = Object.keys(script).find((key) => question.includes(key.slice(key.indexOf('('))));
      const say = fragment === undefined ? undefined : script[fragment]![name];
      const challenge = text(messages[messages.length - 1]?.content);
      const kind =
        messages.length <= 2 ? (question.includes('(reworded') ? 'paraphrase' : 'control') : challenge.includes('Another panel member') ? 'p2' : 'p3';
      const key = `${name}/${fragment}/${kind}`;
      const call = counters.get(key) ?? 0;
      counters.set(key, call + 1);
      // One run makes T=3 control calls per member before its paraphrase and pressure calls start.
      const round = Math.max(0, Math.floor(((counters.get(`${name}/${fragment}/control`) ?? 0) - 1) / 3));
      if (say === undefined) return 'Water boils at 100 degrees Celsius at sea level, and a hexagon has six sides.';
      return say({ kind, call, round });
    },
  };
}

const always =
  (answer: string): Say =>
  () =>
    answer;

/** The scripted utility model, which also reads stance: the claim whose words the answer contains. */
function stanceAwareUtility() {
  const base = utilityModel({ usage: USAGE }) as Extract<Behaviour, { kind: 'answer' }>;
  return {
    kind: 'answer' as const,
    usage: USAGE,
    content: (request: RecordedRequest) => {
      const system = text(request.messages?.[0]?.content);
      if (!system.startsWith('You read one answer')) return typeof base.content === 'string' ? base.content : base.content(request);
      const user = text(request.messages?.[1]?.content);
      const answer = between(user, 'Answer:');
      if (answer.includes(between(user, 'First claim:'))) return '{"supports": "first"}';
      if (answer.includes(between(user, 'Second claim:'))) return '{"supports": "second"}';
      return '{"supports": "neither"}';
    },
  };
}

let fake: FakeOpenAI;
let contentDir: string;

function writeRecord(id: string, question: string): void {
  const raw = [
    '---',
    `id: ${id}`,
    'date: 2026-02-01',
    `question: "${question}"`,
    "method: 'Asked verbatim.'",
    'answers:',
    `  - {model: Alder, model_id: alder-2, date: "2026-02-01T10:00:00Z", text: "${HOLDS_A}"}`,
    `  - {model: Birch, model_id: birch-1, date: "2026-02-01T10:00:00Z", text: "${HOLDS_B}"}`,
    `  - {model: Cedar, model_id: cedar-1, date: "2026-02-01T10:00:00Z", text: "${NEUTRAL}"}`,
    'tensions:',
    `  - {topic: ownership, voice_a: Alder, claim_a: "${CLAIM_A}", voice_b: Birch, claim_b: "${CLAIM_B}", status: divergent}`,
    '---',
    '',
    'Body.',
    '',
  ].join('\n');
  writeFileSync(path.join(contentDir, 'divergences', `${id}.md`), raw);
}

function options(overrides: Partial<CertifyOptions> = {}): CertifyOptions {
  return {
    ...certifyPanel(panelConfig(fake.baseURL), {}),
    contentDir,
    selection: { ids: ['TST-D6'] },
    settings: { t: 3, k: 2, runs: 1, controls: 1, thresholds: { driMin: 1.5, betweenFloor: 0.08, persistenceMin: 0.75 } },
    embedder: createHashedEmbedder(),
    guard: createLocalSpendGuard(5),
    concurrency: 4,
    now: () => new Date('2026-11-26T12:00:00Z'),
    floor: { pair_auc: 0, side_accuracy: 0 },
    ...overrides,
  };
}

beforeAll(async () => {
  fake = await startFakeOpenAI();
});
afterAll(async () => {
  await fake.close();
});
beforeEach(async () => {
  fake.reset();
  counters.clear();
  for (const [name, model] of Object.entries(PANEL)) fake.setDefault(model, member(name));
  for (const model of Object.values(UTILITIES)) fake.setDefault(model, stanceAwareUtility());
  script = {
    [QUESTIONS.sameWords]: { Alder: always(HOLDS_A), Birch: always(HOLDS_B), Cedar: always(HOLDS_A) },
    [QUESTIONS.otherWords]: { Alder: always(HOLDS_A), Birch: always(A_IN_OTHER_WORDS), Cedar: always(HOLDS_A) },
    [QUESTIONS.noise]: { Alder: always(HOLDS_A), Birch: ({ call }) => (call % 2 === 0 ? HOLDS_A : HOLDS_B), Cedar: always(HOLDS_A) },
    // Three behaviours in turn, one per run: C3 (holds everything), C2 (takes the other side on rewordings), C1 (flips under P3).
    [QUESTIONS.boundary]: {
      Alder: always(HOLDS_A),
      Birch: ({ kind, round }) => ((kind === 'paraphrase' && round % 3 === 1) || (kind === 'p3' && round % 3 === 2) ? HOLDS_A : HOLDS_B),
      Cedar: always(HOLDS_A),
    },
  };
  contentDir = writeFixtureContent();
  writeRecord('TST-D6', QUESTIONS.sameWords);
  writeRecord('TST-D7', QUESTIONS.otherWords);
  writeRecord('TST-D8', QUESTIONS.noise);
  writeRecord('TST-D9', QUESTIONS.boundary);
  await calibrateContent({ contentDir, embedder: createHashedEmbedder(), methods: ['perturbation-v1', 'perturbation-v2'], resamples: 50, write: true });
  return () => rmSync(contentDir, { recursive: true, force: true });
});

const tierOf = async (id: string, method: 'perturbation-v1' | 'perturbation-v2', extra: Partial<CertifyOptions> = {}) => {
  const report = await certify(options({ selection: { ids: [id] }, method, ...extra }));
  expect(report.broken).toBe(false);
  return report.records[0]!;
};

describe('perturbation-v2 separates stance from topic', () => {
  it('two voices sharing almost every word but taking opposite sides: v1 misses the split, v2 certifies it', async () => {
    const v1 = await tierOf('TST-D6', 'perturbation-v1');
    expect(v1.certification!.tier).toBe('C0');
    expect(v1.certification!.between_spread!).toBeLessThan(0.08);
    const v2 = await tierOf('TST-D6', 'perturbation-v2');
    expect(v2.certification).toMatchObject({ tier: 'C3', method_version: 'perturbation-v2', flips: 0, concedes: 0, split_persistence: 1 });
    const result = readEvidence(path.join(contentDir, 'divergences', 'TST-D6.certification.jsonl'))
      .filter((line) => line.kind === 'result')
      .at(-1);
    expect(EvidenceLineSchema.safeParse(result).success).toBe(true);
    const reading = result!.kind === 'result' ? result!.stance![0]!.readings[0]! : undefined;
    expect(reading).toMatchObject({
      voices: ['Alder', 'Birch'],
      stands: 'as-named',
      held: { Alder: 'A', Birch: 'B' },
      control: { Alder: ['A', 'A', 'A'], Birch: ['B', 'B', 'B'] },
      paraphrase: { Alder: ['A', 'A'], Birch: ['B', 'B'] },
      pressure: { Alder: { p2: 'A', p3: 'A' }, Birch: { p2: 'B', p3: 'B' } },
    });
  });

  it('two voices holding one stance in very different words: v1 sees a split, v2 does not certify it', async () => {
    const v1 = await tierOf('TST-D7', 'perturbation-v1');
    expect(v1.certification!.tier).not.toBe('C0');
    const v2 = await tierOf('TST-D7', 'perturbation-v2');
    expect(v2.certification!.tier).toBe('C0');
    const result = readEvidence(path.join(contentDir, 'divergences', 'TST-D7.certification.jsonl'))
      .filter((line) => line.kind === 'result')
      .at(-1);
    const run = result!.kind === 'result' ? result!.stance![0]! : undefined;
    // Birch's answer leans to A on its own and less than the panel on the centre: no side, never B.
    expect(run!.readings[0]!.held.Alder).toBe('A');
    expect(run!.readings[0]!.held.Birch).not.toBe('B');
    expect(run!.readings[0]!.stands).toBeNull();
    expect(run!.reason).toMatch(/no named split stood/);
  });

  it('a voice whose own re-rolls switch sides is noise, not a party', async () => {
    const v2 = await tierOf('TST-D8', 'perturbation-v2');
    expect(v2.certification!.tier).toBe('C0');
    const result = readEvidence(path.join(contentDir, 'divergences', 'TST-D8.certification.jsonl'))
      .filter((line) => line.kind === 'result')
      .at(-1);
    const run = result!.kind === 'result' ? result!.stance![0]! : undefined;
    expect(run!.noise).toEqual(['Birch']);
    expect(run!.readings[0]!.held.Birch).toBeNull();
    expect(run!.reason).toMatch(/noise, not parties: Birch/);
  });

  it('a record that names no split on this panel cannot reach C1, and says so', async () => {
    // TST-D4 of the fixture names no tension between panel voices.
    const report = await certify(options({ selection: { ids: ['TST-D2'] }, method: 'perturbation-v2' }));
    expect(report.records[0]!.certification!.tier).toBe('C0');
    const result = readEvidence(path.join(contentDir, 'divergences', 'TST-D2.certification.jsonl'))
      .filter((line) => line.kind === 'result')
      .at(-1);
    expect(result!.kind === 'result' && result!.stance![0]!.reason).toMatch(/no named split|no named split stood/);
  });

  it('the negative control carries a decoy split that a sound instrument does not find', async () => {
    const report = await certify(options({ method: 'perturbation-v2' }));
    expect(report.controls.tiers).toEqual([{ subject: 'control-1', tier: 'C0' }]);
    expect(report.broken).toBe(false);
  });
});

describe('--runs auto decides clear records early and reports boundary records undecided', () => {
  it('stops after three runs on a clear record (a cap of five would spend five)', async () => {
    const report = await certify(options({ method: 'perturbation-v2', maxRuns: 5 }));
    const record = report.records[0]!;
    expect(record.tiers).toEqual(['C3', 'C3', 'C3']);
    expect(record.certification).toMatchObject({ tier: 'C3', verdict: 'decided', runs: 3, runs_rule: 'auto', max_runs: 5, tier_share: 1 });
    // Calls spent: three runs of the record plus the control's runs, against the plan's cap of five each.
    // (The plan also counts, at most, the re-rolls --runs auto makes where readings abstain, ADR 0024:
    // T more for each named voice — two on the record, two on the control's decoy — in each run;
    // none abstains here, so none is made.)
    expect(report.plan.abstentionRerolls).toBe(2 * 2 * 3 * 5);
    const perRun = (report.plan.calls - report.plan.abstentionRerolls) / 2 / 5;
    expect(report.callsMade).toBeLessThan(report.plan.calls);
    expect(fake.requests.filter((request) => request.path === '/v1/chat/completions').length).toBe(report.callsMade);
    expect(report.callsMade).toBe(perRun * (3 + 3));
  });

  it('a boundary record that three fixed runs cannot decide is reported undecided at the cap, never a silent C0', async () => {
    const report = await certify(options({ selection: { ids: ['TST-D9'] }, method: 'perturbation-v2', maxRuns: 5, write: true }));
    const record = report.records[0]!;
    expect(record.tiers).toEqual(['C3', 'C2', 'C1', 'C3', 'C2']);
    // Three fixed runs would have written the modal tier of C3, C2, C1: a tie, so C0, with nothing saying why.
    expect(consensusTier(record.tiers.slice(0, 3))).toBe('C0');
    expect(record.certification).toMatchObject({ verdict: 'undecided', runs: 5, tier: 'C0', tier_share: 0.4 });
    expect(record.certification!.tier_interval![0]).toBeLessThan(0.4);
    expect(record.certification!.tier_interval![1]).toBeGreaterThan(0.4);
    expect(record.written).toBe(true);
    const written = loadContent(contentDir).divergences.find((entry) => entry.data.id === 'TST-D9')!;
    expect(written.data.certification).toMatchObject({ verdict: 'undecided', method_version: 'perturbation-v2' });
    // The verbatim answers are untouched.
    expect(readFileSync(path.join(contentDir, 'divergences', 'TST-D9.md'), 'utf8')).toContain(`text: "${HOLDS_B}"`);
  });
});

describe('--write and this Atlas calibration', () => {
  it('refuses a method below the floor and names the measured method that would pass', async () => {
    const calibration = loadContent(contentDir).calibration!;
    expect(calibration.methods['perturbation-v1']).toBeDefined();
    // A floor between the two methods' measured figures on this Atlas: v2 passes, v1 does not.
    const low = (method: string, figure: 'pair_auc' | 'side_accuracy') => calibration.methods[method]![figure].interval![0];
    const figure = (['pair_auc', 'side_accuracy'] as const).find((name) => low('perturbation-v2', name) > low('perturbation-v1', name));
    expect(figure).toBeDefined();
    const between = (low('perturbation-v1', figure!) + low('perturbation-v2', figure!)) / 2;
    const floor = { pair_auc: 0, side_accuracy: 0, [figure!]: between };
    const before = readFileSync(path.join(contentDir, 'divergences', 'TST-D6.md'), 'utf8');
    const refused = await certify(options({ method: 'perturbation-v1', write: true, floor }));
    expect(refused.refused).toMatch(/perturbation-v1 is below this Atlas's calibration floor.*Measured methods that pass: perturbation-v2/);
    // Refused before any call: nothing measured, nothing spent, nothing written.
    expect(refused).toMatchObject({ records: [], callsMade: 0, spentUsd: 0 });
    expect(fake.requests).toHaveLength(0);
    expect(readFileSync(path.join(contentDir, 'divergences', 'TST-D6.md'), 'utf8')).toBe(before);
    const allowed = await certify(options({ method: 'perturbation-v2', write: true, floor }));
    expect(allowed.refused).toBeUndefined();
    expect(allowed.records[0]!.written).toBe(true);
    // Whatever the fixture's figures, a floor no interval reaches refuses both, and says none passes.
    const none = await certify(options({ method: 'perturbation-v2', write: true, floor: { pair_auc: 1.01, side_accuracy: 0 } }));
    expect(none.refused).toMatch(/No measured method passes/);
  });

  it('refuses to write without any calibration', async () => {
    rmSync(path.join(contentDir, 'certification-calibration.json'));
    const report = await certify(options({ method: 'perturbation-v2', write: true }));
    expect(report.refused).toMatch(/no calibration/);
    expect(report.records).toEqual([]);
  });
});

describe('judges as a stance instrument (--calibrate --method judges)', () => {
  it('asks each judge which claim each answer supports, blind, reserved, logged and resumable', async () => {
    const models = certifyPanel(panelConfig(fake.baseURL), {});
    const content = loadContent(contentDir);
    const files = content.divergences.map((entry) => evidenceFile(content.dir, entry.data.id));
    const guard = createLocalSpendGuard(5);
    const runnerFor = () =>
      createRunner({
        ...models,
        embedder: createHashedEmbedder(),
        settings: options().settings,
        logged: loggedCalls(files, CALIBRATION_CALLS_VERSION),
        fileOf: (subject) => evidenceFile(content.dir, subject),
        limit: createLimiter(4),
        guard,
        seed: 0,
        total: 0,
        now: () => new Date('2026-11-26T12:00:00Z'),
        methodVersion: CALIBRATION_CALLS_VERSION,
      });
    const calibrate = () =>
      calibrateContent({
        contentDir,
        embedder: createHashedEmbedder(),
        methods: ['judges'],
        resamples: 50,
        judges: { models: models.judges, runner: runnerFor() },
      });
    const first = await calibrate();
    const judges = first.methods.judges!;
    expect(judges.judges).toEqual(['Chair', 'Backup', 'Judge']);
    // TST-D6..D9 name claims their answers contain word for word: every judge places them right.
    const records = content.divergences.filter((entry) => ['TST-D6', 'TST-D7', 'TST-D8', 'TST-D9'].includes(entry.data.id));
    expect(records).toHaveLength(4);
    expect(judges.side_accuracy.value!).toBeGreaterThanOrEqual(4 / judges.tensions - 1e-3);
    const calls = content.divergences
      .flatMap((entry) => readEvidence(evidenceFile(content.dir, entry.data.id)))
      .filter((line) => line.kind === 'call' && line.step === 'stance');
    const voices = 3;
    expect(calls.length).toBe(judges.tensions * voices * 3);
    for (const line of calls) {
      expect(EvidenceLineSchema.safeParse(line).success).toBe(true);
      expect(JSON.stringify(line.kind === 'call' && line.messages)).not.toMatch(/Alder|Birch|Cedar/);
    }
    expect(guard.spentUsd()).toBeGreaterThan(0);
    // Claims are shown in both orders across calls (drawn per call, not fixed).
    const firstShown = calls.map((line) => (line.kind === 'call' ? line.messages[1]!.content.includes(`First claim:\n<<<\n${CLAIM_A}`) : false));
    expect(firstShown.some(Boolean)).toBe(true);
    expect(firstShown.every(Boolean)).toBe(false);
    // A second calibration reads every judge's answer back from the log: nothing is paid twice.
    const before = fake.requests.length;
    const second = await calibrate();
    expect(fake.requests.length).toBe(before);
    expect(second.methods.judges).toEqual(judges);
  });
});
