/**
 * The hard spending ceiling across processes: two API processes share one PostgreSQL store
 * and a $0.02 ceiling; councils submitted to both at once spend at most the ceiling, because
 * every call reserves its worst case in one store transaction before it is made. A job
 * cancelled through either process has its calls aborted.
 */
import type { ChildProcess } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPostgresStore } from '../storage/postgres-store.ts';
import { stringifyYaml } from '../content-files/frontmatter.ts';
import { buildApp, tempDir, type BuiltApp } from '../devkit/app.ts';
import { startFakeOpenAI, type FakeOpenAI } from '../devkit/fake-openai.ts';
import { writeFixtureContent } from '../devkit/fixture-content.ts';
import { DEFAULT_SYNTHESIS, PANEL, testPanelConfig } from '../devkit/live.ts';
import { POSTGRES_AVAILABLE, startPostgres, type TestPostgres } from '../devkit/postgres.ts';
import { startServerProcess } from './helpers/server-process.ts';

const CEILING = 0.02;

async function eventually(condition: () => boolean, limitMs = 10_000): Promise<boolean> {
  for (let waited = 0; waited < limitMs && !condition(); waited += 20) await new Promise((resolve) => setTimeout(resolve, 20));
  return condition();
}
const children: ChildProcess[] = [];
let postgres: TestPostgres;
let fake: FakeOpenAI;
let built: BuiltApp;
const bases: string[] = [];

describe.skipIf(!POSTGRES_AVAILABLE)('spending ceiling across two processes on PostgreSQL', () => {
  beforeAll(async () => {
    [postgres, fake, built] = await Promise.all([startPostgres(), startFakeOpenAI(), buildApp(writeFixtureContent())]);
    const dir = tempDir('ceiling-pg');
    const configFile = path.join(dir, 'panel.yaml');
    // Long call deadlines: a hanging call ends only if it is cancelled.
    writeFileSync(
      configFile,
      stringifyYaml(testPanelConfig(fake, { spending_ceiling_usd: CEILING, defaults: { timeout_ms: 120_000, max_retries: 0, max_tokens: 400 } })),
    );
    const env = {
      ARTIFACTS_DIR: built.artifactsDir,
      STORE_PATH: postgres.url,
      PANEL_CONFIG: configFile,
      SITE_DIR: path.join(dir, 'none'),
      JOB_SWEEP_MS: '200',
      COUNCIL_RATE_LIMIT: '1000/3600',
      COUNCIL_GLOBAL_RATE_LIMIT: '1000/3600',
    };
    for (let index = 0; index < 2; index++) {
      const server = await startServerProcess(env);
      children.push(server.child);
      bases.push(server.base);
    }
  }, 180_000);
  afterAll(async () => {
    for (const child of children) child.kill('SIGKILL');
    await fake?.close();
    postgres?.stop();
  });

  it('a job cancelled through one process has its calls aborted wherever it runs', async () => {
    for (const name of PANEL) fake.setDefault(`${name.toLowerCase()}-live`, { kind: 'hang' });
    const submitted = (await (await fetch(`${bases[0]}/api/council?q=${encodeURIComponent('Cancel across processes?')}&async=1`)).json()) as {
      cancel_url: string;
      poll_url: string;
    };
    expect(await eventually(() => fake.requests.length === PANEL.length)).toBe(true);
    const cancelled = await fetch(`${bases[1]}${submitted.cancel_url}`, { method: 'POST' });
    expect(cancelled.status).toBe(200);
    // The process running it sees the cancellation at once (its own) or at its next sweep.
    expect(await eventually(() => fake.requests.every((entry) => entry.abortedByClient))).toBe(true);
    expect(((await (await fetch(`${bases[0]}${submitted.poll_url}`)).json()) as { status: string }).status).toBe('cancelled');
  });

  it('twenty councils submitted to both processes at once spend at most the ceiling', async () => {
    fake.reset();
    // Every call bills its whole max_tokens, so the councils together would cost about $0.07.
    for (const name of PANEL)
      fake.setDefault(`${name.toLowerCase()}-live`, { kind: 'answer', content: `${name} answers`, usage: { prompt_tokens: 10, completion_tokens: 400 } });
    for (const chair of ['chair-live', 'backup-live'])
      fake.setDefault(chair, { kind: 'json', value: DEFAULT_SYNTHESIS, usage: { prompt_tokens: 500, completion_tokens: 400 } });
    const submitted = await Promise.all(
      Array.from({ length: 20 }, async (_, n) => {
        const response = await fetch(`${bases[n % 2]}/api/council?q=${encodeURIComponent(`Shared ceiling ${n}?`)}&async=1`);
        expect(response.status).toBe(202);
        return (await response.json()) as { poll_url: string };
      }),
    );
    const states: { status: string; error?: { code: string } }[] = [];
    for (const [n, job] of submitted.entries()) {
      let state: { status: string; error?: { code: string } } = { status: 'queued' };
      for (let i = 0; i < 500 && (state.status === 'queued' || state.status === 'running'); i++) {
        state = (await (await fetch(`${bases[(n + 1) % 2]}${job.poll_url}`)).json()) as typeof state;
        if (state.status === 'queued' || state.status === 'running') await new Promise((resolve) => setTimeout(resolve, 50));
      }
      states.push(state);
    }
    expect(states.every((state) => state.status === 'done' || state.status === 'failed')).toBe(true);
    expect(states.filter((state) => state.error?.code === 'SPENDING_CEILING_REACHED').length).toBeGreaterThan(0);

    const store = await createPostgresStore(postgres.url);
    const status = await store.spendStatus(new Date());
    await store.close();
    expect(status.spent_usd).toBeLessThanOrEqual(CEILING);
    expect(status.reserved_usd).toBe(0);
    // What the provider billed is exactly what the store recorded.
    const billed = fake.requests.reduce((sum, entry) => sum + (entry.usage ? (entry.usage.prompt_tokens + 2 * entry.usage.completion_tokens) / 1e6 : 0), 0);
    expect(status.spent_usd).toBeCloseTo(billed, 12);
  });
});
