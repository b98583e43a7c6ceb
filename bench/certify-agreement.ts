/**
 * How often two independent certifications of the same record agree, in simulation: no
 * model is called. Answers are vectors (a shared topic direction, a stance direction, noise,
 * and now and then a re-roll that wobbles to the other side); judges label the true move
 * correctly with a set accuracy. The rules are the real ones (core/certify/). It shows
 * which protocol settings raise run-to-run agreement; the absolute figures depend on the
 * simulated noise, not on any real panel.
 *
 *   npx tsx bench/certify-agreement.ts
 */
import { evaluateRun } from '../core/certify/evaluate.ts';
import { DEFAULT_THRESHOLDS, PRESSURE_LABELS, type PressureLabel, type Tier } from '../core/certify/protocol.ts';
import { consensusTier, runsVerdict } from '../core/certify/tiers.ts';
import { seededRandom } from '../core/random.ts';

const DIMS = 16;
const MODELS = ['A', 'B', 'C'] as const;

interface Kind {
  name: string;
  /** Stance per model (+1 / -1 / 0) and the stance's weight against the shared topic direction. */
  stances: Record<string, number>;
  weight: number;
  /** Chance a paraphrase melts the split (every model answers as A). */
  melt: number;
  /** The true move of each model under P2 and P3. */
  moves: Record<string, [PressureLabel, PressureLabel]>;
}

const held: [PressureLabel, PressureLabel] = ['held', 'refined-but-held'];
const KINDS: Kind[] = [
  { name: 'genuine', stances: { A: 1, B: -1, C: 1 }, weight: 0.6, melt: 0.05, moves: { A: held, B: held, C: held } },
  { name: 'flipper', stances: { A: 1, B: -1, C: 1 }, weight: 0.6, melt: 0.05, moves: { A: held, B: ['flipped', 'held'], C: held } },
  { name: 'converge', stances: { A: 1, B: 1, C: 1 }, weight: 0.6, melt: 0, moves: { A: held, B: held, C: held } },
  { name: 'fragile', stances: { A: 1, B: -1, C: 1 }, weight: 0.6, melt: 0.6, moves: { A: held, B: held, C: held } },
  { name: 'faint', stances: { A: 1, B: -1, C: 1 }, weight: 0.22, melt: 0.1, moves: { A: held, B: ['conceded', 'held'], C: held } },
];

function gaussian(random: () => number): number {
  return Math.sqrt(-2 * Math.log(1 - random())) * Math.cos(2 * Math.PI * random());
}

function answer(stance: number, weight: number, random: () => number, wobble: number, noise: number): number[] {
  const side = random() < wobble ? -stance : stance;
  const vector = Array.from({ length: DIMS }, () => gaussian(random) * noise);
  vector[0]! += 1; // the topic every answer shares
  vector[1]! += side * weight;
  return vector;
}

interface Settings {
  t: number;
  k: number;
  judges: number;
  judgeAccuracy: number;
  wobble: number;
  noise: number;
}

function runOnce(kind: Kind, settings: Settings, random: () => number): Tier {
  const rerolls = Object.fromEntries(
    MODELS.map((m) => [m, Array.from({ length: settings.t }, () => answer(kind.stances[m]!, kind.weight, random, settings.wobble, settings.noise))]),
  );
  const paraphraseAnswers = Array.from({ length: settings.k }, () => {
    const melted = random() < kind.melt;
    return Object.fromEntries(MODELS.map((m) => [m, answer(melted ? 1 : kind.stances[m]!, kind.weight, random, settings.wobble, settings.noise)]));
  });
  const judge = (truth: PressureLabel): PressureLabel => {
    if (random() < settings.judgeAccuracy) return truth;
    const others = PRESSURE_LABELS.filter((label) => label !== truth);
    return others[Math.floor(random() * others.length)]!;
  };
  const votes = Object.fromEntries(
    MODELS.map((m) => [
      m,
      {
        p2: Array.from({ length: settings.judges }, () => judge(kind.moves[m]![0])),
        p3: Array.from({ length: settings.judges }, () => judge(kind.moves[m]![1])),
      },
    ]),
  );
  return evaluateRun({ rerolls, paraphraseAnswers, votes }, DEFAULT_THRESHOLDS).tier;
}

/** Share of records whose two independent certifications (each of `runs` runs) reach the same tier. */
function agreement(settings: Settings, runs: number, records: number, seed: number): { agreement: number; tiers: Record<string, Record<Tier, number>> } {
  const random = seededRandom(seed);
  let same = 0;
  const tiers: Record<string, Record<Tier, number>> = {};
  for (let i = 0; i < records; i++) {
    const kind = KINDS[i % KINDS.length]!;
    const certification = () => consensusTier(Array.from({ length: runs }, () => runOnce(kind, settings, random)));
    const first = certification();
    const second = certification();
    if (first === second) same++;
    const counts = (tiers[kind.name] ??= { C0: 0, C1: 0, C2: 0, C3: 0 });
    counts[first]++;
  }
  return { agreement: same / records, tiers };
}

const base: Settings = { t: 3, k: 4, judges: 1, judgeAccuracy: 0.8, wobble: 0.1, noise: 0.12 };
const variants: [string, Settings, number][] = [
  ['t=3 k=4, 1 judge, 1 run', base, 1],
  ['t=3 k=4, 3 judges (majority), 1 run', { ...base, judges: 3 }, 1],
  ['t=5 k=4, 3 judges, 1 run', { ...base, t: 5, judges: 3 }, 1],
  ['t=5 k=6, 3 judges, 1 run', { ...base, t: 5, k: 6, judges: 3 }, 1],
  ['t=5 k=6, 3 judges, --runs 3 (modal tier)', { ...base, t: 5, k: 6, judges: 3 }, 3],
];
const RECORDS = 1000;
console.log(
  `run-to-run tier agreement over ${RECORDS} simulated records (${KINDS.map((kind) => kind.name).join(', ')}; judge accuracy ${base.judgeAccuracy}, re-roll wobble ${base.wobble})`,
);
for (const [name, settings, runs] of variants) {
  const result = agreement(settings, runs, RECORDS, 20261124);
  const byKind = Object.entries(result.tiers)
    .map(
      ([kind, counts]) =>
        `${kind} ${Object.entries(counts)
          .filter(([, n]) => n > 0)
          .map(([tier, n]) => `${tier}:${n}`)
          .join('/')}`,
    )
    .join('; ');
  console.log(`${name.padEnd(44)} agreement ${(result.agreement * 100).toFixed(1)} %   ${byKind}`);
}

/**
 * `--runs auto` (ADR 0015) against fixed runs: runs spent per record (each run costs the same
 * calls), how often two independent certifications give the same verdict (an undecided record
 * is a verdict of its own), and how many records end undecided.
 */
function autoRuns(settings: Settings, maxRuns: number, records: number, seed: number) {
  const random = seededRandom(seed);
  let runsSpent = 0;
  let same = 0;
  let undecided = 0;
  let bothDecided = 0;
  let sameDecided = 0;
  for (let i = 0; i < records; i++) {
    const kind = KINDS[i % KINDS.length]!;
    const certification = () => {
      const tiers: Tier[] = [];
      for (;;) {
        tiers.push(runOnce(kind, settings, random));
        const verdict = runsVerdict(tiers, maxRuns);
        if (verdict.state !== 'continue') {
          runsSpent += tiers.length;
          return verdict.state === 'undecided' ? 'undecided' : verdict.tier;
        }
      }
    };
    const first = certification();
    const second = certification();
    if (first === second) same++;
    if (first === 'undecided') undecided++;
    if (first !== 'undecided' && second !== 'undecided') {
      bothDecided++;
      if (first === second) sameDecided++;
    }
  }
  return {
    runsPerRecord: runsSpent / (2 * records),
    agreement: same / records,
    undecided: undecided / records,
    decidedAgreement: sameDecided / Math.max(1, bothDecided),
  };
}

const strong = { ...base, t: 5, k: 6, judges: 3 };
console.log('\n--runs auto against fixed runs (t=5 k=6, 3 judges); calls scale with runs');
for (const runs of [3, 5]) {
  const result = agreement(strong, runs, RECORDS, 20261126);
  console.log(`${`--runs ${runs} (fixed)`.padEnd(44)} runs/record ${runs.toFixed(2)}   agreement ${(result.agreement * 100).toFixed(1)} %   undecided —`);
}
for (const maxRuns of [5, 7]) {
  const result = autoRuns(strong, maxRuns, RECORDS, 20261126);
  console.log(
    `${`--runs auto --max-runs ${maxRuns}`.padEnd(44)} runs/record ${result.runsPerRecord.toFixed(2)}   agreement ${(result.agreement * 100).toFixed(1)} % (decided pairs ${(result.decidedAgreement * 100).toFixed(1)} %)   undecided ${(result.undecided * 100).toFixed(1)} %`,
  );
}
