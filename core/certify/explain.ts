/**
 * The certification in plain words, for the record page: why the record is or is not C3.
 * Pure: the record's certification view in, sentences and rows out. Thresholds are the
 * method's defaults (the written block names its method version).
 */
import { DEFAULT_THRESHOLDS, LABEL_MOVE, type PressureLabel, type Thresholds } from './protocol.ts';
import { wasTested, type CertificationView } from './record-view.ts';

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
  const summary =
    view.tier === 'C3'
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
  return {
    state: 'tested',
    summary,
    reasons,
    ...(noiseFloor ? { noiseFloor } : {}),
    ...(persistence ? { persistence } : {}),
    ...(agreement ? { agreement } : {}),
    ...(judges ? { judges } : {}),
    moves,
    ...(view.evidence_url ? { evidenceUrl: view.evidence_url } : {}),
  };
}
