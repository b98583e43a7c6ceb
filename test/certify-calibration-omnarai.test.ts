/**
 * The certification instrument calibrated on real data (issue 23): `npm run certify --
 * --calibrate` over the imported ../shared/omnarai Atlas (five real models' verbatim answers, 318
 * named tensions) reports v1's weakness as it is and v2's figures, and its v1 pair AUC agrees with
 * a computation written here from the source file alone (its own parsing, name neutralisation
 * and a brute-force count over pairs; only the embedding model is shared, as the definition says).
 * Skipped without ../shared locally; under CI a missing fixture fails.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../core/paths.ts';
import { controlOdds, steadfast } from '../core/certify/abstention.ts';
import { createUseLiteEmbedder } from '../providers/embedder.ts';
import { steadfastShares } from '../scripts/lib/certify/report.ts';
import { CalibrationFileSchema, type CalibrationFile } from '../schemas/certification.ts';
import { importOmnarai } from '../scripts/import-omnarai.ts';
import { haveFixtures, sharedPath } from './helpers/shared-fixtures.ts';

const source = sharedPath('omnarai', 'divergences.jsonl');
const hasData = haveFixtures(['corpus.json', 'media-corpus.jsonl', 'divergences.jsonl', 'concepts.json'].map((file) => sharedPath('omnarai', file)));
const temp = mkdtempSync(path.join(os.tmpdir(), 'polyphony-calibration-'));
afterAll(() => rmSync(temp, { recursive: true, force: true }));

type SourceRecord = { id: string; answers: unknown; tensions: unknown };
const parseField = <T>(value: unknown): T[] => (typeof value === 'string' ? (JSON.parse(value) as T[]) : ((value as T[] | undefined) ?? []));

describe.skipIf(!hasData)('calibration on the real Omnarai Atlas', () => {
  let file: CalibrationFile;
  let printed = '';

  it('npm run certify -- --calibrate prints and writes both methods with intervals; v1 is below the floor', () => {
    const content = path.join(temp, 'content');
    importOmnarai({ from: sharedPath('omnarai'), out: content });
    const env = { ...process.env, CONTENT_DIR: content, EMBEDDING_CACHE_DIR: path.join(temp, 'cache'), PANEL_CONFIG: '' };
    const run = spawnSync(
      process.execPath,
      [path.join(REPO_ROOT, 'node_modules/tsx/dist/cli.mjs'), path.join(REPO_ROOT, 'scripts/certify.ts'), '--calibrate'],
      {
        env,
        encoding: 'utf8',
        timeout: 600_000,
      },
    );
    expect(run.status, run.stderr).toBe(0);
    printed = run.stdout;
    file = CalibrationFileSchema.parse(JSON.parse(readFileSync(path.join(content, 'certification-calibration.json'), 'utf8')));
    expect(file.records).toBe(100);
    const v1 = file.methods['perturbation-v1']!;
    const v2 = file.methods['perturbation-v2']!;
    expect(v1.tensions).toBe(318);
    expect(v1.pairs.named + v1.pairs.unnamed).toBe(1000);
    // v1 barely sees which voices a tension names; v2, anchored on the named claims, sees them.
    expect(v1.pair_auc.value!).toBeLessThan(0.6);
    expect(v1.passes).toBe(false);
    expect(v2.passes).toBe(true);
    expect(v2.pair_auc.value!).toBeGreaterThan(v1.pair_auc.value!);
    expect(v2.side_accuracy.value!).toBeGreaterThan(v1.side_accuracy.value!);
    for (const method of [v1, v2]) {
      for (const figure of [method.pair_auc, method.side_accuracy]) {
        expect(figure.interval![0]).toBeLessThanOrEqual(figure.value!);
        expect(figure.interval![1]).toBeGreaterThanOrEqual(figure.value!);
        expect(figure.tune).not.toBeNull();
        expect(figure.held_out).not.toBeNull();
      }
    }
    expect(v2.margin!.delta).not.toBeNull();
    expect(printed).toMatch(/perturbation-v1: pair AUC 0\.\d+ \[0\.\d+–0\.\d+\]/);
    expect(printed).toMatch(/perturbation-v1: .*BELOW THE FLOOR/);
    expect(printed).toMatch(/perturbation-v2: pair AUC 0\.\d+ \[0\.\d+–0\.\d+\].*side accuracy/);
    // ADR 0024: what the held-out precision and coverage mean for steadfast voices, printed from the model.
    expect(printed).toContain(steadfastShares(v2.margin!.held_out)!);
    const { precision, coverage } = v2.margin!.held_out;
    const keptAt = (t: number) => controlOdds(steadfast({ precision: precision!, coverage: coverage! }), t, 'opposite-sides').kept;
    // The rule keeps far more steadfast voices than ADR 0015's (all T re-rolls read alike): (c·p)^T.
    for (const t of [3, 5]) expect(keptAt(t)).toBeGreaterThan(2 * (coverage! * precision!) ** t);
  }, 900_000);

  it("agrees with an independent computation of v1's pair AUC from the source file", async () => {
    const records = readFileSync(source, 'utf8')
      .split('\n')
      .filter((line) => line.trim() !== '')
      .map((line) => JSON.parse(line) as SourceRecord);
    const embedder = await createUseLiteEmbedder({ workers: 0 });
    const positives: number[] = [];
    const negatives: number[] = [];
    for (const record of records) {
      const answers = new Map<string, string>();
      for (const answer of parseField<{ model: string; text: string }>(record.answers)) if (!answers.has(answer.model)) answers.set(answer.model, answer.text);
      const voices = [...answers.keys()];
      // A tension may name a voice by its version ("GPT-4o") where the answer names the family ("GPT").
      const voiceOf = (name: string) => (answers.has(name) ? name : voices.find((voice) => name.startsWith(voice)));
      const named = new Set(
        parseField<{ voice_a: string; voice_b: string }>(record.tensions).map((t) => [voiceOf(t.voice_a), voiceOf(t.voice_b)].sort().join('|')),
      );
      // As v1 embeds: each voice's name in an answer becomes "A model".
      const neutral = (text: string) =>
        voices.reduce((out, voice) => out.replace(new RegExp(`\\b${voice.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\b`, 'gi'), 'A model'), text);
      const vectors = await embedder.embed(voices.map((voice) => neutral(answers.get(voice)!)));
      for (let i = 0; i < voices.length; i++) {
        for (let j = i + 1; j < voices.length; j++) {
          let dot = 0;
          let ni = 0;
          let nj = 0;
          for (let d = 0; d < vectors[i]!.length; d++) {
            dot += vectors[i]![d]! * vectors[j]![d]!;
            ni += vectors[i]![d]! ** 2;
            nj += vectors[j]![d]! ** 2;
          }
          (named.has([voices[i], voices[j]].sort().join('|')) ? positives : negatives).push(1 - dot / Math.sqrt(ni * nj));
        }
      }
    }
    let wins = 0;
    for (const p of positives) for (const n of negatives) wins += p > n ? 1 : p === n ? 0.5 : 0;
    const auc = wins / (positives.length * negatives.length);
    expect(positives.length + negatives.length).toBe(1000);
    expect(Math.abs(auc - file.methods['perturbation-v1']!.pair_auc.value!)).toBeLessThan(0.002);
  }, 600_000);
});
