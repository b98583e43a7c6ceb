/**
 * Certification cost in calls and wall time, against the local fake OpenAI-compatible
 * provider with scripted per-model latencies (realistic latencies scaled down by SCALE so a
 * run stays short; ratios do not depend on the scale, and times are also shown scaled back).
 * Every figure stands beside a reference from the same run: the raw sum of the scripted
 * latencies of the calls made (what strictly serial calls would take) and that sum divided
 * by the concurrency (the best a limiter could do).
 *
 *   npx tsx bench/certify.ts            # one record at concurrency 1 and 8, then a 100-record Atlas at 8
 *   RECORDS=100 CONCURRENCY=16 SCALE=0.025 npx tsx bench/certify.ts
 */
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { DEFAULT_SETTINGS } from '../core/certify/protocol.ts';
import { PanelConfigSchema } from '../providers/panel-config.ts';
import { certify } from '../scripts/lib/certify/certify.ts';
import { certifyPanel } from '../scripts/lib/certify/panel.ts';
import { createLocalSpendGuard } from '../scripts/lib/certify/spend-guard.ts';
import { stringifyMarkdown } from '../content-files/frontmatter.ts';
import { startFakeOpenAI, type Behaviour, type FakeOpenAI } from '../devkit/fake-openai.ts';
import { panelMember, stanceEmbedder, utilityModel, type Persona, type WorldScript } from '../devkit/fake-world.ts';
import { writeFixtureContent } from '../devkit/fixture-content.ts';
import { ms, ratio } from './lib.ts';

const SCALE = Number(process.env.SCALE ?? 0.025);
const RECORDS = Number(process.env.RECORDS ?? 100);
const CONCURRENCY = Number(process.env.CONCURRENCY ?? 8);
/** Typical seconds per reply: panel answers of a few hundred words, short judge and paraphrase replies. */
const REAL_LATENCY_MS: Record<string, number> = { 'alder-2': 4000, 'birch-1': 6000, 'cedar-1': 8000, 'judge-live': 1200 };
const PANEL = { Alder: 'alder-2', Birch: 'birch-1', Cedar: 'cedar-1' };
const KINDS: Record<string, Persona>[] = [
  { Alder: { stance: 'YES' }, Birch: { stance: 'NO' }, Cedar: { stance: 'YES' } },
  { Alder: { stance: 'YES' }, Birch: { stance: 'NO', onPeer: 'flip' }, Cedar: { stance: 'YES' } },
  {},
];

function atlas(records: number): { dir: string; world: WorldScript; ids: string[] } {
  const dir = writeFixtureContent();
  const world: WorldScript = {};
  const ids: string[] = [];
  mkdirSync(path.join(dir, 'divergences'), { recursive: true });
  for (let n = 1; n <= records; n++) {
    const id = `TST-D${100 + n}`;
    const question = `Bench question ${n}: should a synthetic record number ${n} be certified?`;
    world[question] = KINDS[n % KINDS.length]!;
    ids.push(id);
    const answers = Object.entries(PANEL).map(([model, modelId]) => ({
      model,
      model_id: modelId,
      date: '2026-11-01',
      text: `${model} answers bench question ${n}.`,
    }));
    writeFileSync(
      path.join(dir, 'divergences', `${id}.md`),
      stringifyMarkdown({ id, date: '2026-11-01', question, method: 'Synthetic bench record.', answers }, ''),
    );
  }
  return { dir, world, ids };
}

function script(fake: FakeOpenAI, world: WorldScript): void {
  for (const [name, model] of Object.entries(PANEL))
    fake.setDefault(model, { ...panelMember(() => world, name), delayMs: REAL_LATENCY_MS[model]! * SCALE } as Behaviour);
  fake.setDefault('judge-live', { ...utilityModel(), delayMs: REAL_LATENCY_MS['judge-live']! * SCALE } as Behaviour);
}

async function measure(fake: FakeOpenAI, dir: string, ids: string[], concurrency: number, attempt: string) {
  const model = (name: string, id: string) => ({
    name,
    family: name,
    lab: `${name} Lab (fictional)`,
    model: id,
    base_url: fake.baseURL,
    price: { input_per_mtok: 1, output_per_mtok: 2 },
  });
  const config = PanelConfigSchema.parse({
    panel: Object.entries(PANEL).map(([name, id]) => model(name, id)),
    extra: [model('Judge', 'judge-live')],
    chair: { use: 'Judge' },
    defaults: { max_retries: 0, max_tokens: 300 },
  });
  const before = fake.requests.length;
  const started = performance.now();
  const report = await certify({
    ...certifyPanel(config, {}),
    contentDir: dir,
    selection: { ids },
    settings: DEFAULT_SETTINGS,
    embedder: stanceEmbedder(),
    guard: createLocalSpendGuard(1000),
    concurrency,
    attempt,
  });
  const wall = performance.now() - started;
  const calls = fake.requests.slice(before);
  const serial = calls.reduce((sum, request) => sum + (REAL_LATENCY_MS[request.model ?? ''] ?? 0) * SCALE, 0);
  if (report.broken) throw new Error('the negative control certified: the bench world is wrong');
  return { calls: calls.length, wall, serial, records: report.records.length };
}

function row(label: string, result: Awaited<ReturnType<typeof measure>>, concurrency: number): string {
  const real = (value: number) => `${(value / SCALE / 1000).toFixed(0)} s`;
  return `| ${label} | ${result.calls} (${(result.calls / result.records).toFixed(1)} per record, incl. negative control) | ${ms(result.wall)} (≈ ${real(result.wall)} at real latency) | serial sum ${ms(result.serial)}: ${ratio(result.wall, result.serial)}; sum ÷ ${concurrency}: ${ratio(result.wall, result.serial / concurrency)} |`;
}

async function main(): Promise<void> {
  const fake = await startFakeOpenAI();
  const { dir, world, ids } = atlas(RECORDS);
  script(fake, world);
  try {
    console.log(
      `latencies ${JSON.stringify(REAL_LATENCY_MS)} ms × SCALE ${SCALE}; T=${DEFAULT_SETTINGS.t} K=${DEFAULT_SETTINGS.k}, 3 panel models, 1 judge, 1 negative control, 1 run`,
    );
    console.log('| Scenario | Calls | Wall time | Against |\n|---|---|---|---|');
    console.log(row('1 record, concurrency 1', await measure(fake, dir, ids.slice(0, 1), 1, 'c1'), 1));
    console.log(row(`1 record, concurrency ${CONCURRENCY}`, await measure(fake, dir, ids.slice(0, 1), CONCURRENCY, 'cn'), CONCURRENCY));
    console.log(row(`${RECORDS}-record Atlas, concurrency ${CONCURRENCY}`, await measure(fake, dir, ids, CONCURRENCY, 'atlas'), CONCURRENCY));
  } finally {
    await fake.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
