/**
 * Where perturbation-v2 reaches readers (issue 23): the calibration served beside the manifest
 * and the index, the per-run stance readings on the full record, the method that measured the
 * tier, and the undecided verdict as a state of its own, never a plain C0.
 */
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { writeFixtureContent } from '../devkit/fixture-content.ts';
import { loadContent } from '../content-files/load-content.ts';
import { deriveDivergence, deriveConceptGraph, toSummary, type DivergenceFull } from '../core/records.ts';
import { buildManifest } from '../core/build-manifest.ts';
import { filterRecords, indexEnvelope } from '../core/atlas.ts';
import { calibrationSummary, CALIBRATION_URL, methodCalibrationLine } from '../core/certify/calibration-summary.ts';
import { explainCertification, stanceTables } from '../core/certify/explain.ts';
import type { WrittenResult } from '../core/certify/record-view.ts';
import { writeCalibration } from '../scripts/lib/public-files.ts';
import { CALIBRATION_FILE, CalibrationFileSchema, type StanceRun } from '../schemas/certification.ts';
import { DivergenceIndexSchema, DivergenceRecordSchema, ManifestSchema } from '../schemas/api.ts';
import type { Certification } from '../schemas/content.ts';
import { summarizeDivergenceIndex, summarizeDivergenceRecord } from '../api/mcp/summaries.ts';

const calibrationFile = CalibrationFileSchema.parse({
  date: '2026-11-26',
  embedder: 'test-embedder',
  records: 40,
  halves: 'hash of the id',
  bootstrap: { resamples: 100, seed: 1, level: 0.95 },
  floor: { pair_auc: 0.6, side_accuracy: 0.8 },
  methods: {
    'perturbation-v2': {
      pair_auc: { value: 0.65, interval: [0.612, 0.683], tune: 0.66, held_out: 0.64 },
      side_accuracy: { value: 0.893, interval: [0.859, 0.927], tune: 0.9, held_out: 0.886 },
      records: 40,
      tensions: 120,
      pairs: { named: 100, unnamed: 300 },
      passes: true,
      margin: { delta: 0.031, precision_target: 0.9, tune: { precision: 0.9, coverage: 0.8 }, held_out: { precision: 0.87, coverage: 0.81 } },
    },
    'perturbation-v1': {
      pair_auc: { value: 0.559, interval: [0.534, 0.586], tune: 0.57, held_out: 0.54 },
      side_accuracy: { value: 0.764, interval: [0.719, 0.814], tune: 0.81, held_out: 0.71 },
      records: 40,
      tensions: 120,
      pairs: { named: 100, unnamed: 300 },
      passes: false,
    },
  },
});

const stance = (flipped: boolean): StanceRun => ({
  readings: [
    {
      voices: ['Alder', 'Birch'],
      control: { Alder: ['A', 'A', 'A'], Birch: ['B', 'B', 'neither'] },
      held: { Alder: 'A', Birch: null },
      stands: null,
      paraphrase: { Alder: ['A', 'neither'], Birch: ['B', 'B'] },
      persistence: { Alder: 0.5, Birch: 1 },
      pressure: { Alder: { p2: 'A', p3: flipped ? 'B' : 'A' } },
    },
  ],
  measured: { Alder: { p2: 'held', p3: flipped ? 'flipped' : 'held' } },
  judge_agreement: flipped ? 0.5 : 1,
  disagreements: flipped ? [{ model: 'Alder', pressure: 'p3', measured: 'flipped', judged: 'held' }] : [],
  noise: ['Birch'],
});

const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

function records(blocks: Record<string, Certification>, results: Record<string, WrittenResult> = {}): DivergenceFull[] {
  const dir = writeFixtureContent();
  dirs.push(dir);
  const content = loadContent(dir);
  return content.divergences.map((entry) =>
    deriveDivergence(
      { ...entry.data, certification: blocks[entry.data.id] ?? entry.data.certification },
      entry.body,
      content.registry,
      [],
      results[entry.data.id],
    ),
  );
}

const v2Block: Certification = {
  tier: 'C1',
  runs: 2,
  method_version: 'perturbation-v2',
  verdict: 'decided',
  delta: 0.031,
  judge_agreement: 0.75,
  date: '2026-11-26',
};
const undecidedBlock: Certification = {
  tier: 'C1',
  runs: 5,
  max_runs: 5,
  runs_rule: 'auto',
  method_version: 'perturbation-v2',
  verdict: 'undecided',
  tier_share: 0.4,
  tier_interval: [0.118, 0.769],
  date: '2026-11-26',
};
const result: WrittenResult = {
  tiers: ['C1', 'C1'],
  dri: [0, 0],
  parties: [['Alder'], ['Alder']],
  flipped: [['Alder'], []],
  conceded: [[], []],
  labels: [{ Alder: { p2: 'held', p3: 'held' } }, { Alder: { p2: 'held', p3: 'held' } }],
  stance: [stance(true), stance(false)],
};

describe('certification surfaces (perturbation-v2)', () => {
  it("the full record carries each run's stance readings, the method and the verdict, and validates against the API schema", () => {
    const [first] = records({}).map((record) => record.id);
    const record = records({ [first!]: v2Block }, { [first!]: result }).find((entry) => entry.id === first)!;
    expect(record.certification.method_version).toBe('perturbation-v2');
    expect(record.certification.per_run!.map((run) => run.stance?.measured.Alder?.p3)).toEqual(['flipped', 'held']);
    const parsed = DivergenceRecordSchema.parse(JSON.parse(JSON.stringify(record)));
    expect(parsed.certification.per_run![0]!.stance!.readings[0]!.control.Alder).toEqual(['A', 'A', 'A']);
    expect(parsed.certification.judge_agreement).toBe(0.75);
    // A v1 result line carries no stance: per_run has none either.
    const { stance: _dropped, ...v1 } = result;
    const plain = records({ [first!]: { tier: 'C1', method_version: 'perturbation-v1', date: '2026-11-26' } }, { [first!]: v1 }).find(
      (entry) => entry.id === first,
    )!;
    expect(plain.certification.per_run!.every((run) => !('stance' in run))).toBe(true);
  });

  it('an undecided record reads as undecided on its summary, is not certified, and no cert filter returns it', () => {
    const ids = records({}).map((record) => record.id);
    const all = records({ [ids[0]!]: undecidedBlock, [ids[1]!]: v2Block });
    const undecided = all.find((entry) => entry.id === ids[0])!;
    const summary = toSummary(undecided);
    expect(summary.certification).toMatchObject({ tier: 'C1', method_version: 'perturbation-v2', verdict: 'undecided', tier_interval: [0.118, 0.769] });
    expect(Object.keys(summary.certification).sort()).toEqual(['method_version', 'tier', 'tier_interval', 'tier_source', 'verdict']);
    expect(toSummary(all.find((entry) => entry.id === ids[1])!).certification).not.toHaveProperty('verdict');
    expect(filterRecords(all, undefined, 'certified').map((entry) => entry.id)).not.toContain(ids[0]);
    expect(filterRecords(all, undefined, 'C1').map((entry) => entry.id)).toContain(ids[1]);
    const envelope = DivergenceIndexSchema.parse(indexEnvelope(all, all, { id: null, search: null, cert: null }, calibrationSummary(calibrationFile)));
    expect(envelope.undecided_count).toBe(1);
    expect(envelope.certified_count).toBe(all.filter((entry) => entry.certification.tier !== 'C0' && entry.id !== ids[0]).length);
    expect(envelope.calibration?.methods['perturbation-v1']?.passes).toBe(false);
    expect(envelope.calibration?.url).toBe(CALIBRATION_URL);
    // Without a calibration the envelope does not invent one.
    expect(indexEnvelope(all, all, { id: null, search: null, cert: null })).not.toHaveProperty('calibration');
  });

  it('the manifest says how well the instrument sees splits, per method, with intervals and the floor', () => {
    const all = records({});
    const summary = calibrationSummary(calibrationFile);
    expect(Object.keys(summary.methods)).toEqual(['perturbation-v1', 'perturbation-v2']);
    expect(summary.methods['perturbation-v2']).toEqual({
      pair_auc: { value: 0.65, interval: [0.612, 0.683] },
      side_accuracy: { value: 0.893, interval: [0.859, 0.927] },
      passes: true,
      delta: 0.031,
    });
    const input = {
      works: [],
      divergences: all,
      graph: deriveConceptGraph([], []),
      audioTracks: 0,
      registry: loadContent(dirs[0]!).registry,
      seedFiles: [],
      corpusRev: 'x',
      generatedAt: '2026-11-26T00:00:00.000Z',
    };
    const manifest = ManifestSchema.parse(buildManifest({ ...input, calibration: summary }));
    expect(manifest.certification_calibration).toEqual(summary);
    // The calibration is not a count: the attested counts hash does not depend on it.
    expect(manifest.hashes.manifest).toBe(buildManifest(input).hashes.manifest);
    expect(buildManifest(input)).not.toHaveProperty('certification_calibration');
    expect(methodCalibrationLine('perturbation-v1', summary.methods['perturbation-v1']!, summary.floor)).toBe(
      'perturbation-v1: pair AUC 0.56 (95 % CI 0.53–0.59), side accuracy 0.76 (95 % CI 0.72–0.81); below the floor (interval lows ≥ 0.6 AUC and ≥ 0.8 side accuracy)',
    );
  });

  it('the build serves the calibration file byte for byte at /certification-calibration.json', () => {
    const dir = writeFixtureContent();
    dirs.push(dir);
    const publicDir = path.join(os.tmpdir(), `polyphony-public-${process.pid}`);
    dirs.push(publicDir);
    expect(writeCalibration(loadContent(dir), publicDir)).toBe(false);
    const bytes = `${JSON.stringify(calibrationFile, null, 2)}\n`;
    writeFileSync(path.join(dir, CALIBRATION_FILE), bytes);
    const content = loadContent(dir);
    expect(content.calibration?.methods['perturbation-v2']?.margin?.delta).toBe(0.031);
    expect(writeCalibration(content, publicDir)).toBe(true);
    expect(existsSync(path.join(publicDir, CALIBRATION_FILE))).toBe(true);
    expect(readFileSync(path.join(publicDir, CALIBRATION_FILE), 'utf8')).toBe(bytes);
  });

  it('the record page explanation names the method, tabulates each side per re-roll, paraphrase and pressure, and lists judge disagreements', () => {
    const [first] = records({}).map((record) => record.id);
    const record = records({ [first!]: v2Block }, { [first!]: result }).find((entry) => entry.id === first)!;
    const explained = explainCertification(record.certification);
    if (explained.state !== 'tested') throw new Error('expected a tested record');
    expect(explained.method).toBe('perturbation-v2: stance on the named claims');
    const tables = stanceTables(record.certification);
    expect(tables).toHaveLength(1);
    expect(tables[0]!.stands).toEqual([null, null]);
    expect(tables[0]!.rows.map((row) => [row.run, row.voice, row.rerolls.join(''), row.held, row.paraphrases.join(''), row.p2, row.p3])).toEqual([
      [1, 'Alder', 'AAA', 'A', 'A—', 'A', 'B'],
      [1, 'Birch', 'BB—', null, 'BB', null, null],
      [2, 'Alder', 'AAA', 'A', 'A—', 'A', 'A'],
      [2, 'Birch', 'BB—', null, 'BB', null, null],
    ]);
    expect(explained.disagreements).toEqual(['Run 1: Alder under P3: measured flipped, judges said held.']);
    expect(explained.judgeAgreement).toContain('50 %, 100 %');
    expect(explained.noise?.[0]).toContain('Birch did not keep a side');
    expect(explained.measuredMoves?.[0]).toBe('Run 1: Alder held under P2, flipped under P3.');
  });

  it('an undecided record explains itself as undecided with its interval, never as its modal tier', () => {
    const [first] = records({}).map((record) => record.id);
    const record = records({ [first!]: undecidedBlock }).find((entry) => entry.id === first)!;
    const explained = explainCertification(record.certification);
    expect(explained.summary).toMatch(/^Undecided: after 5 runs \(the cap is 5\)/);
    expect(explained.summary).toContain('40 % of runs (95 % interval 12 %–77 %)');
    expect(explained.summary).not.toContain('This record is C1');
  });

  it('the MCP read tool says undecided with its interval and the method, and quotes the calibration on the index', () => {
    const ids = records({}).map((record) => record.id);
    const all = records({ [ids[0]!]: undecidedBlock, [ids[1]!]: v2Block });
    const json = (value: unknown) => JSON.parse(JSON.stringify(value)) as Record<string, unknown>;
    const undecided = summarizeDivergenceRecord(json(all.find((entry) => entry.id === ids[0])));
    expect(undecided).toContain('certification undecided by perturbation-v2 (most frequent tier C1, 95 % CI 12 %–77 %; not a finding)');
    expect(summarizeDivergenceRecord(json(all.find((entry) => entry.id === ids[1])))).toContain('certification C1 by perturbation-v2;');
    const index = summarizeDivergenceIndex(json(indexEnvelope(all, all, { id: null, search: null, cert: null }, calibrationSummary(calibrationFile))));
    expect(index).toContain('1 undecided, their tier not a finding');
    expect(index).toContain('perturbation-v1 pair AUC 0.56 (95 % CI 0.53–0.59), side accuracy 0.76 (95 % CI 0.72–0.81), below the floor');
    expect(index).toContain('/certification-calibration.json');
  });
});
