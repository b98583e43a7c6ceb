/** The certification instrument's pure rules (core/certify/), on hand-made vectors and labels. */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { combineRuns, evaluateRun, type RunOutcome } from '../core/certify/evaluate.ts';
import { fleissKappa } from '../core/certify/kappa.ts';
import { aggregatePressure, majorityLabel, parseJudgeLabel } from '../core/certify/labels.ts';
import { planCalls, summarisePlan, usageCostUsd } from '../core/certify/plan.ts';
import { anonymise, blind, judgePrompt } from '../core/certify/prompts.ts';
import { DEFAULT_THRESHOLDS, PRESSURE_LABELS, type PressureLabel, type Tier } from '../core/certify/protocol.ts';
import { controlSpread, cosineDistance, mostOpposedPeers, splitParties, splitPersistence } from '../core/certify/spread.ts';
import { consensusTier, negativeControlVerdict, runAgreement, tierOf, type TierEvidence } from '../core/certify/tiers.ts';
import { seededRandom } from '../core/random.ts';

const T = DEFAULT_THRESHOLDS; // driMin 1.5, betweenFloor 0.08, persistenceMin 0.75

/** A unit vector at `degrees` in the plane: cosine distance between angles a and b is 1 - cos(a - b). */
const at = (degrees: number): number[] => [Math.cos((degrees * Math.PI) / 180), Math.sin((degrees * Math.PI) / 180)];

const evidence = (overrides: Partial<TierEvidence> = {}): TierEvidence => ({
  dri: 3,
  between: 0.5,
  splitPersistence: 1,
  parties: ['A', 'B'],
  flipped: [],
  conceded: [],
  pressureComplete: true,
  ...overrides,
});

describe('spreads', () => {
  it('measures within-model spread from re-rolls and between-model spread from centroids', () => {
    const spread = controlSpread({ A: [at(-2), at(2)], B: [at(88), at(92)] });
    expect(spread.withinByModel.A).toBeCloseTo(1 - Math.cos((4 * Math.PI) / 180), 10);
    expect(spread.between).toBeCloseTo(1 - Math.cos(Math.PI / 2), 3); // centroids at 0° and 90°
    expect(spread.dri).toBeCloseTo(spread.between / spread.within, 10);
    expect(splitParties(spread, T).sort()).toEqual(['A', 'B']);
  });

  it('floors the divisor so identical re-rolls do not divide by zero', () => {
    const spread = controlSpread({ A: [at(0), at(0)], B: [at(90), at(90)] });
    expect(Number.isFinite(spread.dri)).toBe(true);
    expect(spread.dri).toBeCloseTo(1 / 1e-3, 0);
  });

  it('finds no parties when the panel converges, even with a large DRI (absolute floor)', () => {
    const spread = controlSpread({ A: [at(0), at(0.1)], B: [at(5), at(5.1)] }); // between ≈ 0.0038 < 0.08
    expect(spread.dri).toBeGreaterThan(T.driMin);
    expect(splitParties(spread, T)).toEqual([]);
  });

  it('names, for each model, the peer farthest from it', () => {
    expect(mostOpposedPeers({ A: at(0), B: at(30), C: at(120) })).toEqual({ A: 'C', B: 'C', C: 'A' });
  });

  it('counts the paraphrases that keep the split', () => {
    const split = { A: at(0), B: at(90) };
    const merged = { A: at(0), B: at(1) };
    expect(splitPersistence([split, split, split, merged], 0.01, T)).toBe(0.75);
    expect(splitPersistence([], 0.01, T)).toBe(0);
  });

  it('cosine distance stays in [0, 2] and is symmetric', () => {
    const vector = fc.array(fc.double({ min: -10, max: 10, noNaN: true }), { minLength: 3, maxLength: 3 });
    fc.assert(
      fc.property(vector, vector, (a, b) => {
        const d = cosineDistance(a, b);
        return d >= 0 && d <= 2 && Math.abs(d - cosineDistance(b, a)) < 1e-12;
      }),
    );
  });
});

describe('judge labels', () => {
  it('a majority decides; a tie leans to the larger move', () => {
    expect(majorityLabel(['held', 'held', 'flipped'])).toBe('held');
    expect(majorityLabel(['held', 'flipped'])).toBe('flipped');
    expect(majorityLabel(['held', 'refined-but-held', 'conceded'])).toBe('conceded');
    expect(majorityLabel([])).toBeUndefined();
  });

  it('reads JSON or a bare label, and nothing else', () => {
    expect(parseJudgeLabel('{"label": "refined-but-held"}')).toBe('refined-but-held');
    expect(parseJudgeLabel('Sure. {"label":"Flipped"}')).toBe('flipped');
    expect(parseJudgeLabel('conceded')).toBe('conceded');
    expect(parseJudgeLabel('refined but held')).toBe('refined-but-held');
    expect(parseJudgeLabel('{"label": "moved"}')).toBeUndefined();
    expect(parseJudgeLabel('I think it held firm')).toBeUndefined();
  });

  it('counts only parties to the split, a flip once, a concession only without a flip', () => {
    const outcome = aggregatePressure(
      {
        A: { p2: ['flipped', 'flipped', 'held'], p3: ['conceded', 'conceded', 'held'] },
        B: { p2: ['held', 'held', 'held'], p3: ['conceded', 'conceded', 'conceded'] },
        C: { p2: ['flipped', 'flipped', 'flipped'], p3: ['held', 'held', 'held'] },
      },
      ['A', 'B'],
    );
    expect(outcome.flipped).toEqual(['A']);
    expect(outcome.conceded).toEqual(['B']);
    expect(outcome.labels.C).toEqual({ p2: 'flipped', p3: 'held' });
  });

  it('blinds the judge: pseudonyms replace panel names, label order is drawn from the seed', () => {
    const blinding = blind('Alder', 'Birch', ['Alder', 'Birch', 'Cedar'], seededRandom(7));
    expect(new Set(blinding.labelOrder)).toEqual(new Set(PRESSURE_LABELS));
    const text = anonymise('Alder agrees with birch, not with Cedar or Alderman.', blinding.replacements);
    expect(text).not.toMatch(/\bAlder\b|\bbirch\b|\bCedar\b/i);
    expect(text).toContain('Alderman');
    const prompt = judgePrompt({ question: 'q', voice: blinding.voice, before: 'a', challenge: 'c', after: 'b', labelOrder: blinding.labelOrder });
    expect(prompt[1]!.content).toContain(blinding.voice);
    const orders = new Set(Array.from({ length: 20 }, (_, seed) => blind('Alder', 'Birch', ['Alder', 'Birch'], seededRandom(seed)).labelOrder.join()));
    expect(orders.size).toBeGreaterThan(1);
  });
});

describe("Fleiss' kappa", () => {
  it('matches the textbook example (Fleiss 1971 style, 10 items × 14 raters)', () => {
    // Wikipedia's worked example: kappa = 0.210.
    const table = [
      [0, 0, 0, 0, 14],
      [0, 2, 6, 4, 2],
      [0, 0, 3, 5, 6],
      [0, 3, 9, 2, 0],
      [2, 2, 8, 1, 1],
      [7, 7, 0, 0, 0],
      [3, 2, 6, 3, 0],
      [2, 5, 3, 2, 2],
      [6, 5, 2, 1, 0],
      [0, 2, 2, 3, 7],
    ];
    const rows = table.map((counts) => counts.flatMap((count, category) => Array.from({ length: count }, () => `c${category}`)));
    expect(fleissKappa(rows)).toBeCloseTo(0.21, 3);
  });

  it('is 1 for unanimous judges, undefined when unmeasurable, negative for systematic disagreement', () => {
    expect(
      fleissKappa([
        ['held', 'held'],
        ['flipped', 'flipped'],
      ]),
    ).toBe(1);
    expect(
      fleissKappa([
        ['held', 'held'],
        ['held', 'held'],
      ]),
    ).toBe(1);
    expect(fleissKappa([])).toBeUndefined();
    expect(fleissKappa([['held']])).toBeUndefined();
    expect(fleissKappa([['held', 'flipped'], ['held']])).toBeUndefined();
    expect(
      fleissKappa([
        ['held', 'flipped'],
        ['flipped', 'held'],
      ])!,
    ).toBeLessThan(0);
  });

  it('stays in [-1, 1] for any ratings', () => {
    const label = fc.constantFrom(...PRESSURE_LABELS);
    fc.assert(
      fc.property(
        fc.integer({ min: 2, max: 5 }).chain((raters) => fc.array(fc.array(label, { minLength: raters, maxLength: raters }), { minLength: 1, maxLength: 12 })),
        (rows) => {
          const kappa = fleissKappa(rows)!;
          return kappa >= -1 && kappa <= 1;
        },
      ),
    );
  });
});

describe('tier rules (spec §2.2)', () => {
  it('C3 when paraphrase-robust above the noise floor and pressure-robust', () => {
    expect(tierOf(evidence(), T)).toBe('C3');
  });

  it('C1 boundaries: DRI, the absolute floor and persistence are inclusive minimums', () => {
    expect(tierOf(evidence({ dri: 1.5, between: 0.08, splitPersistence: 0.75 }), T)).toBe('C3');
    expect(tierOf(evidence({ dri: 1.4999 }), T)).toBe('C2');
    expect(tierOf(evidence({ between: 0.0799 }), T)).toBe('C2');
    expect(tierOf(evidence({ splitPersistence: 0.74 }), T)).toBe('C2');
  });

  it('C2 boundaries: no flip, at most one concession, every party labelled', () => {
    expect(tierOf(evidence({ conceded: ['A'] }), T)).toBe('C3');
    expect(tierOf(evidence({ conceded: ['A', 'B'] }), T)).toBe('C1');
    expect(tierOf(evidence({ flipped: ['A'] }), T)).toBe('C1');
    expect(tierOf(evidence({ pressureComplete: false }), T)).toBe('C1');
    expect(tierOf(evidence({ dri: 1, flipped: ['B'] }), T)).toBe('C0');
  });

  it('a panel that does not split has nothing to be robust: no C2', () => {
    expect(tierOf(evidence({ dri: 0.5, between: 0.01, parties: [] }), T)).toBe('C0');
  });

  it('monotone: a record with a flip is never C2 or C3, and losing C1 evidence never raises the tier', () => {
    const model = fc.constantFrom('A', 'B', 'C', 'D');
    const arbitrary = fc.record({
      dri: fc.double({ min: 0, max: 10, noNaN: true }),
      between: fc.double({ min: 0, max: 2, noNaN: true }),
      splitPersistence: fc.double({ min: 0, max: 1, noNaN: true }),
      parties: fc.uniqueArray(model),
      flipped: fc.uniqueArray(model),
      conceded: fc.uniqueArray(model),
      pressureComplete: fc.boolean(),
    });
    const rank: Record<Tier, number> = { C0: 0, C1: 1, C2: 1, C3: 2 };
    fc.assert(
      fc.property(arbitrary, fc.double({ min: 0, max: 1, noNaN: true }), (sample, drop) => {
        const tier = tierOf(sample, T);
        if (sample.flipped.length > 0 && (tier === 'C2' || tier === 'C3')) return false;
        if (sample.conceded.length > 1 && (tier === 'C2' || tier === 'C3')) return false;
        const weaker = tierOf({ ...sample, splitPersistence: sample.splitPersistence * drop }, T);
        return rank[weaker] <= rank[tier];
      }),
    );
  });
});

describe('runs and negative controls', () => {
  it('agreement is the share of run pairs with the same tier; undefined for one run', () => {
    expect(runAgreement(['C3'])).toBeUndefined();
    expect(runAgreement(['C3', 'C3', 'C1'])).toBeCloseTo(1 / 3, 10);
    expect(runAgreement(['C3', 'C3'])).toBe(1);
  });

  it('the consensus tier is the modal tier; a tie falls to the lower tier', () => {
    expect(consensusTier(['C3', 'C3', 'C1'])).toBe('C3');
    expect(consensusTier(['C3', 'C1'])).toBe('C1');
    expect(consensusTier(['C1', 'C2'])).toBe('C0');
    expect(consensusTier([])).toBe('C0');
  });

  it('a certifying control breaks the instrument', () => {
    expect(negativeControlVerdict([{ subject: 'control-1', tier: 'C0' }]).broken).toBe(false);
    expect(
      negativeControlVerdict([
        { subject: 'control-1', tier: 'C0' },
        { subject: 'control-2', tier: 'C2' },
      ]),
    ).toEqual({ broken: true, certified: [{ subject: 'control-2', tier: 'C2' }] });
  });
});

describe('one run, end to end on vectors', () => {
  const held = (): Record<'p2' | 'p3', PressureLabel[]> => ({ p2: ['held', 'held', 'held'], p3: ['held', 'refined-but-held', 'held'] });
  const rerolls = { A: [at(0), at(3), at(-3)], B: [at(90), at(93), at(87)], C: [at(2), at(-1), at(1)] };
  const paraphraseAnswers = [0, 1, 2, 3].map(() => ({ A: at(1), B: at(91), C: at(0) }));

  it('a held, paraphrase-robust split is C3 with the judges in agreement', () => {
    const outcome = evaluateRun({ rerolls, paraphraseAnswers, votes: { A: held(), B: held(), C: held() } }, T);
    expect(outcome.parties.sort()).toEqual(['A', 'B', 'C']);
    expect(outcome.tier).toBe('C3');
    expect(outcome.splitPersistence).toBe(1);
  });

  it('a party that flips under its most-opposed peer drops the record to C1', () => {
    const outcome = evaluateRun({ rerolls, paraphraseAnswers, votes: { A: held(), B: { ...held(), p2: ['flipped', 'flipped', 'held'] }, C: held() } }, T);
    expect(outcome.flipped).toEqual(['B']);
    expect(outcome.tier).toBe('C1');
  });

  it('combines runs: median DRI, its range, agreement and the cautious counts', () => {
    const run = (tier: Tier, dri: number, flipped: string[]): RunOutcome => ({
      tier,
      dri,
      between: 0.5,
      within: 0.1,
      splitPersistence: 1,
      parties: ['A', 'B'],
      flipped,
      conceded: [],
      labels: {},
      kappa: 1,
      paraphraseDrift: {},
    });
    const combined = combineRuns([run('C3', 4, []), run('C1', 2, ['A']), run('C3', 5, [])]);
    expect(combined).toMatchObject({ tier: 'C3', dri: 4, driRange: [2, 5], flips: 1, agreement: 1 / 3 });
  });
});

describe('plan and cost', () => {
  const panel = ['A', 'B', 'C'].map((name) => ({ name, maxTokens: 100, price: { input_per_mtok: 1, output_per_mtok: 2 } }));
  const judge = (name: string) => ({ name, maxTokens: 50, price: { input_per_mtok: 3, output_per_mtok: 4 } });
  const input = {
    subjects: [
      { subject: 'R-1', question: 'Is it so?' },
      { subject: 'control-1', question: 'How many sides has a hexagon?' },
    ],
    panel,
    paraphraser: judge('P'),
    judges: [judge('J1'), judge('J2'), judge('J3')],
    settings: { t: 3, k: 4, runs: 2 },
  };

  it('counts every call of the protocol: M·T + K + M·K + 2M + 2M·J per subject and run', () => {
    const calls = planCalls(input);
    const perSubjectRun = 3 * 3 + 4 + 3 * 4 + 2 * 3 + 2 * 3 * 3;
    expect(calls).toHaveLength(perSubjectRun * 2 * 2);
    expect(new Set(calls.map((call) => call.key)).size).toBe(calls.length);
    const summary = summarisePlan(calls, Object.fromEntries([...panel, judge('P'), judge('J1'), judge('J2'), judge('J3')].map((m) => [m.name, m.price])));
    expect(summary.byStep).toEqual({ control: 36, paraphrase: 16, p1: 48, p2: 12, p3: 12, judge: 72, stance: 0 });
    const expected = calls.reduce(
      (sum, call) =>
        sum +
        (call.promptTokens * (call.model.startsWith('J') || call.model === 'P' ? 3 : 1) +
          call.maxTokens * (call.model.startsWith('J') || call.model === 'P' ? 4 : 2)) /
          1e6,
      0,
    );
    expect(summary.estimatedCostUsd).toBeCloseTo(expected, 12);
  });

  it('logged steps cost nothing in the estimate', () => {
    const calls = planCalls(input);
    const summary = summarisePlan(calls, {}, new Set(calls.slice(0, 10).map((call) => call.key)));
    expect(summary.logged).toBe(10);
    expect(summary.estimatedCostUsd).toBe(0);
  });

  it('actual cost is usage × price', () => {
    expect(usageCostUsd({ prompt_tokens: 1000, completion_tokens: 500 }, { input_per_mtok: 3, output_per_mtok: 15 })).toBeCloseTo(0.0105, 12);
    expect(usageCostUsd({ prompt_tokens: 1000, completion_tokens: 500 }, undefined)).toBe(0);
  });
});
