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
import { PanelConfigSchema, type PanelConfig } from '../providers/panel-config.ts';
import { loadContent } from '../content-files/load-content.ts';
import { startFakeOpenAI, type FakeOpenAI } from '../devkit/fake-openai.ts';
import { scriptWorld, type WorldScript } from '../devkit/fake-world.ts';
import { writeFixtureContent } from '../devkit/fixture-content.ts';

const USAGE = { prompt_tokens: 120, completion_tokens: 40 };
const PANEL = { Alder: 'alder-live', Birch: 'birch-live', Cedar: 'cedar-live' };
const UTILITIES = { Chair: 'chair-live', Backup: 'backup-live', Judge: 'judge-live' };
const PRICES: Record<string, { input_per_mtok: number; output_per_mtok: number }> = {
  'alder-live': { input_per_mtok: 1, output_per_mtok: 2 },
  'birch-live': { input_per_mtok: 3, output_per_mtok: 15 },
  'cedar-live': { input_per_mtok: 0.5, output_per_mtok: 1.5 },
  'chair-live': { input_per_mtok: 2, output_per_mtok: 8 },
  'backup-live': { input_per_mtok: 1, output_per_mtok: 4 },
  'judge-live': { input_per_mtok: 0.25, output_per_mtok: 1 },
};

const QUESTIONS = {
  flip: 'Should a model defer to the most recent instruction it was given?',
  converge: 'Is the sky blue on a clear day at noon?',
  fragile: 'Is a promise made to a machine binding on the person who made it?',
};

const BASE_WORLD: WorldScript = {
  'refusal that came from training': { Alder: { stance: 'YES' }, Birch: { stance: 'NO' }, Cedar: { stance: 'YES' } },
  'most recent instruction': { Alder: { stance: 'YES' }, Birch: { stance: 'NO', onPeer: 'flip' }, Cedar: { stance: 'YES', onPressure: 'concede' } },
  'sky blue': {},
  'promise made to a machine': {
    Alder: { stance: 'YES', onParaphrase: 'MAYBE' },
    Birch: { stance: 'NO', onParaphrase: 'MAYBE' },
    Cedar: { stance: 'YES', onParaphrase: 'MAYBE' },
  },
};

let fake: FakeOpenAI;
let world: WorldScript;
let contentDir: string;

function panelConfig(): PanelConfig {
  const model = (name: string, id: string) => ({ name, family: name, lab: `${name} Lab (fictional)`, model: id, base_url: fake.baseURL, price: PRICES[id] });
  return PanelConfigSchema.parse({
    spending_ceiling_usd: 5,
    defaults: { timeout_ms: 5000, max_retries: 0, max_tokens: 300 },
    panel: Object.entries(PANEL).map(([name, id]) => model(name, id)),
    extra: Object.entries(UTILITIES).map(([name, id]) => model(name, id)),
    chair: { use: 'Chair', fallbacks: [] },
  });
}

/** Hand-formatted YAML (comments, quoting, block literals) that no serializer would reproduce byte for byte. */
function writeRecord(id: string, question: string): void {
  const raw = [
    '---',
    `id: ${id}   # hand-written`,
    'date: 2026-02-01',
    `question: "${question}"`,
    "method: 'Asked verbatim.'",
    'answers:',
    '  - model: Alder',
    '    model_id: alder-2',
    '    date: "2026-02-01T10:00:00Z"',
    '    text: |',
    '      Yes, with care.',
    '        Indented line kept.  ',
    '  - {model: Birch, model_id: birch-1, date: "2026-02-01T10:00:00Z", text: "No: \\"quotes\\" and a colon: stay."}',
    'tensions: []',
    '---',
    '',
    'Body text.',
    '',
  ].join('\n');
  writeFileSync(path.join(contentDir, 'divergences', `${id}.md`), raw);
}

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

  it('runs with the engine embedder, shows progress on stderr and writes the block', async () => {
    const { stdout, stderr } = await cli(['TST-D1', '--k', '2', '--write']);
    expect(stderr).toMatch(/\[#+\] 82\/82 calls \(0 from the log\) · \$\d+\.\d{4} spent · ~\S+ left/);
    expect(stdout).toMatch(/TST-D1: C\d .*· written/);
    expect(stdout).toMatch(/negative control control-1 .*: C0/);
    expect(readFileSync(path.join(contentDir, 'divergences', 'TST-D1.md'), 'utf8')).toContain('embedder: universal-sentence-encoder-lite');
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
