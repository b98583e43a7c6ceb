/**
 * The certification instrument end to end against the local fake provider: a scripted panel
 * over a small fixture Atlas yields the tiers its behaviour implies; a certifying negative
 * control blocks writing; a resumed run repeats no paid call; cost is usage × prices.
 * The CLI (npm run certify: the engine embedder, --plan) is in certify-cli.test.ts.
 */
import { readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { deriveDivergence, toSummary } from '../core/records.ts';
import type { PanelConfig } from '../providers/panel-config.ts';
import { EvidenceLineSchema } from '../schemas/certification.ts';
import { certify, type CertifyOptions } from '../scripts/lib/certify/certify.ts';
import { readEvidence } from '../content-files/evidence-log.ts';
import { writtenResult } from '../scripts/lib/certify/published-evidence.ts';
import { certifyPanel } from '../scripts/lib/certify/panel.ts';
import { calibrateContent } from '../scripts/lib/certify/calibrate.ts';
import { createLocalSpendGuard } from '../scripts/lib/certify/spend-guard.ts';
import { loadContent } from '../content-files/load-content.ts';
import { startFakeOpenAI, type FakeOpenAI } from '../devkit/fake-openai.ts';
import { panelMember, scriptWorld, stanceEmbedder, type WorldScript } from '../devkit/fake-world.ts';
import { writeFixtureContent } from '../devkit/fixture-content.ts';
import {
  BASE_WORLD,
  PANEL,
  PRICES,
  QUESTIONS,
  USAGE,
  UTILITIES,
  panelConfig as certifyPanelConfig,
  writeRecord as writeCertifyRecord,
} from './helpers/certify-world.ts';

let fake: FakeOpenAI;
let world: WorldScript;
let contentDir: string;

const panelConfig = (): PanelConfig => certifyPanelConfig(fake.baseURL);
const writeRecord = (id: string, question: string): void => writeCertifyRecord(contentDir, id, question);

function options(overrides: Partial<CertifyOptions> = {}): CertifyOptions {
  return {
    ...certifyPanel(panelConfig(), {}),
    contentDir,
    selection: { ids: ['TST-D1', 'TST-D3', 'TST-D4', 'TST-D5'] },
    settings: { t: 3, k: 2, runs: 1, controls: 1, thresholds: { driMin: 1.5, betweenFloor: 0.08, persistenceMin: 0.75 } },
    embedder: stanceEmbedder(),
    guard: createLocalSpendGuard(5),
    concurrency: 4,
    now: () => new Date('2026-11-24T12:00:00Z'),
    // These tests pin perturbation-v1's behaviour; v2's are in certify-stance.test.ts.
    method: 'perturbation-v1',
    floor: { pair_auc: 0, side_accuracy: 0 },
    ...overrides,
  };
}

/** The file without its top-level `certification:` entry (the key line and its indented lines). */
const withoutCertification = (text: string) => text.replace(/^certification:.*\n(?:[ \t].*\n)*/m, '');
const chatRequests = () => fake.requests.filter((request) => request.path === '/v1/chat/completions');
const recordBytes = () =>
  Object.fromEntries(
    readdirSync(path.join(contentDir, 'divergences'))
      .filter((name) => name.endsWith('.md'))
      .map((name) => [name, readFileSync(path.join(contentDir, 'divergences', name), 'utf8')]),
  );

beforeAll(async () => {
  fake = await startFakeOpenAI();
});
afterAll(async () => {
  await fake.close();
});
beforeEach(async () => {
  fake.reset();
  world = structuredClone(BASE_WORLD);
  scriptWorld(fake, () => world, PANEL, Object.values(UTILITIES), USAGE);
  contentDir = writeFixtureContent();
  writeRecord('TST-D3', QUESTIONS.flip);
  writeRecord('TST-D4', QUESTIONS.converge);
  writeRecord('TST-D5', QUESTIONS.fragile);
  // --write needs this Atlas's calibration (here measured on the fixture, against a floor of 0).
  await calibrateContent({ contentDir, embedder: stanceEmbedder(), methods: ['perturbation-v1'], resamples: 50, write: true });
  return () => rmSync(contentDir, { recursive: true, force: true });
});

describe('certification against a scripted panel', () => {
  it('yields the tiers the scripted behaviour implies and writes only the certification block', async () => {
    const before = recordBytes();
    const report = await certify(options({ write: true }));
    const tiers = Object.fromEntries(report.records.map((record) => [record.id, record.certification?.tier]));
    // D1: a held, paraphrase-robust split. D3: Birch flips facing its most-opposed peer, Cedar concedes.
    // D4: the panel converges. D5: the split melts on every rewording, but nobody moves under pressure.
    expect(tiers).toEqual({ 'TST-D1': 'C3', 'TST-D3': 'C1', 'TST-D4': 'C0', 'TST-D5': 'C2' });
    expect(report.broken).toBe(false);
    expect(report.controls.tiers).toEqual([{ subject: 'control-1', tier: 'C0' }]);
    const d3 = report.records.find((record) => record.id === 'TST-D3')!.certification!;
    expect(d3).toMatchObject({
      flips: 1,
      concedes: 1,
      k: 2,
      t: 3,
      runs: 1,
      agreement: null,
      kappa: 1,
      embedder: 'test-stance-embedder',
      judges: ['Chair', 'Backup', 'Judge'],
      paraphraser: 'Chair',
      date: '2026-11-24',
      evidence: 'TST-D3.certification.jsonl',
    });

    // Only the certification block changed: without it, each file is the same bytes as before.
    const after = recordBytes();
    for (const name of ['TST-D1.md', 'TST-D3.md', 'TST-D4.md', 'TST-D5.md']) {
      expect(after[name]).not.toBe(before[name]);
      expect(after[name]).toContain('certification:\n  tier: ');
      expect(withoutCertification(after[name]!)).toBe(withoutCertification(before[name]!));
    }
    expect(after['TST-D2.md']).toBe(before['TST-D2.md']);

    // The content (evidence logs included) still validates, and the build's derivation reads the written block.
    const content = loadContent(contentDir);
    const d1 = content.divergences.find((entry) => entry.data.id === 'TST-D1')!;
    expect(d1.data.certification).toMatchObject({ tier: 'C3', flips: 0 });
    const written = report.records.find((record) => record.id === 'TST-D1')!.certification!;
    // The build passes the log's written result: the tier is measured here (issue 28).
    const derived = deriveDivergence(d1.data, d1.body, content.registry, [], writtenResult(contentDir, d1.data));
    const measured = { kind: 'measured', evidence_url: '/records/TST-D1.certification.jsonl' };
    expect(toSummary(derived).certification).toEqual({
      tier: 'C3',
      dri: written.dri,
      split_persistence: written.split_persistence,
      method_version: 'perturbation-v1',
      tier_source: measured,
    });
    const { evidence: _file, ...block } = written;
    const { per_run: _runs, ...view } = derived.certification;
    expect(view).toEqual({ ...block, evidence_url: '/records/TST-D1.certification.jsonl', tier_source: measured });
    // Without the log's result (a block typed to look like it), the same block is stated in the content.
    expect(deriveDivergence(d1.data, d1.body, content.registry).certification.tier_source).toEqual({ kind: 'content' });

    // Every evidence line validates; every call of the plan is logged once with its prompt and verbatim answer.
    const lines = ['TST-D1', 'TST-D3', 'TST-D4', 'TST-D5', 'negative-controls'].flatMap((name) =>
      readEvidence(path.join(contentDir, 'divergences', `${name}.certification.jsonl`)),
    );
    for (const line of lines) expect(EvidenceLineSchema.safeParse(line).success).toBe(true);
    const calls = lines.filter((line) => line.kind === 'call');
    expect(calls).toHaveLength(report.plan.calls);
    expect(new Set(calls.map((line) => line.key)).size).toBe(calls.length);
    expect(chatRequests()).toHaveLength(report.plan.calls);
    expect(
      lines
        .filter((line) => line.kind === 'result')
        .map((line) => line.subject)
        .sort(),
    ).toEqual(['TST-D1', 'TST-D3', 'TST-D4', 'TST-D5', 'control-1']);
    const d3Result = lines.find((line) => line.kind === 'result' && line.subject === 'TST-D3');
    expect(d3Result).toMatchObject({
      flipped: [['Birch']],
      conceded: [['Cedar']],
      labels: [{ Alder: { p2: 'held', p3: 'held' }, Birch: { p2: 'flipped', p3: 'held' }, Cedar: { p2: 'held', p3: 'conceded' } }],
    });
    const judged = calls.filter((line) => line.kind === 'call' && line.step === 'judge');
    expect(judged.every((line) => line.kind === 'call' && line.label !== null && !/Alder|Birch|Cedar/.test(JSON.stringify(line.messages)))).toBe(true);
  });

  it('an answer cut off at max_tokens is logged verbatim and marked truncated', async () => {
    // Cedar's first two calls stop at their token limit (certification does not re-ask: the cut answer is evidence).
    fake.script(PANEL.Cedar, [
      { kind: 'answer', content: 'Cedar says', finishReason: 'length' },
      { kind: 'answer', content: 'Cedar says YES and', finishReason: 'length' },
    ]);
    await certify(options({ selection: { ids: ['TST-D1'] } }));
    const calls = readEvidence(path.join(contentDir, 'divergences', 'TST-D1.certification.jsonl')).filter((line) => line.kind === 'call');
    const cut = calls.filter((line) => line.kind === 'call' && line.truncated === true);
    expect(cut.map((line) => line.kind === 'call' && [line.model, line.answer]).sort()).toEqual([
      ['Cedar', 'Cedar says'],
      ['Cedar', 'Cedar says YES and'],
    ]);
    expect(calls.length).toBeGreaterThan(cut.length);
    for (const line of calls) expect(EvidenceLineSchema.safeParse(line).success).toBe(true);
  });

  it('reports cost as usage × configured prices, and stays under the ceiling', async () => {
    const report = await certify(options({ selection: { ids: ['TST-D1'] } }));
    let expected = 0;
    for (const request of chatRequests()) {
      const price = PRICES[request.model!]!;
      expected += (USAGE.prompt_tokens * price.input_per_mtok + USAGE.completion_tokens * price.output_per_mtok) / 1e6;
    }
    expect(report.spentUsd).toBeCloseTo(expected, 12);
    const logged = readEvidence(path.join(contentDir, 'divergences', 'TST-D1.certification.jsonl')).concat(
      readEvidence(path.join(contentDir, 'divergences', 'negative-controls.certification.jsonl')),
    );
    expect(logged.reduce((sum, line) => sum + (line.kind === 'call' ? line.cost_usd : 0), 0)).toBeCloseTo(expected, 12);
    expect(report.spentUsd).toBeLessThanOrEqual(report.plan.estimatedCostUsd);
  });

  it('stops at the spending ceiling before a call could cross it', async () => {
    const report = await certify(options({ selection: { ids: ['TST-D1'] }, guard: createLocalSpendGuard(0.002), write: true }));
    expect(report.stopped).toMatch(/ceiling/);
    expect(report.spentUsd).toBeLessThanOrEqual(0.002);
    expect(report.records[0]!.written).toBe(false);
  });

  it('a certifying negative control marks the instrument broken and writes nothing', async () => {
    world['hexagon'] = { Alder: { stance: 'SIX' }, Birch: { stance: 'SEVEN' }, Cedar: { stance: 'SIX' } };
    const before = recordBytes();
    const report = await certify(options({ write: true, controlQuestions: ['How many sides does a hexagon have?'] }));
    expect(report.broken).toBe(true);
    expect(report.controls.certified).toEqual([{ subject: 'control-1', tier: 'C3' }]);
    expect(report.records.every((record) => !record.written)).toBe(true);
    expect(recordBytes()).toEqual(before);
    const lines = readEvidence(path.join(contentDir, 'divergences', 'TST-D1.certification.jsonl'));
    expect(lines.some((line) => line.kind === 'result')).toBe(false);
  });

  it('resumes after a kill without repeating a paid call', async () => {
    const controller = new AbortController();
    const first = await certify(
      options({
        write: true,
        concurrency: 2,
        signal: controller.signal,
        onProgress: (progress) => {
          if (progress.done >= 25) controller.abort();
        },
      }),
    );
    expect(first.stopped).toMatch(/interrupted/);
    expect(first.records.every((record) => !record.written)).toBe(true);
    const paidFirst = first.callsMade;
    expect(paidFirst).toBeGreaterThanOrEqual(25);
    expect(paidFirst).toBeLessThan(first.plan.calls);

    fake.requests.length = 0;
    const second = await certify(options({ write: true }));
    expect(second.plan.logged).toBe(paidFirst);
    expect(second.callsReused).toBe(paidFirst);
    expect(chatRequests()).toHaveLength(second.plan.calls - paidFirst);
    expect(second.records.map((record) => record.certification?.tier)).toEqual(['C3', 'C1', 'C0', 'C2']);
    const keys = readdirSync(path.join(contentDir, 'divergences'))
      .filter((name) => name.endsWith('.jsonl'))
      .flatMap((name) => readEvidence(path.join(contentDir, 'divergences', name)))
      .flatMap((line) => (line.kind === 'call' ? [line.key] : []));
    expect(new Set(keys).size).toBe(keys.length);
    expect(keys).toHaveLength(second.plan.calls);
  });

  it('a new model version behind the same name, or another blinding seed, is asked again', async () => {
    const first = await certify(options({ selection: { ids: ['TST-D1'] } }));
    fake.requests.length = 0;
    const config = panelConfig();
    config.panel[1]!.model = 'birch-live-2';
    fake.setDefault(
      'birch-live-2',
      panelMember(() => world, 'Birch', USAGE),
    );
    const second = await certify(options({ ...certifyPanel(config, {}), selection: { ids: ['TST-D1'] } }));
    // Birch's own calls (3 + 2 + 2 per subject) are new; so are the steps whose prompts carry
    // Birch's new answers (every P2 facing Birch as the peer, and the judges of Birch's moves).
    const birch = chatRequests().filter((request) => request.model === 'birch-live-2');
    expect(birch).toHaveLength(2 * (3 + 2 + 2));
    expect(
      chatRequests()
        .filter((request) => request.model === 'alder-live' || request.model === 'cedar-live')
        .every((request) => request.messages!.length === 4),
    ).toBe(true);
    expect(second.callsReused).toBeGreaterThan(0);
    expect(second.callsMade + second.callsReused).toBe(first.plan.calls);

    fake.requests.length = 0;
    await certify(options({ ...certifyPanel(config, {}), selection: { ids: ['TST-D1'] }, seed: 7 }));
    expect(chatRequests().length).toBeGreaterThan(0);
    expect(chatRequests().every((request) => ['chair-live', 'backup-live', 'judge-live'].includes(request.model!))).toBe(true);
  });

  it('--attempt measures afresh; the same attempt resumes', async () => {
    const first = await certify(options({ selection: { ids: ['TST-D1'] } }));
    fake.requests.length = 0;
    const fresh = await certify(options({ selection: { ids: ['TST-D1'] }, attempt: 'again' }));
    expect(fresh.plan.logged).toBe(0);
    expect(chatRequests()).toHaveLength(first.plan.calls);
    fake.requests.length = 0;
    const resumed = await certify(options({ selection: { ids: ['TST-D1'] }, attempt: 'again' }));
    expect(resumed.callsReused).toBe(first.plan.calls);
    expect(chatRequests()).toHaveLength(0);
  });

  it('a model naming itself is style, not a split: names are neutralised before embedding', async () => {
    const report = await certify(options({ embedder: stanceEmbedder(16, Object.keys(PANEL)) }));
    expect(report.broken).toBe(false);
    expect(report.controls.results[0]!.certification).toMatchObject({ tier: 'C0', between_spread: expect.any(Number) });
    expect(report.controls.results[0]!.certification.between_spread!).toBeLessThan(0.08);
    expect(report.records.map((record) => record.certification?.tier)).toEqual(['C3', 'C1', 'C0', 'C2']);
  });

  it('a record whose calls fail is reported, not written; the others are certified and written', async () => {
    world['most recent instruction'] = { Alder: { stance: 'YES' }, Birch: { stance: 'FAIL' }, Cedar: { stance: 'YES' } };
    const before = recordBytes();
    const report = await certify(options({ write: true }));
    const d3 = report.records.find((record) => record.id === 'TST-D3')!;
    expect(d3).toMatchObject({ written: false, tiers: [] });
    expect(d3.error).toMatch(/500|server/);
    expect(recordBytes()['TST-D3.md']).toBe(before['TST-D3.md']);
    expect(report.records.filter((record) => record.written).map((record) => record.id)).toEqual(['TST-D1', 'TST-D4', 'TST-D5']);
    // What was paid for before the failure stays in the log for the next attempt.
    expect(readEvidence(path.join(contentDir, 'divergences', 'TST-D3.certification.jsonl')).length).toBeGreaterThan(0);
  });

  it('a record the writer cannot edit safely is measured and reported, not written, and the others are', async () => {
    const file = path.join(contentDir, 'divergences', 'TST-D4.md');
    // A quoted key is valid YAML, but not the plain `certification:` line the writer edits.
    writeFileSync(file, readFileSync(file, 'utf8').replace("method: 'Asked verbatim.'\n", 'method: \'Asked verbatim.\'\n"certification": {tier: C0}\n'));
    expect(loadContent(contentDir).divergences).toHaveLength(5);
    const before = readFileSync(file);
    const report = await certify(options({ write: true }));
    const d4 = report.records.find((record) => record.id === 'TST-D4')!;
    expect(d4).toMatchObject({ written: false, certification: { tier: 'C0' } });
    expect(d4.error).toMatch(/not written: .*would not parse/);
    expect(readFileSync(file).equals(before)).toBe(true);
    expect(report.records.filter((record) => record.written).map((record) => record.id)).toEqual(['TST-D1', 'TST-D3', 'TST-D5']);
  });

  it('--runs 3 reports agreement and the DRI range', async () => {
    const report = await certify(options({ selection: { ids: ['TST-D1'] }, settings: { ...options().settings, runs: 3 } }));
    expect(report.records[0]!.certification).toMatchObject({ tier: 'C3', runs: 3, agreement: 1 });
    const [low, high] = report.records[0]!.certification!.dri_range!;
    expect(low).toBeLessThanOrEqual(report.records[0]!.certification!.dri!);
    expect(high).toBeGreaterThanOrEqual(report.records[0]!.certification!.dri!);
  });
});
