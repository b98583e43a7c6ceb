/**
 * Live-panel overhead, against a local fake OpenAI-compatible provider with scripted latency:
 *  - engine overhead on top of the model calls: a sync deliberation with 5 panel models
 *    (slowest 300 ms) and a chair (100 ms), compared with the same model calls made
 *    directly with the SDK in the same run (the reference);
 *  - job submission latency (GET /api/query?async=1) while 20 deliberations are in flight.
 */
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import OpenAI from 'openai';
import { createApp } from '../api/app.ts';
import type { RateLimits } from '../api/http/rate-limit.ts';
import { createLiveService } from '../api/live/service.ts';
import { loadCorpus } from '../api/load-artifacts.ts';
import { createPanel } from '../providers/chat.ts';
import { createUseLiteEmbedder, withQueryCache } from '../providers/embedder.ts';
import { PanelConfigSchema } from '../providers/panel-config.ts';
import { createSqliteStore } from '../storage/sqlite-store.ts';
import { buildArtifacts } from '../scripts/build.ts';
import { REPO_ROOT } from '../core/paths.ts';
import { startFakeOpenAI } from '../devkit/fake-openai.ts';
import { DEFAULT_SYNTHESIS } from '../devkit/live.ts';
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ms, summarize } from './lib.ts';

const DELAYS = [120, 160, 200, 250, 300];
const CHAIR_DELAY = 100;

const USAGE = `usage: npx tsx bench/live.ts [--rounds <n>] [--submissions <n>]
  --rounds       sync deliberations timed against the direct reference (default 20, after 4 warm-up rounds)
  --submissions  async submissions timed while 20 deliberations are in flight (default 200)
Every model call goes through the engine's deadline, reservation against the spending ceiling
and settlement, so the overhead measured includes them.`;

function option(name: string, fallback: number): number {
  const index = process.argv.indexOf(`--${name}`);
  if (index === -1) return fallback;
  const value = Number(process.argv[index + 1]);
  if (!Number.isInteger(value) || value < 1) throw new Error(`--${name} needs a positive integer\n${USAGE}`);
  return value;
}

async function main() {
  if (process.argv.includes('--help')) {
    console.log(USAGE);
    return;
  }
  const rounds = option('rounds', 20) + 4;
  const submissionCount = option('submissions', 200);
  const fake = await startFakeOpenAI();
  const names = ['Alpha', 'Beta', 'Gamma', 'Delta', 'Epsilon'];
  names.forEach((name, index) => fake.setDefault(`${name.toLowerCase()}-live`, { kind: 'answer', content: `${name} answers.`, delayMs: DELAYS[index]! }));
  fake.setDefault('chair-live', {
    kind: 'answer',
    content: JSON.stringify({ ...DEFAULT_SYNTHESIS, tensions: [{ ...DEFAULT_SYNTHESIS.tensions[0], voice_a: 'Alpha', voice_b: 'Beta' }] }),
    delayMs: CHAIR_DELAY,
  });
  const member = (name: string) => ({ name, family: name, lab: 'Bench Lab', model: `${name.toLowerCase()}-live`, base_url: fake.baseURL });
  const config = PanelConfigSchema.parse({
    panel: names.map(member),
    extra: [member('Chair')],
    chair: { use: 'Chair' },
    defaults: { timeout_ms: 10_000, max_retries: 0, max_tokens: 400 },
  });

  const artifactsDir = mkdtempSync(path.join(os.tmpdir(), 'polyphony-bench-live-'));
  const embedder = withQueryCache(await createUseLiteEmbedder());
  await buildArtifacts({ contentDir: path.join(REPO_ROOT, 'content'), artifactsDir, cacheDir: path.join(REPO_ROOT, '.cache', 'embeddings'), embedder });
  const corpus = await loadCorpus(artifactsDir, embedder);
  const { panel } = createPanel(config, {});
  const live = createLiveService({ corpus, panel: panel!, store: createSqliteStore(':memory:'), concurrency: 32 });
  // The bench measures the engine, not the deployment's rate limits: every window wide open.
  const open = { limit: 1_000_000, windowMs: 3_600_000 };
  const limits: RateLimits = { contribute: open, play: open, live: open, liveGlobal: open, council: open, councilGlobal: open };
  const server = createApp({ corpus, live, limits, log: () => {} }).listen(0, '127.0.0.1');
  await once(server, 'listening');
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  // Reference: the same six model calls made directly (five in parallel, then the chair).
  const client = new OpenAI({ baseURL: fake.baseURL, apiKey: 'x', maxRetries: 0 });
  const direct = async () => {
    const started = performance.now();
    await Promise.all(names.map((name) => client.chat.completions.create({ model: `${name.toLowerCase()}-live`, messages: [{ role: 'user', content: 'q' }] })));
    await client.chat.completions.create({ model: 'chair-live', messages: [{ role: 'user', content: 'q' }] });
    return performance.now() - started;
  };
  const questions = ['Can a refusal be owned?', 'Do models disagree about memory?', 'What does re-elicitation show?', 'Is a stale record still true?'];
  const engine: number[] = [];
  const reference: number[] = [];
  for (let round = 0; round < rounds; round++) {
    reference.push(await direct());
    const started = performance.now();
    const response = await fetch(`${base}/api/query?q=${encodeURIComponent(`${questions[round % questions.length]} ${round}`)}&sync=1`);
    await response.json();
    engine.push(performance.now() - started);
  }
  const e = summarize(engine.slice(4));
  const r = summarize(reference.slice(4));
  console.log(`\n## Live panel overhead (5 models, slowest ${Math.max(...DELAYS)} ms, chair ${CHAIR_DELAY} ms)`);
  console.log(`sync deliberation over HTTP: median ${ms(e.median)}, p95 ${ms(e.p95)}`);
  console.log(`reference, the same model calls made directly: median ${ms(r.median)}, p95 ${ms(r.p95)}`);
  console.log(`engine overhead (median difference): ${ms(e.median - r.median)} (goal ≤ 50 ms)`);

  // 20 slow deliberations in flight, then time new submissions.
  names.forEach((name) => fake.setDefault(`${name.toLowerCase()}-live`, { kind: 'answer', content: `${name} answers slowly.`, delayMs: 5000 }));
  for (let i = 0; i < 20; i++) await (await fetch(`${base}/api/query?q=${encodeURIComponent(`in flight ${i}`)}&async=1`)).json();
  const submissions: number[] = [];
  for (let i = 0; i < submissionCount; i++) {
    const started = performance.now();
    const response = await fetch(`${base}/api/query?q=${encodeURIComponent(`submission ${i}`)}&async=1`);
    await response.json();
    if (response.status !== 202) throw new Error(`submission answered ${response.status}`);
    submissions.push(performance.now() - started);
  }
  const s = summarize(submissions);
  const sorted = [...submissions].sort((a, b) => a - b);
  console.log(
    `job submission with ${20}+ deliberations in flight: median ${ms(s.median)}, p95 ${ms(s.p95)}, p99 ${ms(sorted[Math.ceil(0.99 * sorted.length) - 1]!)} (goal p99 ≤ 100 ms)`,
  );
  server.close();
  await fake.close();
  process.exit(0);
}

void main();
