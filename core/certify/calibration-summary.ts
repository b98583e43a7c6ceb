/**
 * How well this deployment's instrument sees splits, as every surface states it (manifest,
 * /api/divergences, record and Atlas pages): per method, pair AUC and side accuracy with their
 * 95 % intervals and whether the method reaches the floor. The full calibration file
 * (`certification-calibration.json`, written by `npm run certify -- --calibrate`) is served
 * beside it as a static twin. Pure: the file in, the summary out.
 */
import type { CalibrationFile } from '../../schemas/certification.ts';

/** Public address of the calibration file. */
export const CALIBRATION_URL = '/certification-calibration.json';

export interface CalibrationFigure {
  value: number | null;
  interval: [number, number] | null;
}

export interface MethodCalibrationSummary {
  pair_auc: CalibrationFigure;
  side_accuracy: CalibrationFigure;
  /** Both interval lows reach the floor: the method may write tiers on this Atlas. */
  passes: boolean;
  /** perturbation-v2: the side measure's dead zone δ fitted on this Atlas. */
  delta?: number;
}

export interface CalibrationSummary {
  date: string;
  embedder: string;
  records: number;
  floor: { pair_auc: number; side_accuracy: number };
  methods: Record<string, MethodCalibrationSummary>;
  url: string;
}

export function calibrationSummary(file: CalibrationFile): CalibrationSummary {
  const methods: Record<string, MethodCalibrationSummary> = {};
  for (const [method, figures] of Object.entries(file.methods).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    const delta = figures.margin?.delta;
    methods[method] = {
      pair_auc: { value: figures.pair_auc.value, interval: figures.pair_auc.interval ? [...figures.pair_auc.interval] : null },
      side_accuracy: { value: figures.side_accuracy.value, interval: figures.side_accuracy.interval ? [...figures.side_accuracy.interval] : null },
      passes: figures.passes,
      ...(delta !== undefined && delta !== null ? { delta } : {}),
    };
  }
  return { date: file.date, embedder: file.embedder, records: file.records, floor: { ...file.floor }, methods, url: CALIBRATION_URL };
}

const fixed = (value: number | null) => (value === null ? '?' : value.toFixed(2));

/** One figure in words: "0.65 (95 % CI 0.61–0.68)". */
export function figureText(figure: CalibrationFigure): string {
  return figure.interval ? `${fixed(figure.value)} (95 % CI ${fixed(figure.interval[0])}–${fixed(figure.interval[1])})` : fixed(figure.value);
}

/** One method's calibration in one line, for pages and tool output. */
export function methodCalibrationLine(method: string, figures: MethodCalibrationSummary, floor: CalibrationSummary['floor']): string {
  return `${method}: pair AUC ${figureText(figures.pair_auc)}, side accuracy ${figureText(figures.side_accuracy)}; ${
    figures.passes ? 'passes' : 'below'
  } the floor (interval lows ≥ ${floor.pair_auc} AUC and ≥ ${floor.side_accuracy} side accuracy)`;
}
