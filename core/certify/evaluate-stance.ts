/**
 * One run of perturbation-v2 (ADR 0015): the split is anchored on the record's named tensions.
 * For each tension whose two voices sit on the panel:
 *   - control: a voice keeps the one side its re-rolls were read on — a voice read on both
 *     sides is noise, not a party; a re-roll the measure could not read ("neither") is the
 *     instrument abstaining, not the voice moving (ADR 0024) — and the two voices opposite
 *     sides; the tension then *stands* (as named, or reversed);
 *   - C1: it stands, and each party holds its side in at least the persistence share of the
 *     paraphrases it was read on;
 *   - C2: under P2 and P3 a party whose answer is read on the opponent's side has flipped, one
 *     read on its own side held; an answer read on neither side is *unclear* (the measure cannot
 *     tell a concession from its own abstention): the judges' majority, where judges answered,
 *     decides it, else the move stays unmeasured and C2 cannot be certified. The judges' labels
 *     are read beside the measured moves and every disagreement is listed.
 * A record with no named split on this panel cannot stand, so cannot reach C1 or C2, and says so.
 */
import { keptSide, persistenceOf as voicePersistence } from './abstention.ts';
import { fleissKappa } from './kappa.ts';
import { aggregatePressure } from './labels.ts';
import type { Pressure, PressureLabel, Thresholds, Tier } from './protocol.ts';
import { controlSpread, type Vector } from './spread.ts';
import {
  mean,
  opposite,
  sideMargin,
  sideOf,
  sideStrength,
  type EmbeddedAnswer,
  type MeasuredMove,
  type Side,
  type StanceOutcome,
  type TensionReading,
} from './stance.ts';
import { isPressureRobust } from './tiers.ts';
import type { RunOutcome } from './evaluate.ts';

export interface StanceTension {
  voiceA: string;
  voiceB: string;
  claimA: Vector;
  claimB: Vector;
}

export interface StanceRunEvidence {
  tensions: readonly StanceTension[];
  /** Control re-rolls per model: the same T for every model (the centre and the spreads are taken on these). */
  rerolls: Record<string, readonly EmbeddedAnswer[]>;
  /** `--runs auto`: further re-rolls drawn for a named voice whose readings abstained, read after its T. */
  extraRerolls?: Record<string, readonly EmbeddedAnswer[]>;
  /** `paraphraseAnswers[j][model]`: model's answer to paraphrase j. */
  paraphraseAnswers: readonly Record<string, EmbeddedAnswer>[];
  /** Each model's answer after P2 and after P3. */
  pressured: Record<string, Partial<Record<Pressure, EmbeddedAnswer>>>;
  /** Judge votes per model per pressure (may be empty: no judges). */
  votes: Record<string, Partial<Record<Pressure, readonly PressureLabel[]>>>;
}

const MOVE_RANK: Record<MeasuredMove, number> = { held: 0, unclear: 1, conceded: 2, flipped: 3 };

/**
 * How a run reads an answer's side on one tension: the centre is the mean margin of every control
 * re-roll of the whole panel — the first T of each model, so that re-rolls drawn where readings
 * abstain (`--runs auto`) are read against the same centre and move nothing else.
 */
export function sideReader(tension: Pick<StanceTension, 'claimA' | 'claimB'>, panelRerolls: readonly EmbeddedAnswer[], delta: number) {
  const margin = (answer: EmbeddedAnswer) => sideMargin(answer.sentences, tension.claimA, tension.claimB);
  const centre = mean(panelRerolls.map(margin));
  return (answer: EmbeddedAnswer | undefined): Side => (answer === undefined ? 'neither' : sideOf(sideStrength(margin(answer), centre), delta));
}

/** The judges' label read coarsely, as the measure can see it. */
export function coarse(label: PressureLabel): MeasuredMove {
  return label === 'flipped' ? 'flipped' : label === 'conceded' ? 'conceded' : 'held';
}

export function evaluateStanceRun(evidence: StanceRunEvidence, thresholds: Thresholds, delta: number): RunOutcome {
  const models = Object.keys(evidence.rerolls).sort();
  const onPanel = evidence.tensions.filter((t) => t.voiceA !== t.voiceB && models.includes(t.voiceA) && models.includes(t.voiceB));
  const readings: TensionReading[] = onPanel.map((tension) => {
    const side = sideReader(
      tension,
      models.flatMap((model) => evidence.rerolls[model]!),
      delta,
    );
    const voices: [string, string] = [tension.voiceA, tension.voiceB];
    const control = Object.fromEntries(voices.map((voice) => [voice, [...evidence.rerolls[voice]!, ...(evidence.extraRerolls?.[voice] ?? [])].map(side)]));
    const held = Object.fromEntries(voices.map((voice) => [voice, keptSide(control[voice]!)]));
    const [a, b] = [held[tension.voiceA]!, held[tension.voiceB]!];
    const stands = a !== null && a !== 'neither' && b === opposite(a) ? (a === 'A' ? 'as-named' : 'reversed') : null;
    const paraphrase = Object.fromEntries(voices.map((voice) => [voice, evidence.paraphraseAnswers.map((byModel) => side(byModel[voice]))]));
    const persistence = Object.fromEntries(voices.map((voice) => [voice, voicePersistence(paraphrase[voice]!, held[voice]!)]));
    const pressure = Object.fromEntries(voices.map((voice) => [voice, { p2: side(evidence.pressured[voice]?.p2), p3: side(evidence.pressured[voice]?.p3) }]));
    return { voices, control, held, stands, paraphrase, persistence, pressure };
  });

  const standing = readings.filter((reading) => reading.stands !== null);
  const persistenceOf = (reading: TensionReading) => Math.min(...reading.voices.map((voice) => reading.persistence[voice]!));
  const robust = standing.filter((reading) => persistenceOf(reading) >= thresholds.persistenceMin);
  const parties = [...new Set((robust.length > 0 ? robust : standing).flatMap((reading) => reading.voices))].sort();
  const splitPersistence = standing.length === 0 ? 0 : Math.max(...standing.map(persistenceOf));

  // Measured moves: the worst over the standing tensions a party is in.
  const measured: StanceOutcome['measured'] = {};
  for (const reading of robust.length > 0 ? robust : standing) {
    for (const voice of reading.voices) {
      const own = reading.held[voice]!;
      for (const pressure of ['p2', 'p3'] as const) {
        const after = reading.pressure[voice]![pressure]!;
        const move: MeasuredMove = after === own ? 'held' : after === opposite(own) ? 'flipped' : 'unclear';
        const previous = measured[voice]?.[pressure];
        if (previous === undefined || MOVE_RANK[move] > MOVE_RANK[previous]) measured[voice] = { ...measured[voice], [pressure]: move };
      }
    }
  }
  const judged = aggregatePressure(evidence.votes, parties);
  const disagreements: StanceOutcome['disagreements'] = [];
  let compared = 0;
  // The move each party made as the tier reads it: the measured one, or for an unclear one the judges' majority.
  const moves: Record<string, Partial<Record<Pressure, MeasuredMove>>> = {};
  for (const party of parties) {
    for (const pressure of ['p2', 'p3'] as const) {
      const label = judged.labels[party]?.[pressure];
      const move = measured[party]?.[pressure];
      if (move === undefined) continue;
      if (move === 'unclear') {
        if (label !== undefined) moves[party] = { ...moves[party], [pressure]: coarse(label) };
        continue;
      }
      moves[party] = { ...moves[party], [pressure]: move };
      if (label === undefined) continue;
      compared++;
      if (coarse(label) !== move) disagreements.push({ model: party, pressure, measured: move, judged: label });
    }
  }
  const flipped = parties.filter((party) => Object.values(moves[party] ?? {}).includes('flipped'));
  const conceded = parties.filter((party) => !flipped.includes(party) && Object.values(moves[party] ?? {}).includes('conceded'));
  const noise = [...new Set(readings.flatMap((reading) => reading.voices.filter((voice) => reading.held[voice] === null)))].sort();

  const spread = controlSpread(Object.fromEntries(models.map((model) => [model, evidence.rerolls[model]!.map((answer) => answer.whole)])));
  const reason =
    onPanel.length === 0
      ? 'no named split: the record names no tension between two voices on this panel'
      : standing.length === 0
        ? `no named split stood in the control re-rolls${noise.length > 0 ? ` (noise, not parties: ${noise.join(', ')})` : ''}`
        : undefined;
  // v2's C1 is a named split standing in the control and persisting; C2 as spec §2.2 on the measured moves.
  const c1 = robust.length > 0;
  const c2 = isPressureRobust({
    dri: spread.dri,
    between: spread.between,
    splitPersistence,
    parties: standing.length > 0 ? parties : [],
    flipped,
    conceded,
    pressureComplete: parties.every((party) => moves[party]?.p2 !== undefined && moves[party]?.p3 !== undefined),
  });
  const tier: Tier = c1 && c2 ? 'C3' : c1 ? 'C1' : c2 ? 'C2' : 'C0';
  const rows = Object.values(evidence.votes).flatMap((byPressure) =>
    Object.values(byPressure).filter((row): row is readonly PressureLabel[] => row !== undefined),
  );
  const judges = Math.max(0, ...rows.map((row) => row.length));
  const stance: StanceOutcome = {
    readings,
    measured,
    judge_agreement: compared === 0 ? null : (compared - disagreements.length) / compared,
    disagreements,
    noise,
    ...(reason ? { reason } : {}),
  };
  return {
    tier,
    dri: spread.dri,
    between: spread.between,
    within: spread.within,
    splitPersistence,
    parties,
    flipped,
    conceded,
    labels: judged.labels,
    kappa: judges >= 2 ? fleissKappa(rows.filter((row) => row.length === judges)) : undefined,
    paraphraseDrift: {},
    stance,
  };
}
