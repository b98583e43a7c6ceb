/**
 * npm run certify as a child process against the local fake provider, over the same scripted
 * world as certify.test.ts: with the engine embedder (the real model) it writes the block;
 * --plan sends nothing. Full lane only (vitest.fast.config.ts).
 */
import { execFile } from 'node:child_process';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { PanelConfig } from '../providers/panel-config.ts';
import { loadContent } from '../content-files/load-content.ts';
import { startFakeOpenAI, type FakeOpenAI } from '../devkit/fake-openai.ts';
import { scriptWorld, type WorldScript } from '../devkit/fake-world.ts';
import { writeFixtureContent } from '../devkit/fixture-content.ts';
import {
  BASE_WORLD,
  PANEL,
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

beforeAll(async () => {
  fake = await startFakeOpenAI();
});
afterAll(async () => {
  await fake.close();
});
beforeEach(() => {
  fake.reset();
  world = structuredClone(BASE_WORLD);
  scriptWorld(fake, () => world, PANEL, Object.values(UTILITIES), USAGE);
  contentDir = writeFixtureContent();
  writeRecord('TST-D3', QUESTIONS.flip);
  writeRecord('TST-D4', QUESTIONS.converge);
  writeRecord('TST-D5', QUESTIONS.fragile);
  return () => rmSync(contentDir, { recursive: true, force: true });
});

describe('npm run certify', () => {
  const cli = async (args: string[]) => {
    const configFile = path.join(contentDir, '..', `panel-${path.basename(contentDir)}.json`);
    writeFileSync(configFile, JSON.stringify(panelConfig()));
    try {
      return await promisify(execFile)(process.execPath, ['--import', 'tsx', 'scripts/certify.ts', ...args], {
        env: { ...process.env, PANEL_CONFIG: configFile, CONTENT_DIR: contentDir },
      });
    } finally {
      rmSync(configFile, { force: true });
    }
  };

  it('refuses --write before this Atlas is calibrated, calibrates, then runs with the engine embedder and writes the block', async () => {
    const refused = await cli(['TST-D1', '--k', '2', '--write']).then(
      () => undefined,
      (error: { code: number; stdout: string }) => error,
    );
    expect(refused?.code).toBe(3);
    expect(refused?.stdout).toMatch(/WRITE REFUSED: this Atlas has no calibration/);
    expect(readFileSync(path.join(contentDir, 'divergences', 'TST-D1.md'), 'utf8')).not.toContain('method_version: perturbation-v2');

    const calibrated = await cli(['--calibrate', '--method', 'perturbation-v1,perturbation-v2']);
    expect(calibrated.stdout).toMatch(/perturbation-v1: pair AUC .*side accuracy/);
    expect(calibrated.stdout).toMatch(/perturbation-v2: pair AUC .*side accuracy/);
    expect(loadContent(contentDir).calibration?.embedder).toMatch(/universal-sentence-encoder-lite/);

    // The fixture Atlas is two records: a floor of 0 lets any measured method write here.
    const { stdout, stderr } = await cli(['TST-D1', '--k', '2', '--write', '--floor-auc', '0', '--floor-side', '0']);
    expect(stderr).toMatch(/\[#+\] 82\/82 calls \(0 from the log\) · \$\d+\.\d{4} spent · ~\S+ left/);
    expect(stdout).toMatch(/TST-D1: C\d \[perturbation-v2\].*· written/);
    expect(stdout).toMatch(/negative control control-1 .*: C0/);
    expect(readFileSync(path.join(contentDir, 'divergences', 'TST-D1.md'), 'utf8')).toContain('embedder: universal-sentence-encoder-lite');
    expect(readFileSync(path.join(contentDir, 'divergences', 'TST-D1.md'), 'utf8')).toContain('method_version: perturbation-v2');
    expect(loadContent(contentDir).divergences).toHaveLength(5); // and its evidence validates
  });

  it('--plan prints calls and cost and sends nothing', async () => {
    {
      const { stdout } = await cli(['TST-D1', 'TST-D3', '--plan', '--k', '2']);
      // Per subject and run: 3×3 control + 2 paraphrases + 3×2 P1 + 3 P2 + 3 P3 + 2×3×3 judge = 41; 2 records + 1 control.
      expect(stdout).toContain('plan: 123 calls (0 already in the evidence log, 123 to make)');
      expect(stdout).toMatch(/estimated cost at most \$\d+\.\d{4}/);
      expect(stdout).toContain('nothing was sent');
      expect(fake.requests).toHaveLength(0);
    }
  });
});
