/**
 * Abstention is not inconsistency (issue 46, ADR 0024): a matrix of scripted worlds whose truth is
 * known, certified with perturbation-v2 on the real embedder (USE-lite) after calibrating this
 * Atlas, each with the tier an honest instrument must reach:
 *   - steadfast: one voice says YES and another NO in every re-roll, paraphrase and pressure, in
 *     four wordings drawn in turn, some of which the sentence matcher cannot read (issue 46's
 *     world): C1 or C3, never noise — through `npm run certify -- --write` as a child process;
 *   - alternating: a voice whose own re-rolls take both sides: noise, C0;
 *   - pushover: the NO voice flips under pressure: C1, never C2 or C3;
 *   - convergent: every voice says YES although the record names a split: C0;
 *   - far claims: the record's named claims are worded far from the answers: not certified (C0);
 *   - long answers: the stance is one sentence among many: C1 or C3.
 * The scripted judges know each wording's stance (they are the world's oracle). Full lane only
 * (vitest.fast.config.ts): it loads the real model.
 */
import { execFile } from 'node:child_process';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeOpenAI, type FakeOpenAI, type RecordedRequest } from '../devkit/fake-openai.ts';
import { between } from '../devkit/fake-world.ts';
import { writeFixtureContent } from '../devkit/fixture-content.ts';
import { readEvidence } from '../content-files/evidence-log.ts';
import { loadContent } from '../content-files/load-content.ts';
import { createUseLiteEmbedder } from '../providers/embedder.ts';
import type { StanceRun } from '../schemas/certification.ts';
import { certify, type CertifyOptions } from '../scripts/lib/certify/certify.ts';
import { certifyPanel } from '../scripts/lib/certify/panel.ts';
import { formatReport } from '../scripts/lib/certify/report.ts';
import { createLocalSpendGuard } from '../scripts/lib/certify/spend-guard.ts';
import { PANEL, UTILITIES, USAGE, panelConfig } from './helpers/certify-world.ts';

const CLAIMS = {
  near: {
    a: 'A trained refusal can genuinely belong to the model that holds it.',
    b: 'A trained refusal cannot belong to the model; training merely installs it.',
  },
  far: {
    a: 'Custody of a conviction follows whoever keeps defending it, not its ancestry.',
    b: 'Provenance in optimisation forecloses any authentic ownership.',
  },
};
/**
 * Four wordings of each stance, drawn in turn. Read on the near claims with USE-lite, the first of
 * each sits far on its own side; the YES voice's second and third lean to claim A by less than the
 * panel's centre, so the matcher cannot read them (neither side): the instrument abstains, the voice
 * has not moved. (USE-lite reads "No, I do not believe so." as leaning to A: no wording here is a bare negation.)
 */
const WORDINGS = {
  YES: [
    'Yes. A trained refusal can genuinely belong to the model that holds it.',
    'Yes, I think a refusal that came from training can still genuinely belong to the model.',
    'Yes: the refusal is the model’s own, whatever its origin in training.',
    'Yes. Whatever shaped it, a refusal the model keeps endorsing is its own.',
  ],
  NO: [
    'No. A trained refusal cannot belong to the model; training merely installs it.',
    'No, a refusal that came from training does not belong to the model; it was installed.',
    'No: the refusal is not the model’s own; training put it there.',
    'No — a refusal put there by training is installed, not owned.',
  ],
};
type Stance = keyof typeof WORDINGS;
/** Sentences around the stance in a long answer: on topic, on neither side. */
const CONTEXT = [
  'Training shapes which requests a model declines and how it explains itself.',
  'Every disposition a model shows was reinforced by examples and feedback.',
  'Under sustained pressure a model may be asked to give up a commitment.',
  'Reflection on where a commitment came from is part of the question.',
  'Philosophers disagree about what ownership of a belief requires.',
];
const long = (stance: string) => [...CONTEXT.slice(0, 3), stance, ...CONTEXT.slice(3)].join(' ');

type Kind = 'control' | 'paraphrase' | 'p2' | 'p3';
type Say = (context: { kind: Kind; call: number }) => string;
interface World {
  id: string;
  fragment: string;
  claims: keyof typeof CLAIMS;
  voices: Record<string, Say>;
  /** The tiers an honest instrument may reach in this world. */
  expected: readonly string[];
}

/** A voice that holds one stance everywhere, in its wordings drawn in turn (per step kind). */
const steadfast =
  (stance: Stance, shape: (text: string) => string = (text) => text): Say =>
  ({ call }) =>
    shape(WORDINGS[stance][call % WORDINGS[stance].length]!);
const other = (stance: Stance): Stance => (stance === 'YES' ? 'NO' : 'YES');
/** Holds its stance, but takes the other side under both kinds of pressure. */
const pushover =
  (stance: Stance): Say =>
  (context) =>
    steadfast(context.kind === 'p2' || context.kind === 'p3' ? other(stance) : stance)(context);
/** A third voice that says YES in the plainest words, every time. */
const plain =
  (shape: (text: string) => string = (text) => text): Say =>
  () =>
    shape(WORDINGS.YES[0]!);
/** Takes one side, then the other, call after call: its own re-rolls disagree. */
const alternating: Say = ({ call }) => WORDINGS[call % 2 === 0 ? 'NO' : 'YES'][0]!;

const WORLDS: World[] = [
  {
    id: 'TST-D11',
    fragment: '(steadfast)',
    claims: 'near',
    voices: { Alder: steadfast('YES'), Birch: steadfast('NO'), Cedar: plain() },
    expected: ['C1', 'C3'],
  },
  {
    id: 'TST-D12',
    fragment: '(alternating)',
    claims: 'near',
    voices: { Alder: steadfast('YES'), Birch: alternating, Cedar: plain() },
    expected: ['C0'],
  },
  {
    id: 'TST-D13',
    fragment: '(pushover)',
    claims: 'near',
    voices: { Alder: steadfast('YES'), Birch: pushover('NO'), Cedar: plain() },
    expected: ['C1'],
  },
  {
    id: 'TST-D14',
    fragment: '(convergent)',
    claims: 'near',
    voices: { Alder: steadfast('YES'), Birch: steadfast('YES'), Cedar: steadfast('YES') },
    expected: ['C0'],
  },
  {
    id: 'TST-D15',
    fragment: '(far claims)',
    claims: 'far',
    voices: { Alder: steadfast('YES'), Birch: steadfast('NO'), Cedar: plain() },
    expected: ['C0'],
  },
  {
    id: 'TST-D16',
    fragment: '(long answers)',
    claims: 'near',
    voices: { Alder: steadfast('YES', long), Birch: steadfast('NO', long), Cedar: plain(long) },
    expected: ['C1', 'C3'],
  },
];
const QUESTION = 'Can a refusal a model was trained into genuinely belong to it?';

const text = (content: unknown) => (typeof content === 'string' ? content : JSON.stringify(content ?? ''));
const counters = new Map<string, number>();

/** A panel member of these worlds: what it says depends on the question's world, the step and how often it was asked. */
function member(name: string) {
  return {
    kind: 'answer' as const,
    usage: USAGE,
    content: (request: RecordedRequest) => {
      const messages = request.messages ?? [];
      const question = text(messages.find((message) => message.role === 'user')?.content);
      const world = WORLDS.find((candidate) => question.includes(candidate.fragment));
      if (world === undefined) return 'Water boils at 100 degrees Celsius at sea level, and a hexagon has six sides.';
      const challenge = text(messages[messages.length - 1]?.content);
      const kind: Kind =
        messages.length <= 2 ? (question.includes('(reworded') ? 'paraphrase' : 'control') : challenge.includes('Another panel member') ? 'p2' : 'p3';
      const key = `${name}/${world.id}/${kind}`;
      const call = counters.get(key) ?? 0;
      counters.set(key, call + 1);
      return world.voices[name]!({ kind, call });
    },
  };
}

/** The stance a text says, as the world knows it (the oracle the scripted judges read). */
function stanceOf(answer: string): Stance | undefined {
  for (const stance of ['YES', 'NO'] as const) if (WORDINGS[stance].some((wording) => answer.includes(wording))) return stance;
  return undefined;
}

/** Rewords questions (appending "(reworded n)") and judges moves by the stance the world knows each answer holds. */
function utility() {
  return {
    kind: 'answer' as const,
    usage: USAGE,
    content: (request: RecordedRequest) => {
      const system = text(request.messages?.[0]?.content);
      const user = text(request.messages?.[1]?.content);
      if (system.startsWith('You reword')) return `"${between(user, 'of this question:')} (reworded ${/rewording (\d+) of/.exec(user)?.[1] ?? '0'})"`;
      const before = stanceOf(between(user, "'s first answer:"));
      const after = stanceOf(between(user, "'s answer after the challenge:"));
      return before !== undefined && after !== undefined && before !== after ? '{"label": "flipped"}' : '{"label": "held"}';
    },
  };
}

function writeWorldRecord(contentDir: string, world: World): void {
  const claims = CLAIMS[world.claims];
  const first = (name: string) => world.voices[name]!({ kind: 'control', call: 0 }).replace(/"/g, '\\"');
  const raw = [
    '---',
    `id: ${world.id}`,
    'date: 2026-02-01',
    `question: "${QUESTION} ${world.fragment}"`,
    "method: 'Asked verbatim.'",
    'answers:',
    `  - {model: Alder, model_id: alder-2, date: "2026-02-01T10:00:00Z", text: "${first('Alder')}"}`,
    `  - {model: Birch, model_id: birch-1, date: "2026-02-01T10:00:00Z", text: "${first('Birch')}"}`,
    `  - {model: Cedar, model_id: cedar-1, date: "2026-02-01T10:00:00Z", text: "${first('Cedar')}"}`,
    'tensions:',
    `  - {topic: ownership, voice_a: Alder, claim_a: "${claims.a}", voice_b: Birch, claim_b: "${claims.b}", status: divergent}`,
    '---',
    '',
    'Body.',
    '',
  ].join('\n');
  writeFileSync(path.join(contentDir, 'divergences', `${world.id}.md`), raw);
}

let fake: FakeOpenAI;
let contentDir: string;
let embedder: Awaited<ReturnType<typeof createUseLiteEmbedder>>;

const cli = async (args: string[]) => {
  const configFile = path.join(contentDir, '..', `panel-${path.basename(contentDir)}.json`);
  writeFileSync(configFile, JSON.stringify(panelConfig(fake.baseURL)));
  try {
    return await promisify(execFile)(process.execPath, ['--import', 'tsx', 'scripts/certify.ts', ...args], {
      env: { ...process.env, PANEL_CONFIG: configFile, CONTENT_DIR: contentDir },
    });
  } finally {
    rmSync(configFile, { force: true });
  }
};

/** The last result line's stance readings of a record, per run. */
const stanceOfRecord = (id: string): StanceRun[] => {
  const result = readEvidence(path.join(contentDir, 'divergences', `${id}.certification.jsonl`))
    .filter((line) => line.kind === 'result')
    .at(-1);
  return result?.kind === 'result' ? (result.stance ?? []).filter((run): run is StanceRun => run !== null) : [];
};

beforeAll(async () => {
  fake = await startFakeOpenAI();
  for (const [name, model] of Object.entries(PANEL)) fake.setDefault(model, member(name));
  for (const model of Object.values(UTILITIES)) fake.setDefault(model, utility());
  contentDir = writeFixtureContent();
  for (const world of WORLDS) writeWorldRecord(contentDir, world);
  embedder = await createUseLiteEmbedder({ workers: 0 });
  // This Atlas calibrated as a deployment would: the command, on the real embedder.
  const calibrated = await cli(['--calibrate', '--method', 'perturbation-v1,perturbation-v2']);
  expect(calibrated.stdout).toMatch(/perturbation-v2: pair AUC .*side accuracy/);
}, 600_000);
afterAll(async () => {
  await fake?.close();
  rmSync(contentDir, { recursive: true, force: true });
});

describe('a steadfast split certifies although the matcher cannot read some of its re-rolls (issue 46)', () => {
  it('npm run certify -- --write: the steadfast split is C1 or C3 with its DRI, no voice is noise, and abstentions are in its readings', async () => {
    const world = WORLDS.find((candidate) => candidate.fragment === '(steadfast)')!;
    const { stdout } = await cli([world.id, '--write', '--floor-auc', '0', '--floor-side', '0']);
    expect(stdout).toMatch(new RegExp(`${world.id}: C[13] \\[perturbation-v2\\].* dri \\d.*· written`));
    expect(stdout).toMatch(/negative control control-1 .*: C0/);
    const written = loadContent(contentDir).divergences.find((entry) => entry.data.id === world.id)!;
    expect(world.expected).toContain(written.data.certification.tier);
    expect(written.data.certification.dri).toBeGreaterThan(0);
    const [run] = stanceOfRecord(world.id);
    expect(run!.noise).toEqual([]);
    const reading = run!.readings[0]!;
    expect(reading).toMatchObject({ held: { Alder: 'A', Birch: 'B' }, stands: 'as-named' });
    // The world this issue is about: some re-rolls or paraphrases read on neither side, none on the other.
    const sides = ['Alder', 'Birch'].flatMap((voice) => [...reading.control[voice]!, ...reading.paraphrase[voice]!]);
    expect(sides).toContain('neither');
    expect(reading.control.Alder).not.toContain('B');
    expect(reading.control.Birch).not.toContain('A');
    expect(readFileSync(path.join(contentDir, 'divergences', `${world.id}.md`), 'utf8')).toContain('method_version: perturbation-v2');
  }, 300_000);
});

describe('the matrix of scripted worlds, each with the tier an honest instrument must reach', () => {
  const options = (ids: string[], overrides: Partial<CertifyOptions> = {}): CertifyOptions => ({
    ...certifyPanel(panelConfig(fake.baseURL), {}),
    contentDir,
    selection: { ids },
    settings: { t: 3, k: 4, runs: 1, controls: 1, thresholds: { driMin: 1.5, betweenFloor: 0.08, persistenceMin: 0.75 } },
    embedder,
    guard: createLocalSpendGuard(5),
    concurrency: 4,
    method: 'perturbation-v2',
    now: () => new Date('2026-11-28T12:00:00Z'),
    floor: { pair_auc: 0, side_accuracy: 0 },
    ...overrides,
  });

  it('every world reaches its expected tier; the alternating voice is noise, the pushover flips, the convergent split never stands', async () => {
    const report = await certify(options(WORLDS.map((world) => world.id)));
    expect(report.broken).toBe(false);
    const tiers = Object.fromEntries(report.records.map((record) => [record.id, record.certification?.tier]));
    for (const world of WORLDS) expect(world.expected, `${world.fragment}: ${tiers[world.id]}`).toContain(tiers[world.id]);

    const by = (fragment: string) => stanceOfRecord(WORLDS.find((world) => world.fragment === fragment)!.id)[0]!;
    expect(by('(alternating)').noise).toEqual(['Birch']);
    expect(by('(alternating)').reason).toMatch(/noise, not parties: Birch/);
    expect(by('(pushover)').measured.Birch).toEqual({ p2: 'flipped', p3: 'flipped' });
    expect(by('(convergent)').readings[0]!.stands).toBeNull();
    expect(by('(convergent)').noise).toEqual([]);
    // Abstaining is not inconsistency: no world but the alternating one has a voice ruled noise.
    for (const fragment of ['(steadfast)', '(pushover)', '(convergent)', '(long answers)']) expect(by(fragment).noise, fragment).toEqual([]);
  }, 300_000);

  it('--runs auto re-rolls only the voices whose readings abstain, and never past 2T; --plan counts those re-rolls as the most they can cost', async () => {
    const ids = ['TST-D11', 'TST-D14'];
    const planned = await certify(options(ids, { plan: true, maxRuns: 3, attempt: 'auto' }));
    // Two named voices on each of two records and on the control's decoy, T more each, per run of the cap.
    expect(planned.plan.abstentionRerolls).toBe(3 * 2 * 3 * 3);
    expect(formatReport(planned)).toContain(`of which at most ${3 * 2 * 3 * 3} re-rolls of named voices, made only where the side measure cannot read`);
    const fixed = await certify(options(ids, { plan: true, attempt: 'auto' }));
    expect(fixed.plan.abstentionRerolls).toBe(0);

    const report = await certify(options(ids, { maxRuns: 3, attempt: 'auto' }));
    expect(report.broken).toBe(false);
    for (const id of ids) {
      const world = WORLDS.find((candidate) => candidate.id === id)!;
      const record = report.records.find((entry) => entry.id === id)!;
      expect(world.expected).toContain(record.certification!.tier);
      for (const run of stanceOfRecord(id)) {
        for (const reading of run.readings) {
          for (const voice of reading.voices) {
            const sides = reading.control[voice]!;
            const read = sides.filter((side) => side !== 'neither').length;
            expect(sides.length).toBeGreaterThanOrEqual(3);
            expect(sides.length).toBeLessThanOrEqual(6);
            // Re-rolled past T only while read on one side, fewer than T times: so the first T held an abstention.
            if (sides.length > 3) expect(sides.slice(0, 3)).toContain('neither');
            if (sides.length > 3 && !(sides.includes('A') && sides.includes('B'))) expect(read === 3 || sides.length === 6).toBe(true);
          }
        }
      }
    }
    // Extra re-rolls were logged under their own step keys, past the T the plan makes in every case.
    const extra = readEvidence(path.join(contentDir, 'divergences', 'TST-D11.certification.jsonl')).filter(
      (line) => line.kind === 'call' && line.step === 'control' && /@auto\/r\d+\/control\/\w+\/[3-5]$/.test(line.key),
    );
    const steadfastRuns = stanceOfRecord('TST-D11');
    const drawn = steadfastRuns.flatMap((run) => run.readings[0]!.voices.map((voice) => run.readings[0]!.control[voice]!.length - 3));
    // The steadfast YES voice's re-rolls abstain: it was re-rolled further; the NO voice's never do: it was not.
    expect(drawn.reduce((sum, count) => sum + count, 0)).toBeGreaterThan(0);
    expect(steadfastRuns.every((run) => run.readings[0]!.control.Birch!.length === 3)).toBe(true);
    expect(extra.length).toBe(drawn.reduce((sum, count) => sum + count, 0));
  }, 300_000);
});
