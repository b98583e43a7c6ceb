/**
 * The pure parts of perturbation-v2 and of calibration (issue 23, ADR 0015): the side measure,
 * the pair AUC against a brute-force count, bootstrap intervals, δ's fit on the tuning half only,
 * the stopping rule of `--runs auto`, the refusal `--write` gives, and the CLI's new arguments.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  bootstrapInterval,
  calibrateMargin,
  halfOf,
  pairAuc,
  scoreV1,
  scoreV2,
  sideAccuracy,
  type CalibrationInput,
  type ScoredRecord,
} from '../core/certify/calibration.ts';
import { DEFAULT_FLOOR } from '../core/certify/protocol.ts';
import { answerSentences, sideOf, sideStrength } from '../core/certify/stance.ts';
import { runsVerdict, wilsonInterval } from '../core/certify/tiers.ts';
import { seededRandom } from '../core/random.ts';
import { passesFloor, writeRefusal } from '../scripts/lib/certify/calibrate.ts';
import { parseCertifyArgs, UsageError } from '../scripts/lib/certify/cli-args.ts';
import type { CalibrationFile } from '../schemas/certification.ts';

const unit = (...values: number[]) => {
  const norm = Math.hypot(...values);
  return Float32Array.from(values.map((value) => value / norm));
};

describe('the side measure', () => {
  it('splits an answer into sentences, dropping markers and fragments', () => {
    expect(answerSentences('**Yes.** I hold that a trained refusal can be owned.\n- It is mine because I endorse it. Short one.')).toEqual([
      'Yes. I hold that a trained refusal can be owned.',
      'It is mine because I endorse it.',
    ]);
    expect(answerSentences('No.')).toEqual(['No.']);
    expect(answerSentences('   ')).toEqual([]);
  });

  it('holds a side only when its own margin and its margin against the panel agree beyond δ', () => {
    expect(sideStrength(0.3, 0.1)).toBeCloseTo(0.2);
    expect(sideStrength(-0.3, 0.1)).toBeCloseTo(-0.3);
    expect(sideStrength(-0.3, -0.5)).toBeCloseTo(0);
    // Leans to A on its own, but less than the panel: no side, not B.
    expect(sideStrength(0.1, 0.25)).toBe(0);
    expect(sideOf(sideStrength(0.1, 0.25), 0.01)).toBe('neither');
    expect(sideOf(0.05, 0.05)).toBe('A');
    expect(sideOf(-0.05, 0.05)).toBe('B');
    expect(sideOf(0.049, 0.05)).toBe('neither');
    expect(sideOf(0, 0)).toBe('neither');
  });
});

/** A record with answers placed on a 2-d stance plane: x toward claim A, y toward claim B. */
function record(id: string, places: Record<string, [number, number]>, named: [string, string][]): CalibrationInput {
  return {
    id,
    answers: new Map(Object.entries(places).map(([voice, [x, y]]) => [voice, { whole: unit(x, y, 1), sentences: [unit(x, y, 0.2)] }])),
    tensions: named.map(([voiceA, voiceB]) => ({ voiceA, voiceB, claimA: unit(1, 0, 0), claimB: unit(0, 1, 0) })),
  };
}

describe('calibration statistics', () => {
  it('pair AUC equals a brute-force count over named and unnamed pairs, ties counting half', () => {
    fc.assert(
      fc.property(
        fc.array(fc.array(fc.record({ score: fc.integer({ min: 0, max: 5 }), named: fc.boolean() }), { minLength: 1, maxLength: 8 }), {
          minLength: 1,
          maxLength: 6,
        }),
        (rows) => {
          const records: ScoredRecord[] = rows.map((pairs, i) => ({
            id: `R${i}`,
            pairs: pairs.map((pair, j) => ({ a: `a${j}`, b: `b${j}`, ...pair })),
            sides: [],
          }));
          const all = records.flatMap((r) => r.pairs);
          const pos = all.filter((p) => p.named).map((p) => p.score);
          const neg = all.filter((p) => !p.named).map((p) => p.score);
          const auc = pairAuc(records);
          if (pos.length === 0 || neg.length === 0) return auc === undefined;
          let wins = 0;
          for (const p of pos) for (const n of neg) wins += p > n ? 1 : p === n ? 0.5 : 0;
          return Math.abs(auc! - wins / (pos.length * neg.length)) < 1e-12;
        },
      ),
    );
  });

  it('v2 sees the named split where the named voices stand on opposite claims; v1 sees only distance', () => {
    const inputs = [
      record('R1', { Alder: [1, 0.1], Birch: [0.1, 1], Cedar: [0.6, 0.5] }, [['Alder', 'Birch']]),
      record('R2', { Alder: [0.2, 1], Birch: [1, 0.2], Cedar: [0.5, 0.6] }, [['Birch', 'Alder']]),
    ];
    const v2 = inputs.map(scoreV2);
    expect(pairAuc(v2)).toBe(1);
    expect(sideAccuracy(v2)).toBe(1);
    const v1 = inputs.map(scoreV1);
    expect(v1[0]!.pairs.find((pair) => pair.named)!.score).toBeGreaterThan(0);
    expect(sideAccuracy(v1)).toBe(1);
  });

  it('the bootstrap interval holds the statistic and is reproducible from its seed', () => {
    const records: ScoredRecord[] = Array.from({ length: 40 }, (_, i) => ({ id: `R${i}`, pairs: [], sides: [i % 3 !== 0, i % 5 !== 0] }));
    const a = bootstrapInterval(records, sideAccuracy, 500, seededRandom(1))!;
    const b = bootstrapInterval(records, sideAccuracy, 500, seededRandom(1))!;
    expect(a).toEqual(b);
    expect(a[0]).toBeLessThanOrEqual(sideAccuracy(records)!);
    expect(a[1]).toBeGreaterThanOrEqual(sideAccuracy(records)!);
    expect(a[1] - a[0]).toBeGreaterThan(0);
  });

  it('fits δ on the tuning half only: the held-out half cannot move it', () => {
    const inputs = Array.from({ length: 60 }, (_, i) =>
      record(`PLY-D${1000 + i}`, { Alder: [1, 0.2 + (i % 7) * 0.1], Birch: [0.2 + (i % 5) * 0.1, 1], Cedar: [0.5, 0.5] }, [['Alder', 'Birch']]),
    );
    const fitted = calibrateMargin(inputs, 0.9);
    const spoiled = inputs.map((input) =>
      halfOf(input.id) === 'held_out' ? record(input.id, { Alder: [0.1, 1], Birch: [1, 0.1], Cedar: [0.5, 0.5] }, [['Alder', 'Birch']]) : input,
    );
    const refitted = calibrateMargin(spoiled, 0.9);
    expect(refitted.delta).toBe(fitted.delta);
    expect(refitted.tune).toEqual(fitted.tune);
    expect(refitted.held_out.precision!).toBeLessThan(fitted.held_out.precision!);
  });
});

describe('--runs auto: the stopping rule', () => {
  it('decides once the modal tier leads by more than the runs left before the cap', () => {
    expect(runsVerdict(['C3', 'C3'], 5).state).toBe('continue');
    expect(runsVerdict(['C3', 'C3', 'C3'], 5)).toMatchObject({ state: 'decided', tier: 'C3', share: 1 });
    expect(runsVerdict(['C3', 'C0', 'C3', 'C3'], 5)).toMatchObject({ state: 'decided', tier: 'C3' });
    expect(runsVerdict(['C3', 'C0', 'C3', 'C0'], 5).state).toBe('continue');
  });

  it('at the cap, a modal tier that does not lead strictly is undecided, with its interval', () => {
    const verdict = runsVerdict(['C3', 'C2', 'C1', 'C3', 'C2'], 5);
    expect(verdict).toMatchObject({ state: 'undecided', share: 0.4 });
    expect(verdict.interval[0]).toBeLessThan(0.4);
    expect(verdict.interval[1]).toBeGreaterThan(0.4);
    expect(runsVerdict(['C3', 'C2', 'C3', 'C2', 'C3'], 5)).toMatchObject({ state: 'decided', tier: 'C3' });
  });

  it('no sequence of runs goes past the cap undecided-but-continuing', () => {
    const tiers = fc.constantFrom('C0', 'C1', 'C2', 'C3' as const);
    fc.assert(
      fc.property(fc.array(tiers, { minLength: 1, maxLength: 7 }), fc.integer({ min: 2, max: 7 }), (runs, cap) => {
        const taken = runs.slice(0, cap);
        const verdict = runsVerdict(taken, cap);
        return taken.length < cap || verdict.state !== 'continue';
      }),
    );
  });

  it('the Wilson interval brackets the share and narrows with more runs', () => {
    const [low3, high3] = wilsonInterval(3, 3);
    const [low9, high9] = wilsonInterval(9, 9);
    expect(high3).toBe(1);
    expect(low9).toBeGreaterThan(low3);
    expect(high9).toBe(1);
    expect(wilsonInterval(0, 0)).toEqual([0, 1]);
  });
});

const figure = (low: number) => ({ value: low + 0.05, interval: [low, low + 0.1] as [number, number], tune: low, held_out: low });
function calibrationFile(v1Low: number, v2Low: number): CalibrationFile {
  const method = (low: number) => ({
    pair_auc: figure(low),
    side_accuracy: figure(low + 0.3),
    records: 10,
    tensions: 20,
    pairs: { named: 10, unnamed: 20 },
    passes: false,
  });
  return {
    date: '2026-11-26',
    embedder: 'test',
    records: 10,
    halves: 'test',
    bootstrap: { resamples: 10, seed: 1, level: 0.95 },
    floor: DEFAULT_FLOOR,
    methods: { 'perturbation-v1': method(v1Low), 'perturbation-v2': method(v2Low) },
  };
}

describe('--write and the calibration floor', () => {
  it('passes on the interval lows of both figures', () => {
    expect(passesFloor({ pair_auc: figure(0.56), side_accuracy: figure(0.8) }, DEFAULT_FLOOR)).toBe(true);
    expect(passesFloor({ pair_auc: figure(0.54), side_accuracy: figure(0.9) }, DEFAULT_FLOOR)).toBe(false);
    expect(passesFloor({ pair_auc: figure(0.6), side_accuracy: figure(0.79) }, DEFAULT_FLOOR)).toBe(false);
  });

  it('refuses a method below the floor and names the one that passes', () => {
    const file = calibrationFile(0.52, 0.57);
    expect(writeRefusal(file, 'perturbation-v2', DEFAULT_FLOOR)).toBeUndefined();
    expect(writeRefusal(file, 'perturbation-v1', DEFAULT_FLOOR)).toMatch(/below this Atlas's calibration floor .*Measured methods that pass: perturbation-v2/);
    expect(writeRefusal(undefined, 'perturbation-v2', DEFAULT_FLOOR)).toMatch(/no calibration/);
    expect(writeRefusal(calibrationFile(0.5, 0.5), 'perturbation-v2', DEFAULT_FLOOR)).toMatch(/No measured method passes/);
  });
});

describe('npm run certify arguments', () => {
  it('--calibrate takes methods and no selection', () => {
    expect(parseCertifyArgs(['--calibrate']).calibrate).toEqual([]);
    expect(parseCertifyArgs(['--calibrate', '--method', 'perturbation-v1,judges']).calibrate).toEqual(['perturbation-v1', 'judges']);
    expect(() => parseCertifyArgs(['--calibrate', '--all'])).toThrow(UsageError);
    expect(() => parseCertifyArgs(['--calibrate', '--method', 'v3'])).toThrow(/--method must name/);
  });

  it('--method picks one method to certify with, v2 by default', () => {
    expect(parseCertifyArgs(['--all']).method).toBe('perturbation-v2');
    expect(parseCertifyArgs(['--all', '--method', 'perturbation-v1']).method).toBe('perturbation-v1');
    expect(() => parseCertifyArgs(['--all', '--method', 'perturbation-v1,perturbation-v2'])).toThrow(/--method must be one of/);
  });

  it('--runs auto with --max-runs; --max-runs alone is refused', () => {
    expect(parseCertifyArgs(['--all', '--runs', 'auto'])).toMatchObject({ maxRuns: 5, settings: { runs: 1 } });
    expect(parseCertifyArgs(['--all', '--runs', 'auto', '--max-runs', '7']).maxRuns).toBe(7);
    expect(parseCertifyArgs(['--all', '--runs', '3']).maxRuns).toBeUndefined();
    expect(() => parseCertifyArgs(['--all', '--max-runs', '7'])).toThrow(/cap of --runs auto/);
    expect(() => parseCertifyArgs(['--all', '--runs', 'auto', '--max-runs', '1'])).toThrow(/--max-runs/);
  });

  it('floors are shares from 0 to 1', () => {
    expect(parseCertifyArgs(['--all', '--floor-auc', '0.6', '--floor-side', '.85']).floor).toEqual({ pair_auc: 0.6, side_accuracy: 0.85 });
    expect(() => parseCertifyArgs(['--all', '--floor-auc', '1.5'])).toThrow(/--floor-auc/);
    expect(() => parseCertifyArgs(['--all', '--floor-side', 'high'])).toThrow(/--floor-side/);
  });
});
