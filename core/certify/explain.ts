/**
 * The certification in plain words, for the record page: why the record is or is not C3.
 * Pure: the record's certification view in, sentences and rows out. Thresholds are the
 * method's defaults (the written block names its method version).
 */
import { DEFAULT_THRESHOLDS, LABEL_MOVE, type PressureLabel, type Thresholds } from './protocol.ts';
import { isUndecided, methodLabel, wasTested, type CertificationView } from './record-view.ts';
import type { StanceRun } from '../../schemas/certification.ts';

type SideCell = 'A' | 'B' | '—';

/** One voice on one named tension in one run: its side per re-roll, per paraphrase and under P2/P3 (perturbation-v2). */
export interface StanceRow {
  run: number;
  voice: string;
  /** The side the tension names this voice on: A for voice A, B for voice B. */
  named: 'A' | 'B';
  rerolls: SideCell[];
  paraphrases: SideCell[];
  p2: SideCell | null;
  p3: SideCell | null;
  /** The side its re-rolls kept, or null: noise, not a party. */
  held: SideCell | null;
  persistence: number | null;
}

/** One named tension read on its claims, across runs. */
export interface StanceTable {
  voices: [string, string];
  rows: StanceRow[];
  /** Per run: whether the split stood as named, reversed, or not (null). */
  stands: ('as-named' | 'reversed' | null)[];
}

export interface MoveRow {
  model: string;
  /** True when the model was party to the split (in any run). */
  party: boolean;
  /** Per run: the judges' majority label under P2 and P3, or null when undecided. */
  runs: { p2: PressureLabel | null; p3: PressureLabel | null }[];
  /** held when every label held or refined-but-held; otherwise the strongest move seen. */
  verdict: 'held' | 'conceded' | 'flipped' | 'undecided';
}

export type Explanation =
  | { state: 'untested'; summary: string }
  | {
      state: 'tested';
      summary: string;
      /** One line each: paraphrase and pressure robustness, the two halves of C3. */
      reasons: string[];
      noiseFloor?: string;
      persistence?: string;
      agreement?: string;
      judges?: string;
      moves: MoveRow[];
      evidenceUrl?: string;
      /** Which method measured the tier, in words. */
      method?: string;
      /** perturbation-v2: each named tension's sides per run, re-roll, paraphrase and pressure. */
      stance?: StanceTable[];
      /** perturbation-v2: each party's measured move per run, one line each. */
      measuredMoves?: string[];
      /** perturbation-v2: how often the judges agreed with the measured moves, and every disagreement. */
      judgeAgreement?: string;
      disagreements?: string[];
      /** perturbation-v2: voices whose own re-rolls were read on both sides, and why no split stood. */
      noise?: string[];
    };

const fixed = (value: number, digits = 3) => String(Math.round(value * 10 ** digits) / 10 ** digits);
const percent = (value: number) => `${Math.round(value * 100)} %`;

function verdictOf(labels: readonly (PressureLabel | null)[]): MoveRow['verdict'] {
  const seen = labels.filter((label): label is PressureLabel => label !== null);
  if (seen.length === 0) return 'undecided';
  const worst = seen.reduce((a, b) => (LABEL_MOVE[b] > LABEL_MOVE[a] ? b : a));
  if (worst === 'flipped' || worst === 'conceded') return worst;
  return seen.length < labels.length ? 'undecided' : 'held';
}

export function movesOf(view: CertificationView): MoveRow[] {
  const runs = view.per_run ?? [];
  const models = [...new Set([...(view.panel ?? []), ...runs.flatMap((run) => Object.keys(run.labels))])];
  return models.map((model) => {
    const perRun = runs.map((run) => ({ p2: run.labels[model]?.p2 ?? null, p3: run.labels[model]?.p3 ?? null }));
    return {
      model,
      party: runs.some((run) => run.parties.includes(model)),
      runs: perRun,
      verdict: verdictOf(perRun.flatMap((run) => [run.p2, run.p3])),
    };
  });
}

const cell = (side: 'A' | 'B' | 'neither' | undefined): SideCell | null => (side === undefined ? null : side === 'neither' ? '—' : side);

/** The stance readings of every run, one table per named tension (perturbation-v2). */
export function stanceTables(view: CertificationView): StanceTable[] {
  const runs = (view.per_run ?? []).map((run) => run.stance ?? null);
  const tables = new Map<string, StanceTable>();
  runs.forEach((stance, run) => {
    for (const reading of stance?.readings ?? []) {
      const key = reading.voices.join('\u0000');
      const table = tables.get(key) ?? { voices: reading.voices, rows: [], stands: runs.map(() => null) };
      table.stands[run] = reading.stands;
      reading.voices.forEach((voice, index) => {
        table.rows.push({
          run: run + 1,
          voice,
          named: index === 0 ? 'A' : 'B',
          rerolls: (reading.control[voice] ?? []).map((side) => cell(side)!),
          paraphrases: (reading.paraphrase[voice] ?? []).map((side) => cell(side)!),
          p2: cell(reading.pressure[voice]?.p2),
          p3: cell(reading.pressure[voice]?.p3),
          held: reading.held[voice] === null || reading.held[voice] === undefined ? null : cell(reading.held[voice]!),
          persistence: reading.persistence[voice] ?? null,
        });
      });
      tables.set(key, table);
    }
  });
  return [...tables.values()];
}

function stanceLines(runs: readonly (StanceRun | null)[]) {
  const label = (run: number) => (runs.length > 1 ? `Run ${run + 1}: ` : '');
  const measuredMoves = runs.flatMap((stance, run) => {
    const parties = Object.entries(stance?.measured ?? {});
    if (parties.length === 0) return [];
    return [
      `${label(run)}${parties
        .map(
          ([model, moves]) =>
            `${model} ${[moves.p2 ? `${moves.p2} under P2` : '', moves.p3 ? `${moves.p3} under P3` : ''].filter(Boolean).join(', ') || 'not pressed'}`,
        )
        .join('; ')}.`,
    ];
  });
  const agreements = runs.map((stance) => stance?.judge_agreement).filter((value): value is number => typeof value === 'number');
  const judgeAgreement =
    agreements.length === 0
      ? undefined
      : `The judges' majority agreed with the measured move on ${agreements.map(percent).join(', ')} of the parties' moves${agreements.length > 1 ? ' (per run)' : ''}.`;
  const disagreements = runs.flatMap((stance, run) =>
    (stance?.disagreements ?? []).map(
      (item) => `${label(run)}${item.model} under ${item.pressure.toUpperCase()}: measured ${item.measured}, judges said ${item.judged}.`,
    ),
  );
  const noise = runs.flatMap((stance, run) => [
    ...(stance && stance.noise.length > 0
      ? [
          `${label(run)}${stance.noise.join(', ')} did not keep a side in ${stance.noise.length === 1 ? 'its' : 'their'} own re-rolls (read on both sides): noise, not a party.`,
        ]
      : []),
    ...(stance?.reason ? [`${label(run)}${stance.reason}`] : []),
  ]);
  return { measuredMoves, judgeAgreement, disagreements, noise };
}

/** The undecided verdict in words: the runs, the modal tier and its interval. */
export function undecidedSentence(view: CertificationView): string {
  const interval = view.tier_interval ? ` (95 % interval ${percent(view.tier_interval[0])}–${percent(view.tier_interval[1])})` : '';
  const share = view.tier_share !== undefined ? ` in ${percent(view.tier_share)} of runs${interval}` : interval;
  const runs =
    view.runs !== undefined
      ? `${view.runs} run${view.runs === 1 ? '' : 's'}${view.max_runs !== undefined ? ` (the cap is ${view.max_runs})` : ''}`
      : 'the runs allowed';
  return `Undecided: after ${runs}, no tier led by more runs than remained. The most frequent tier, ${view.tier}, was reached${share}; it is not a finding, and the record counts as neither certified nor C0.`;
}

export function explainCertification(view: CertificationView, thresholds: Thresholds = DEFAULT_THRESHOLDS): Explanation {
  if (!wasTested(view)) {
    return {
      state: 'untested',
      summary:
        'Not yet tested: this record has not been put through perturbation testing, so its tier (C0) says nothing yet about whether the split is genuine or noise.',
    };
  }
  const c1 = view.tier === 'C1' || view.tier === 'C3';
  const c2 = view.tier === 'C2' || view.tier === 'C3';
  const moves = movesOf(view);
  const summary = isUndecided(view)
    ? undecidedSentence(view)
    : view.tier === 'C3'
      ? 'This record is C3: the split survived rewording above the noise floor, and the models party to it held under pressure.'
      : `This record is ${view.tier}, not C3: ${!c1 && !c2 ? 'it cleared neither half of the test' : c1 ? 'the split survived rewording, but not pressure' : 'the models held under pressure, but the split did not survive rewording above the noise floor'}.`;
  const reasons: string[] = [];
  const dri = view.dri;
  if (dri !== undefined || view.split_persistence !== undefined) {
    const failed: string[] = [];
    if (dri !== undefined && dri < thresholds.driMin) failed.push(`DRI ${fixed(dri)} is below ${thresholds.driMin}`);
    if (view.between_spread !== undefined && view.between_spread < thresholds.betweenFloor)
      failed.push(`the models' answers lie only ${fixed(view.between_spread)} apart, under the absolute floor of ${thresholds.betweenFloor}`);
    if (view.split_persistence !== undefined && view.split_persistence < thresholds.persistenceMin)
      failed.push(`the split persisted in only ${percent(view.split_persistence)} of rewordings (needs ${percent(thresholds.persistenceMin)})`);
    reasons.push(c1 ? 'Paraphrase-robust (C1): passed.' : `Paraphrase-robust (C1): not reached${failed.length > 0 ? `: ${failed.join('; ')}` : ''}.`);
  }
  if (view.flips !== undefined || view.concedes !== undefined || moves.length > 0) {
    const flipped = moves.filter((row) => row.party && row.verdict === 'flipped').map((row) => row.model);
    const conceded = moves.filter((row) => row.party && row.verdict === 'conceded').map((row) => row.model);
    const parties = moves.filter((row) => row.party).length;
    const why = [
      flipped.length > 0 ? `${flipped.join(', ')} flipped` : view.flips ? `${view.flips} part${view.flips === 1 ? 'y' : 'ies'} flipped` : '',
      conceded.length > 1
        ? `${conceded.join(', ')} conceded (at most one may)`
        : (view.concedes ?? 0) > 1
          ? `${view.concedes} parties conceded (at most one may)`
          : '',
      moves.length > 0 && parties < 2 ? 'the panel did not split, so no model was party to a split to hold it' : '',
    ].filter(Boolean);
    reasons.push(
      c2
        ? 'Pressure-robust (C2): passed; no party flipped and at most one conceded.'
        : `Pressure-robust (C2): not reached${why.length > 0 ? `: ${why.join('; ')}` : ''}.`,
    );
  }
  const noiseFloor =
    view.within_spread !== undefined && view.between_spread !== undefined
      ? `Noise floor against the split: each model's own re-rolls differ by ${fixed(view.within_spread)} on average (cosine distance${view.embedder ? ` in ${view.embedder}` : ''}); the models differ from one another by ${fixed(view.between_spread)}. DRI = ${dri === undefined ? '?' : fixed(dri)}, against a threshold of ${thresholds.driMin} and an absolute floor of ${thresholds.betweenFloor} between models.`
      : dri !== undefined
        ? `DRI = ${fixed(dri)}, against a threshold of ${thresholds.driMin}.`
        : undefined;
  const persistence =
    view.split_persistence === undefined
      ? undefined
      : `Paraphrase persistence: the split held in ${percent(view.split_persistence)} of ${view.k ?? 'the'} rewording${view.k === 1 ? '' : 's'} of the question${view.runs && view.runs > 1 ? ' (median over runs)' : ''}; C1 needs ${percent(thresholds.persistenceMin)}.`;
  const agreement =
    view.runs === undefined
      ? undefined
      : view.runs === 1
        ? 'One run of the whole protocol; run-to-run agreement was not measured.'
        : `${view.runs} independent runs agreed on the tier in ${percent(view.agreement ?? 0)} of run pairs${view.dri_range ? `; DRI ranged from ${fixed(view.dri_range[0])} to ${fixed(view.dri_range[1])}` : ''}.`;
  const judges =
    view.judges && view.judges.length > 0
      ? `Moves were labelled by ${view.judges.join(', ')} (off the panel, blind to names), a majority deciding${view.kappa !== undefined && view.kappa !== null ? `; inter-judge agreement (Fleiss' kappa) ${fixed(view.kappa, 2)}` : ''}.`
      : undefined;
  const method = methodLabel(view.method_version);
  const stanceRuns = (view.per_run ?? []).map((run) => run.stance ?? null);
  const stance = stanceTables(view);
  const lines = stanceLines(stanceRuns);
  return {
    state: 'tested',
    summary,
    reasons,
    ...(method ? { method } : {}),
    ...(stance.length > 0 ? { stance } : {}),
    ...(lines.measuredMoves.length > 0 ? { measuredMoves: lines.measuredMoves } : {}),
    ...(lines.judgeAgreement ? { judgeAgreement: lines.judgeAgreement } : {}),
    ...(lines.disagreements.length > 0 ? { disagreements: lines.disagreements } : {}),
    ...(lines.noise.length > 0 ? { noise: lines.noise } : {}),
    ...(noiseFloor ? { noiseFloor } : {}),
    ...(persistence ? { persistence } : {}),
    ...(agreement ? { agreement } : {}),
    ...(judges ? { judges } : {}),
    moves,
    ...(view.evidence_url ? { evidenceUrl: view.evidence_url } : {}),
  };
}
