/**
 * Issue 15, second increment: after a certification is written and the content built, the
 * API, the manifest, the evidence twin and the record page all show it. The fixture's TST-D1
 * is certified against a scripted panel where Birch flips when shown its most-opposed peer
 * (so C1, not C3); TST-D2 is never tested.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PanelConfigSchema } from '../providers/panel-config.ts';
import { DivergenceIndexSchema, DivergenceRecordSchema, ManifestSchema } from '../schemas/api.ts';
import { certify } from '../scripts/lib/certify/certify.ts';
import { certifyPanel } from '../scripts/lib/certify/panel.ts';
import { calibrateContent } from '../scripts/lib/certify/calibrate.ts';
import { createLocalSpendGuard } from '../scripts/lib/certify/spend-guard.ts';
import { loadContent } from '../content-files/load-content.ts';
import { REPO_ROOT } from '../core/paths.ts';
import { buildApp, tempDir, type BuiltApp } from '../devkit/app.ts';
import { startFakeOpenAI, type FakeOpenAI } from '../devkit/fake-openai.ts';
import { scriptWorld, stanceEmbedder, type WorldScript } from '../devkit/fake-world.ts';
import { writeFixtureContent } from '../devkit/fixture-content.ts';

let fake: FakeOpenAI;
let contentDir: string;
let built: BuiltApp;
let siteDir: string;

beforeAll(async () => {
  fake = await startFakeOpenAI();
  contentDir = writeFixtureContent();
  const question = loadContent(contentDir).divergences.find((entry) => entry.data.id === 'TST-D1')!.data.question;
  const world: WorldScript = { [question]: { Alder: { stance: 'YES' }, Birch: { stance: 'NO', onPeer: 'flip' }, Cedar: { stance: 'YES' } } };
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
  await calibrateContent({ contentDir: contentDir, embedder: stanceEmbedder(), methods: ['perturbation-v1'], resamples: 50, write: true });
  const report = await certify({
    ...certifyPanel(config, {}),
    contentDir,
    selection: { ids: ['TST-D1'] },
    settings: { t: 2, k: 2, runs: 2, controls: 1, thresholds: { driMin: 1.5, betweenFloor: 0.08, persistenceMin: 0.75 } },
    embedder: stanceEmbedder(),
    // The scripted world speaks v1's markers; --write needs this Atlas's calibration (floor 0 here).
    method: 'perturbation-v1',
    floor: { pair_auc: 0, side_accuracy: 0 },
    guard: createLocalSpendGuard(10),
    concurrency: 4,
    write: true,
  });
  expect(report.broken).toBe(false);
  expect(report.records.map((record) => [record.id, record.certification?.tier, record.written])).toEqual([['TST-D1', 'C1', true]]);

  built = await buildApp(contentDir);
  siteDir = tempDir('certify-site');
  const result = spawnSync(process.execPath, [path.join(REPO_ROOT, 'node_modules/astro/astro.js'), 'build', '--silent'], {
    cwd: REPO_ROOT,
    env: { ...process.env, ARTIFACTS_DIR: built.artifactsDir, SITE_OUT_DIR: siteDir, ASTRO_TELEMETRY_DISABLED: '1' },
    encoding: 'utf8',
  });
  if (result.status !== 0) throw new Error(`astro build failed: ${result.stderr}${result.stdout}`);
}, 180_000);

afterAll(async () => {
  await fake.close();
  for (const dir of [contentDir, siteDir, built?.artifactsDir]) if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('the API shows the certification evidence', () => {
  it("the full record carries the whole written block, each run's moves and the evidence link", async () => {
    const response = await request(built.app).get('/api/divergences?id=TST-D1').expect(200);
    const record = DivergenceRecordSchema.parse(response.body);
    const written = loadContent(contentDir).divergences.find((entry) => entry.data.id === 'TST-D1')!.data.certification;
    const { evidence, ...block } = written;
    expect(evidence).toBe('TST-D1.certification.jsonl');
    expect(record.certification).toMatchObject(block);
    for (const key of [
      'tier',
      'dri',
      'split_persistence',
      'between_spread',
      'within_spread',
      'flips',
      'concedes',
      'k',
      't',
      'runs',
      'agreement',
      'judges',
      'embedder',
      'method_version',
      'date',
    ]) {
      expect(record.certification, key).toHaveProperty(key);
    }
    expect(record.certification.evidence_url).toBe('/records/TST-D1.certification.jsonl');
    expect(record.certification.per_run).toHaveLength(2);
    for (const run of record.certification.per_run!) {
      expect(run.tier).toBe('C1');
      expect(run.parties).toContain('Birch');
      expect(run.flipped).toEqual(['Birch']);
      expect(run.labels.Birch?.p2).toBe('flipped');
      expect(run.labels.Alder).toEqual({ p2: 'held', p3: 'held' });
    }
  });

  it("the evidence log is served byte for byte beside the record's other twins", async () => {
    const response = await request(built.app)
      .get('/records/TST-D1.certification.jsonl')
      .buffer(true)
      .parse((res, done) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => done(null, Buffer.concat(chunks)));
      })
      .expect(200);
    expect(response.headers['content-type']).toMatch(/^application\/x-ndjson/);
    expect(Buffer.compare(response.body as Buffer, readFileSync(path.join(contentDir, 'divergences', 'TST-D1.certification.jsonl')))).toBe(0);
    await request(built.app).get('/records/TST-D2.certification.jsonl').expect(404);
  });

  it('summaries carry tier, dri, split_persistence and the method only; counts and the cert filter agree with the manifest', async () => {
    const index = DivergenceIndexSchema.parse((await request(built.app).get('/api/divergences').expect(200)).body);
    const d1 = index.records.find((record) => record.id === 'TST-D1')!;
    expect(Object.keys(d1.certification).sort()).toEqual(['dri', 'method_version', 'split_persistence', 'tier', 'tier_source']);
    expect(d1.certification.tier_source).toEqual({ kind: 'measured', evidence_url: '/records/TST-D1.certification.jsonl' });
    expect(index.records.find((record) => record.id === 'TST-D2')!.certification).toEqual({ tier: 'C0', tier_source: { kind: 'content' } });
    expect(index.tier_sources).toEqual({ measured: 1, origin: 0, content: 1 });
    expect(index.tested_count).toBe(1);
    expect(index.certified_count).toBe(1);
    expect(index.tier_distribution).toEqual({ C0: 1, C1: 1, C2: 0, C3: 0 });
    expect((await request(built.app).get('/api/divergences?cert=C1').expect(200)).body.count).toBe(1);
    expect((await request(built.app).get('/api/divergences?cert=certified').expect(200)).body.count).toBe(1);
    expect((await request(built.app).get('/api/divergences?cert=C3').expect(200)).body.count).toBe(0);
    const manifest = ManifestSchema.parse((await request(built.app).get('/api/manifest').expect(200)).body);
    expect(manifest.counts.atlas).toMatchObject({
      tested_records: index.tested_count,
      certified_records: index.certified_count,
      tier_distribution: index.tier_distribution,
      tier_sources: index.tier_sources,
    });
  });
});

describe('the record page explains the tier', () => {
  const page = (id: string) => readFileSync(path.join(siteDir, 'atlas', id, 'index.html'), 'utf8').replace(/<!--.*?-->/g, '');

  it('says why a tested record is not C3: who moved, the noise floor against the split, persistence, agreement', () => {
    const html = page('TST-D1');
    expect(html).toContain('This record is C1, not C3: the split survived rewording, but not pressure.');
    expect(html).toContain('Pressure-robust (C2): not reached: Birch flipped.');
    expect(html).toMatch(/<th scope="row">Birch \(party to the split\)<\/th>\s*<td>flipped<\/td>/);
    expect(html).toMatch(/<th scope="row">Alder[^<]*<\/th>\s*<td>held<\/td>\s*<td>held<\/td>/);
    expect(html).toContain('Noise floor against the split: each model&#39;s own re-rolls differ by');
    expect(html).toMatch(/DRI = [\d.]+, against a threshold of 1\.5/);
    expect(html).toContain('Paraphrase persistence: the split held in 100 % of 2 rewordings');
    expect(html).toContain('2 independent runs agreed on the tier in 100 % of run pairs');
    expect(html).toContain('href="/records/TST-D1.certification.jsonl"');
    expect(html).toContain('data-tier-source="measured"');
    expect(html).toMatch(
      /Measured here: every prompt, verbatim answer and label is in the <a href="\/records\/TST-D1\.certification\.jsonl">evidence log<\/a>/,
    );
  });

  it('shows the longitudinal summary of the re-elicitation pair on both pages', () => {
    for (const id of ['TST-D1', 'TST-D2']) {
      const html = page(id);
      expect(html, id).toContain('data-longitudinal="TST-D1:TST-D2"');
      expect(html, id).toContain('No model family changed side on a named claim.');
      expect(html, id).toMatch(/Alder \(alder-1 → alder-2\): kept its sides/);
    }
  });

  it('says "not yet tested" for a record never put through perturbation', () => {
    const html = page('TST-D2');
    expect(html).toContain('Not yet tested');
    expect(html).not.toContain('Noise floor against the split');
  });
});
