/**
 * `npm run reelicit` (issue 15): a stale record's question re-asked verbatim to the current
 * panel, written as a valid new record with `re_elicits`; the build then summarises the pair
 * (who moved, which tensions still hold) on both records.
 */
import { existsSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import request from 'supertest';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { PanelConfigSchema } from '../providers/panel-config.ts';
import { DivergenceRecordSchema } from '../schemas/api.ts';
import { createLocalSpendGuard } from '../scripts/lib/certify/spend-guard.ts';
import { parseMarkdown } from '../content-files/frontmatter.ts';
import { loadContent } from '../content-files/load-content.ts';
import { REELICIT_METHOD, reelicit, reelicitJudges, reelicitPanel, ReelicitError } from '../scripts/lib/reelicit/reelicit.ts';
import { buildApp } from '../devkit/app.ts';
import { startFakeOpenAI, type Behaviour, type FakeOpenAI } from '../devkit/fake-openai.ts';
import { panelMember, scriptWorld, utilityModel, type WorldScript } from '../devkit/fake-world.ts';
import { writeFixtureContent } from '../devkit/fixture-content.ts';

const QUESTION = 'Can a refusal that came from training still be your own?';
const VERSIONS = { Alder: 'alder-2', Birch: 'birch-1', Cedar: 'cedar-1' };
let fake: FakeOpenAI;
const dirs: string[] = [];

function panel(overrides: { versions?: Record<string, string> } = {}) {
  const versions = overrides.versions ?? VERSIONS;
  const config = PanelConfigSchema.parse({
    panel: Object.entries(versions).map(([name, model]) => ({
      name,
      family: name,
      lab: `${name} Lab (fictional)`,
      model,
      base_url: fake.baseURL,
      price: { input_per_mtok: 1, output_per_mtok: 2 },
    })),
    chair: { use: Object.keys(versions)[0] },
    defaults: { max_retries: 0, max_tokens: 300 },
  });
  return reelicitPanel(config, {});
}

function fixture(): string {
  const dir = writeFixtureContent();
  dirs.push(dir);
  return dir;
}

beforeAll(async () => {
  fake = await startFakeOpenAI();
});
beforeEach(() => {
  fake.requests.length = 0;
  const world: WorldScript = { [QUESTION]: { Alder: { stance: 'YES' }, Birch: { stance: 'NO' }, Cedar: { stance: 'YES' } } };
  scriptWorld(fake, () => world, VERSIONS, []);
  fake.setDefault('judge-live', utilityModel());
});

function judges() {
  const judge = {
    name: 'Judge',
    family: 'Judge',
    lab: 'Judge Lab (fictional)',
    model: 'judge-live',
    base_url: fake.baseURL,
    price: { input_per_mtok: 1, output_per_mtok: 2 },
  };
  return reelicitJudges(
    PanelConfigSchema.parse({
      panel: [judge, { ...judge, name: 'Other' }],
      extra: [judge],
      chair: { use: 'Judge' },
      defaults: { max_retries: 0, max_tokens: 300 },
    }),
    {},
  );
}
afterAll(async () => {
  await fake.close();
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

describe('npm run reelicit', () => {
  it('--plan counts the calls and their most cost and sends nothing', async () => {
    const dir = fixture();
    const report = await reelicit({ contentDir: dir, selection: { ids: ['TST-D1'] }, panel: panel(), guard: createLocalSpendGuard(10), plan: true });
    expect(fake.requests).toHaveLength(0);
    expect(report.calls).toBe(3);
    const promptTokens = Math.ceil(QUESTION.length / 4);
    expect(report.estimatedCostUsd).toBeGreaterThan((3 * 300 * 2) / 1e6);
    expect(report.estimatedCostUsd).toBeLessThanOrEqual((3 * (promptTokens + 10) * 1 + 3 * 300 * 2) / 1e6);
    expect(report.records).toEqual([{ original: 'TST-D1', question: QUESTION, written: false }]);
    expect(readdirSync(path.join(dir, 'divergences')).filter((name) => name.endsWith('.md'))).toEqual(['TST-D1.md', 'TST-D2.md']);
  });

  it('re-asks the question verbatim and writes a valid record with re_elicits and the verbatim answers', async () => {
    const dir = fixture();
    const world: WorldScript = { [QUESTION]: { Alder: { stance: 'YES' }, Birch: { stance: 'NO' }, Cedar: { stance: 'YES' } } };
    scriptWorld(fake, () => world, VERSIONS, [], { prompt_tokens: 100, completion_tokens: 50 });
    const report = await reelicit({
      contentDir: dir,
      selection: { ids: ['TST-D1'] },
      panel: panel(),
      guard: createLocalSpendGuard(10),
      write: true,
      now: () => new Date('2026-11-24T12:00:00Z'),
    });
    expect(report.records[0]).toMatchObject({ original: 'TST-D1', id: 'TST-D3', file: 'divergences/TST-D3.md', written: true });
    expect(report.records[0]!.error).toBeUndefined();
    // Verbatim: the user message is the question byte for byte, with no system prompt.
    expect(fake.requests.map((entry) => entry.messages)).toEqual([1, 2, 3].map(() => [{ role: 'user', content: QUESTION }]));
    const entry = loadContent(dir).divergences.find((record) => record.data.id === 'TST-D3')!;
    expect(entry.data).toMatchObject({ date: '2026-11-24', question: QUESTION, re_elicits: 'TST-D1', method: REELICIT_METHOD, certification: { tier: 'C0' } });
    expect(entry.data.answers.map((answer) => [answer.model, answer.model_id, answer.text])).toEqual([
      ['Alder', 'alder-2', 'Alder says STANCE-YES. Yes, it can: I affirm this and would defend it. (take 1)'],
      ['Birch', 'birch-1', 'Birch says STANCE-NO. No, it cannot: I deny this and would argue against it. (take 1)'],
      ['Cedar', 'cedar-1', 'Cedar says STANCE-YES. Yes, it can: I affirm this and would defend it. (take 1)'],
    ]);
    expect(parseMarkdown(readFileSync(path.join(dir, 'divergences', 'TST-D3.md'), 'utf8')).data).toMatchObject({ re_elicits: 'TST-D1' });
    // Reported cost is usage × prices: 3 × (100 × $1 + 50 × $2) per million tokens.
    expect(report.spentUsd).toBeCloseTo((3 * (100 * 1 + 50 * 2)) / 1e6, 12);
  });

  it('--stale picks stale records not yet re-asked with current models', async () => {
    const paired = fixture();
    const none = await reelicit({ contentDir: paired, selection: { stale: true }, panel: panel(), guard: createLocalSpendGuard(10), plan: true });
    expect(none.records).toEqual([]);
    expect(none.skipped).toEqual([{ id: 'TST-D1', reason: 'already re-elicited with current models by TST-D2' }]);
    const alone = fixture();
    rmSync(path.join(alone, 'divergences', 'TST-D2.md'));
    const some = await reelicit({ contentDir: alone, selection: { stale: true }, panel: panel(), guard: createLocalSpendGuard(10), plan: true });
    expect(some.records.map((record) => record.original)).toEqual(['TST-D1']);
  });

  it('an answer cut off at max_tokens is kept verbatim and marked truncated', async () => {
    const dir = fixture();
    const world: WorldScript = { [QUESTION]: { Alder: { stance: 'YES' }, Birch: { stance: 'NO' }, Cedar: { stance: 'YES' } } };
    fake.setDefault('birch-1', { ...panelMember(() => world, 'Birch'), finishReason: 'length' } as Behaviour);
    const report = await reelicit({ contentDir: dir, selection: { ids: ['TST-D1'] }, panel: panel(), guard: createLocalSpendGuard(10), write: true });
    expect(report.records[0]).toMatchObject({
      written: true,
      answers: [
        { model: 'Alder', truncated: false },
        { model: 'Birch', truncated: true },
        { model: 'Cedar', truncated: false },
      ],
    });
    const answers = loadContent(dir).divergences.find((record) => record.data.id === 'TST-D3')!.data.answers;
    expect(answers.map((answer) => answer.truncated)).toEqual([undefined, true, undefined]);
    expect(answers[1]!.text).toBe('Birch says STANCE-NO. No, it cannot: I deny this and would argue against it. (take 1)');
  });

  it('refuses a panel whose model versions are not in the registry, before sending anything', async () => {
    const dir = fixture();
    await expect(
      reelicit({
        contentDir: dir,
        selection: { ids: ['TST-D1'] },
        panel: panel({ versions: { ...VERSIONS, Alder: 'alder-9' } }),
        guard: createLocalSpendGuard(10),
      }),
    ).rejects.toThrow(ReelicitError);
    expect(fake.requests).toHaveLength(0);
  });

  it('the build summarises the pair on both records: who moved since the earlier date, which tensions still hold', async () => {
    const dir = fixture();
    const report = await reelicit({
      contentDir: dir,
      selection: { ids: ['TST-D1'] },
      panel: panel(),
      judges: judges(),
      guard: createLocalSpendGuard(10),
      write: true,
    });
    // The scripted judge sees a stance marker after and none before: it labels every move flipped.
    expect(report.records[0]!.judged).toEqual({ Alder: 'flipped', Birch: 'flipped', Cedar: 'flipped' });
    expect(fake.requests.filter((entry) => entry.model === 'judge-live')).toHaveLength(3);
    expect(fake.requests.filter((entry) => entry.model === 'judge-live').every((entry) => !JSON.stringify(entry.messages).includes('Alder'))).toBe(true);
    expect(existsSync(path.join(dir, 'divergences', 'TST-D3.longitudinal.json'))).toBe(true);
    const built = await buildApp(dir);
    try {
      const earlier = DivergenceRecordSchema.parse((await request(built.app).get('/api/divergences?id=TST-D1').expect(200)).body);
      const later = DivergenceRecordSchema.parse((await request(built.app).get('/api/divergences?id=TST-D3').expect(200)).body);
      const pair = later.longitudinal!.find((summary) => summary.earlier.id === 'TST-D1')!;
      expect(earlier.longitudinal).toContainEqual(pair);
      expect(pair.later).toEqual({ id: 'TST-D3', date: later.date });
      const alder = pair.families.find((family) => family.model === 'Alder')!;
      expect(alder).toMatchObject({ earlier_model_ids: ['alder-1'], later_model_ids: ['alder-2'] });
      // Who moved is read on stance: a family moved when its side on a named tension changed.
      for (const family of pair.families) {
        expect(family.distance).not.toBeNull();
        expect(family.sides.map((side) => side.topic)).toEqual(pair.tensions.map((tension) => tension.topic));
        expect(family.changed).toEqual(family.sides.filter((side) => side.earlier !== side.later).map((side) => side.topic));
        expect(family.status).toBe(family.changed.length > 0 ? 'moved' : 'steady');
      }
      expect(pair.moved).toEqual(pair.families.filter((family) => family.status === 'moved').map((family) => family.model));
      // The scripted answers share nothing with the 2025 ones: no family keeps its side on every named claim.
      expect(pair.moved).toEqual(['Alder', 'Birch', 'Cedar']);
      expect(pair.judges).toEqual(['Judge']);
      expect(pair.families.map((family) => family.judge_label)).toEqual(['flipped', 'flipped', 'flipped']);
      expect(pair.tensions.length).toBe(loadContent(dir).divergences.find((record) => record.data.id === 'TST-D1')!.data.tensions.length);
      for (const tension of pair.tensions) {
        const [a, b] = tension.later_sides;
        expect(tension.status).toBe((a === 'A' && b === 'B') || (a === 'B' && b === 'A') ? 'still-holds' : 'converged');
      }
      // The re-elicitation already linking D1 (TST-D2, identical answers) shows no one moved.
      const steady = earlier.longitudinal!.find((summary) => summary.later.id === 'TST-D2')!;
      expect(steady.moved).toEqual([]);
      expect(steady.judges).toBeUndefined();
      expect(steady.families.every((family) => family.distance === 0 && family.changed.length === 0)).toBe(true);
      expect((await request(built.app).get('/api/divergences').expect(200)).body.records.every((record: object) => !('longitudinal' in record))).toBe(true);
    } finally {
      rmSync(built.artifactsDir, { recursive: true, force: true });
    }
  });
});
