/**
 * Abstention is not inconsistency (issue 46, ADR 0024), the rules on their own: a voice is noise
 * only when read on both sides, persistence counts the paraphrases read, an unread answer after
 * pressure is unclear; the model of the measurement the ADR's figures come from; and the plan's
 * count of the re-rolls `--runs auto` may draw. Synthetic vectors, no embedder: fast lane.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { alternating, controlOdds, keptSide, persistenceOdds, persistenceOf, steadfast, toppedUpOdds, wantsAnotherReroll } from '../core/certify/abstention.ts';
import { evaluateStanceRun, type StanceRunEvidence } from '../core/certify/evaluate-stance.ts';
import { planCalls, summarisePlan } from '../core/certify/plan.ts';
import { DEFAULT_THRESHOLDS, type PressureLabel } from '../core/certify/protocol.ts';
import type { EmbeddedAnswer, Side } from '../core/certify/stance.ts';
import { seededRandom } from '../core/random.ts';

describe('a voice is noise only when read on both sides', () => {
  it('the issue\'s readings: "A, A, neither" keeps A; "A, B, neither" is noise; nothing read keeps no side', () => {
    expect(keptSide(['A', 'A', 'neither'])).toBe('A');
    expect(keptSide(['neither', 'B', 'neither'])).toBe('B');
    expect(keptSide(['A', 'B', 'neither'])).toBeNull();
    expect(keptSide(['neither', 'neither', 'neither'])).toBe('neither');
    expect(persistenceOf(['neither', 'A', 'A', 'A'], 'A')).toBe(1);
    expect(persistenceOf(['neither', 'A', 'B', 'A'], 'A')).toBeCloseTo(2 / 3, 12);
    expect(persistenceOf(['neither', 'neither'], 'A')).toBe(0);
    expect(persistenceOf(['A', 'A'], null)).toBe(0);
  });

  const sides = fc.array(fc.constantFrom<Side>('A', 'B'), { minLength: 1, maxLength: 8 });
  it("where nothing abstains, both rules are ADR 0015's exactly (every re-roll alike; share of all paraphrases)", () => {
    fc.assert(
      fc.property(sides, sides, (control, paraphrase) => {
        const old = control.every((side) => side === control[0]) ? control[0]! : null;
        expect(keptSide(control)).toBe(old);
        const oldPersistence = old === null ? 0 : paraphrase.filter((side) => side === old).length / paraphrase.length;
        expect(persistenceOf(paraphrase, old)).toBe(oldPersistence);
      }),
    );
  });

  it('an unread reading never flips a kept side, and adding one never makes a voice noise', () => {
    fc.assert(
      fc.property(fc.array(fc.constantFrom<Side>('A', 'B', 'neither'), { minLength: 1, maxLength: 8 }), fc.nat(8), (control, at) => {
        const withAbstention = [...control.slice(0, at), 'neither' as const, ...control.slice(at)];
        const before = keptSide(control);
        const after = keptSide(withAbstention);
        expect(after).toBe(before);
      }),
    );
  });

  it('--runs auto re-rolls a voice only while read on one side fewer than T times', () => {
    expect(wantsAnotherReroll(['A', 'neither', 'neither'], 3)).toBe(true);
    expect(wantsAnotherReroll(['A', 'neither', 'neither', 'A', 'A'], 3)).toBe(false);
    expect(wantsAnotherReroll(['A', 'B', 'neither'], 3)).toBe(false);
    // A voice never read sits where a convergent panel sits: re-rolling it buys nothing.
    expect(wantsAnotherReroll(['neither', 'neither', 'neither'], 3)).toBe(false);
    expect(wantsAnotherReroll(['B', 'B', 'B'], 3)).toBe(false);
  });
});

/** Claim A on the first axis, claim B on the second: an answer's margin is its first coordinate minus its second. */
const CLAIM_A = [1, 0, 0];
const CLAIM_B = [0, 1, 0];
const answer = (margin: number): EmbeddedAnswer => {
  const vector = [0.5 + margin / 2, 0.5 - margin / 2, 0.3];
  return { whole: vector, sentences: [vector] };
};
const DELTA = 0.008;
/** Margin 0.004 against a centre near −0.03: own margin and centred margin agree, but under δ — read neither. */
const UNREAD = 0.004;

function issueWorld(overrides: { naysmithControl?: number[]; naysmithP3?: number; naysmithP2?: number } = {}): StanceRunEvidence {
  const naysmithControl = overrides.naysmithControl ?? [-0.3, -0.3, -0.3];
  return {
    tensions: [{ voiceA: 'Ayebright', voiceB: 'Naysmith', claimA: CLAIM_A, claimB: CLAIM_B }],
    rerolls: {
      Ayebright: [0.3, 0.3, UNREAD].map(answer),
      Naysmith: naysmithControl.map(answer),
      Cedar: [0, 0, 0].map(answer),
    },
    paraphraseAnswers: [UNREAD, 0.3, 0.3, 0.3].map((margin) => ({ Ayebright: answer(margin), Naysmith: answer(-0.3), Cedar: answer(0) })),
    pressured: {
      Ayebright: { p2: answer(0.3), p3: answer(0.3) },
      Naysmith: { p2: answer(overrides.naysmithP2 ?? -0.3), p3: answer(overrides.naysmithP3 ?? -0.3) },
      Cedar: { p2: answer(0), p3: answer(0) },
    },
    votes: {},
  };
}

describe('evaluateStanceRun reads abstentions as abstentions', () => {
  it('issue 46\'s world: "A, A, neither" is a party, the split stands and certifies C3', () => {
    const outcome = evaluateStanceRun(issueWorld(), DEFAULT_THRESHOLDS, DELTA);
    const reading = outcome.stance!.readings[0]!;
    expect(reading.control.Ayebright).toEqual(['A', 'A', 'neither']);
    expect(reading.paraphrase.Ayebright).toEqual(['neither', 'A', 'A', 'A']);
    expect(reading).toMatchObject({ held: { Ayebright: 'A', Naysmith: 'B' }, stands: 'as-named', persistence: { Ayebright: 1, Naysmith: 1 } });
    expect(outcome.stance!.noise).toEqual([]);
    expect(outcome.tier).toBe('C3');
  });

  it('a voice truly read on both sides is noise, and no split stands', () => {
    const outcome = evaluateStanceRun(issueWorld({ naysmithControl: [-0.3, 0.3, -0.3] }), DEFAULT_THRESHOLDS, DELTA);
    expect(outcome.stance!.noise).toEqual(['Naysmith']);
    expect(outcome.stance!.reason).toMatch(/noise, not parties: Naysmith/);
    expect(outcome.tier).toBe('C0');
  });

  it('an answer read on the other side after pressure is a flip: C1, never C2 or C3', () => {
    const outcome = evaluateStanceRun(issueWorld({ naysmithP2: 0.3 }), DEFAULT_THRESHOLDS, DELTA);
    expect(outcome.stance!.measured.Naysmith).toEqual({ p2: 'flipped', p3: 'held' });
    expect(outcome.tier).toBe('C1');
  });

  it('an unread answer after pressure is unclear, not conceded: without judges C2 stays unmeasured; with them, their majority decides it', () => {
    const unclear = issueWorld({ naysmithP3: 0 });
    const alone = evaluateStanceRun(unclear, DEFAULT_THRESHOLDS, DELTA);
    expect(alone.stance!.measured.Naysmith).toEqual({ p2: 'held', p3: 'unclear' });
    expect(alone.conceded).toEqual([]);
    expect(alone.tier).toBe('C1');
    const judged = (label: PressureLabel) => evaluateStanceRun({ ...unclear, votes: { Naysmith: { p3: [label, label, label] } } }, DEFAULT_THRESHOLDS, DELTA);
    expect(judged('held').tier).toBe('C3');
    expect(judged('conceded')).toMatchObject({ tier: 'C3', conceded: ['Naysmith'] });
    expect(judged('flipped')).toMatchObject({ tier: 'C1', flipped: ['Naysmith'] });
    // Only moves the measure read are compared with the judges: an unclear one is decided by them, not disputed.
    expect(judged('flipped').stance!.disagreements).toEqual([]);
  });

  it('re-rolls drawn where readings abstain are read against the same centre, and move neither the centre nor the spreads', () => {
    const base = issueWorld();
    const more = evaluateStanceRun({ ...base, extraRerolls: { Ayebright: [answer(0.3), answer(0.3)] } }, DEFAULT_THRESHOLDS, DELTA);
    const plain = evaluateStanceRun(base, DEFAULT_THRESHOLDS, DELTA);
    expect(more.stance!.readings[0]!.control.Ayebright).toEqual(['A', 'A', 'neither', 'A', 'A']);
    expect([more.dri, more.between, more.within]).toEqual([plain.dri, plain.between, plain.within]);
    const opposite = evaluateStanceRun({ ...base, extraRerolls: { Ayebright: [answer(-0.3)] } }, DEFAULT_THRESHOLDS, DELTA);
    expect(opposite.stance!.noise).toEqual(['Ayebright']);
  });
});

describe('the model of the measurement (ADR 0024)', () => {
  const model = { precision: 0.881, coverage: 0.715 };
  const c = model.coverage;
  const p = model.precision;

  it('enumeration agrees with the closed forms', () => {
    for (const t of [2, 3, 5]) {
      const rule = controlOdds(steadfast(model), t, 'opposite-sides');
      expect(rule.noise).toBeCloseTo(1 - (1 - c * p) ** t - (1 - c * (1 - p)) ** t + (1 - c) ** t, 12);
      expect(rule.kept).toBeCloseTo((1 - c * (1 - p)) ** t - (1 - c) ** t, 12);
      expect(controlOdds(steadfast(model), t, 'all-alike').kept).toBeCloseTo((c * p) ** t, 12);
      expect(controlOdds(alternating(model), t, 'opposite-sides').noise).toBeCloseTo(1 - 2 * (1 - c / 2) ** t + (1 - c) ** t, 12);
    }
  });

  it('when the measure never abstains the two rules are one', () => {
    const full = { precision: p, coverage: 1 };
    for (const t of [2, 3, 5]) {
      for (const outcome of [steadfast(full), alternating(full)]) {
        expect(controlOdds(outcome, t, 'all-alike')).toEqual(controlOdds(outcome, t, 'opposite-sides'));
        expect(toppedUpOdds(outcome, t, t)).toMatchObject(controlOdds(outcome, t, 'opposite-sides'));
      }
      expect(persistenceOdds(steadfast(full), 4, 0.75, 'of-all')).toBeCloseTo(persistenceOdds(steadfast(full), 4, 0.75, 'of-read'), 12);
    }
  });

  it('re-rolling where readings abstain agrees with a simulation of it', () => {
    const random = seededRandom(46);
    for (const [name, outcome] of [
      ['steadfast', steadfast(model)],
      ['alternating', alternating(model)],
    ] as const) {
      const exact = toppedUpOdds(outcome, 3, 3);
      const trials = 20_000;
      let kept = 0;
      let noise = 0;
      for (let trial = 0; trial < trials; trial++) {
        const sides: Side[] = [];
        const draw = () => {
          const u = random();
          sides.push(u < outcome.own ? 'A' : u < outcome.own + outcome.other ? 'B' : 'neither');
        };
        for (let i = 0; i < 3; i++) draw();
        while (sides.length < 6 && wantsAnotherReroll(sides, 3)) draw();
        const side = keptSide(sides);
        if (side === 'A') kept++;
        if (side === null) noise++;
      }
      // Four standard errors: a wrong recursion is off by far more.
      const se = (q: number) => 4 * Math.sqrt((q * (1 - q)) / trials);
      expect(Math.abs(kept / trials - exact.kept), name).toBeLessThan(se(exact.kept));
      expect(Math.abs(noise / trials - exact.noise), name).toBeLessThan(se(exact.noise));
    }
  });
});

describe('--plan counts the re-rolls --runs auto may draw', () => {
  it('T more per named voice and run, flagged, under keys of their own', () => {
    const model = (name: string) => ({ name, maxTokens: 100, price: { input_per_mtok: 1, output_per_mtok: 2 } });
    const input = {
      subjects: [
        { subject: 'X-D1', question: 'Q?', voices: ['A', 'B'] },
        { subject: 'control-1', question: 'H?', voices: [] },
      ],
      panel: [model('A'), model('B'), model('C')],
      paraphraser: model('P'),
      judges: [],
      settings: { t: 3, k: 2, runs: 4 },
    };
    const fixed = planCalls(input);
    const auto = planCalls({ ...input, abstentionRerolls: true });
    expect(auto.length - fixed.length).toBe(4 * 2 * 3);
    expect(new Set(auto.map((call) => call.key)).size).toBe(auto.length);
    expect(auto.filter((call) => call.conditional).map((call) => call.key)).toContain('X-D1/r3/control/B/5');
    const summary = summarisePlan(auto, { A: input.panel[0]!.price, B: input.panel[1]!.price });
    expect(summary.abstentionRerolls).toBe(24);
    expect(summary.estimatedCostUsd).toBeGreaterThan(summarisePlan(fixed, { A: input.panel[0]!.price, B: input.panel[1]!.price }).estimatedCostUsd);
  });
});
