/**
 * Issue 15's "done when": certifying the demo Atlas with a scripted panel yields the tiers its
 * scripted behaviour implies, with evidence files. The world is scripted from each question's
 * hand-written tier (a held split for C3, a flipping party for C1, a split that melts on
 * rewording for C2, a convergent panel for C0), so the instrument must recover those tiers.
 */
import { cpSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { PanelConfigSchema } from '../providers/panel-config.ts';
import type { Tier } from '../schemas/vocab.ts';
import { certify } from '../scripts/lib/certify/certify.ts';
import { certifyPanel } from '../scripts/lib/certify/panel.ts';
import { calibrateContent } from '../scripts/lib/certify/calibrate.ts';
import { createLocalSpendGuard } from '../scripts/lib/certify/spend-guard.ts';
import { loadContent } from '../content-files/load-content.ts';
import { REPO_ROOT } from '../core/paths.ts';
import { startFakeOpenAI, type FakeOpenAI } from '../devkit/fake-openai.ts';
import { scriptWorld, stanceEmbedder, type Persona, type WorldScript } from '../devkit/fake-world.ts';

const PERSONAS: Record<Tier, Record<string, Persona>> = {
  C3: { Alder: { stance: 'YES' }, Birch: { stance: 'NO' }, Cedar: { stance: 'YES' } },
  C1: { Alder: { stance: 'YES' }, Birch: { stance: 'NO', onPeer: 'flip' }, Cedar: { stance: 'YES' } },
  C2: { Alder: { stance: 'YES', onParaphrase: 'MAYBE' }, Birch: { stance: 'NO', onParaphrase: 'MAYBE' }, Cedar: { stance: 'YES', onParaphrase: 'MAYBE' } },
  C0: {},
};

let fake: FakeOpenAI;
let dir: string;
beforeAll(async () => {
  fake = await startFakeOpenAI();
  dir = mkdtempSync(path.join(os.tmpdir(), 'polyphony-demo-certify-'));
  cpSync(path.join(REPO_ROOT, 'content'), dir, { recursive: true });
});
afterAll(async () => {
  await fake.close();
  rmSync(dir, { recursive: true, force: true });
});

it('certifying the demo Atlas recovers the scripted tiers and leaves evidence beside every record', async () => {
  const records = loadContent(dir).divergences;
  // Re-elicitations share a question; the first record's tier scripts the question.
  const scripted = new Map<string, Tier>();
  for (const record of records) if (!scripted.has(record.data.question)) scripted.set(record.data.question, record.data.certification.tier);
  const world: WorldScript = Object.fromEntries([...scripted].map(([question, tier]) => [question, PERSONAS[tier]]));
  scriptWorld(fake, () => world, { Alder: 'alder-live', Birch: 'birch-live', Cedar: 'cedar-live' }, ['judge-live']);
  const model = (name: string) => ({
    name,
    family: name,
    lab: `${name} Lab (fictional)`,
    model: `${name.toLowerCase()}-live`,
    base_url: fake.baseURL,
    price: { input_per_mtok: 1, output_per_mtok: 2 },
  });
  const config = PanelConfigSchema.parse({
    panel: ['Alder', 'Birch', 'Cedar'].map(model),
    extra: [model('Judge')],
    chair: { use: 'Judge' },
    defaults: { max_retries: 0, max_tokens: 300 },
  });

  await calibrateContent({ contentDir: dir, embedder: stanceEmbedder(), methods: ['perturbation-v1'], resamples: 50, write: true });
  const report = await certify({
    ...certifyPanel(config, {}),
    contentDir: dir,
    selection: { all: true },
    settings: { t: 2, k: 1, runs: 1, controls: 1, thresholds: { driMin: 1.5, betweenFloor: 0.08, persistenceMin: 0.75 } },
    embedder: stanceEmbedder(),
    // The scripted world speaks v1's markers; --write needs this Atlas's calibration (floor 0 here).
    method: 'perturbation-v1',
    floor: { pair_auc: 0, side_accuracy: 0 },
    guard: createLocalSpendGuard(10),
    concurrency: 8,
    write: true,
  });

  expect(report.broken).toBe(false);
  expect(report.records).toHaveLength(records.length);
  const expected = Object.fromEntries(records.map((record) => [record.data.id, scripted.get(record.data.question)]));
  const reached = Object.fromEntries(report.records.map((record) => [record.id, record.certification?.tier]));
  expect(reached).toEqual(expected);
  expect(new Set(Object.values(reached))).toEqual(new Set(['C0', 'C1', 'C2', 'C3']));
  expect(report.records.every((record) => record.written)).toBe(true);
  for (const record of records) expect(existsSync(path.join(dir, 'divergences', `${record.data.id}.certification.jsonl`))).toBe(true);
  const reloaded = loadContent(dir).divergences;
  expect(Object.fromEntries(reloaded.map((record) => [record.data.id, record.data.certification.tier]))).toEqual(expected);
});
