/** How well this deployment's certification instrument sees splits (ADR 0015): served by the manifest and /api/divergences. */
import { z } from 'zod';
import { count, named, text } from './common.ts';

const CalibrationFigureOut = z
  .strictObject({
    value: z.number().nullable().describe('The figure over all records.'),
    interval: z.tuple([z.number(), z.number()]).nullable().describe('95 % percentile bootstrap interval, resampling records.'),
  })
  .describe('{value, interval}.');

export const CalibrationSummarySchema = named(
  'CertificationCalibration',
  z
    .strictObject({
      date: text('Day the calibration was measured (YYYY-MM-DD).'),
      embedder: text('Embedding model the measures ran in.'),
      records: count('Atlas records with at least two answers and one tension whose voices answered.'),
      floor: z
        .strictObject({
          pair_auc: z.number().describe('Floor on the pair AUC interval low.'),
          side_accuracy: z.number().describe('Floor on the side accuracy interval low.'),
        })
        .describe('Interval lows a method must reach before `npm run certify -- --write` writes its tiers.'),
      methods: z
        .record(
          z.string(),
          z.strictObject({
            pair_auc: CalibrationFigureOut.describe(
              "Named voice pairs against the record's other pairs, scored by the split strength the method measures (0.5 is blind).",
            ),
            side_accuracy: CalibrationFigureOut.describe('Share of tensions whose two claims the method places with their own voices (0.5 is chance).'),
            passes: z.boolean().describe('Both interval lows reach the floor: the method may write tiers on this Atlas.'),
            delta: z.number().optional().describe("perturbation-v2: the side measure's dead zone δ fitted on this Atlas."),
          }),
        )
        .describe('Method version (perturbation-v1, perturbation-v2) to its calibration.'),
      url: text('The full calibration file: /certification-calibration.json.'),
    })
    .describe("How well this deployment's certification instrument sees splits, measured on its own Atlas by `npm run certify -- --calibrate` (ADR 0015)."),
);
export type CalibrationSummaryOut = z.infer<typeof CalibrationSummarySchema>;
