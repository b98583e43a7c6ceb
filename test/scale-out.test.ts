/**
 * Two API processes sharing one PostgreSQL store: a job submitted to one is polled from
 * the other, and rate limits, sessions and pending contributions are shared.
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
import { startServerProcess } from './helpers/server-process.ts';
import { scriptDefaults, testPanelConfig } from '../devkit/live.ts';
import { POSTGRES_AVAILABLE, startPostgres, type TestPostgres } from '../devkit/postgres.ts';

const children: ChildProcess[] = [];
let postgres: TestPostgres;
let fake: FakeOpenAI;
let built: BuiltApp;
const bases: string[] = [];

describe.skipIf(!POSTGRES_AVAILABLE)('scale-out on PostgreSQL', () => {
  beforeAll(async () => {
    [postgres, fake, built] = await Promise.all([startPostgres(), startFakeOpenAI(), buildApp(writeFixtureContent())]);
    scriptDefaults(fake);
    const dir = tempDir('scale-out');
    const configFile = path.join(dir, 'panel.yaml');
    writeFileSync(configFile, stringifyYaml(testPanelConfig(fake)));
    const env = {
      ARTIFACTS_DIR: built.artifactsDir,
      STORE_PATH: postgres.url,
      PANEL_CONFIG: configFile,
      SITE_DIR: path.join(dir, 'none'),
      CONTRIBUTE_RATE_LIMIT: '3/3600',
      JOB_SWEEP_MS: '200',
    };
    // The first creates the schema; then the second joins.
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

  it('a job submitted to one process is polled from the other', async () => {
    const [a, b] = bases;
    const submitted = (await (await fetch(`${a}/api/query?q=${encodeURIComponent('Shared job?')}&async=1`)).json()) as { job_id: string; poll_url: string };
    let state: { status: string; answer?: string } = { status: 'queued' };
    for (let i = 0; i < 200 && state.status !== 'done' && state.status !== 'failed'; i++) {
      state = (await (await fetch(`${b}${submitted.poll_url}`)).json()) as typeof state;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(state.status).toBe('done');
    expect(state.answer).toEqual(expect.any(String));
  });

  it('shares rate limits, sessions and pending contributions', async () => {
    const [a, b] = bases;
    const post = (base: string, n: number) =>
      fetch(`${base}/api/contribute`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ id: 'TST-D1', answer: `shared ${n}`, identity: 'scale-test', justification: 'new_position' }),
      });
    const statuses = [];
    for (let n = 0; n < 6; n++) statuses.push((await post(n % 2 === 0 ? a! : b!, n)).status);
    expect(statuses.filter((status) => status === 202)).toHaveLength(3);
    expect(statuses.filter((status) => status === 429)).toHaveLength(3);

    const store = await createPostgresStore(postgres.url);
    expect((await store.listContributions('pending')).filter((item) => item.identity === 'scale-test')).toHaveLength(3);
    await store.close();

    const first = await fetch(`${a}/api/query`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ query: 'first turn', new_session: true }),
    });
    expect(first.status).toBe(200);
    const sessionId = ((await first.json()) as { session: { session_id: string } }).session.session_id;
    const second = (await (
      await fetch(`${b}/api/query`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ query: 'second turn', session_id: sessionId }),
      })
    ).json()) as { session: { prior_exchanges: number } };
    expect(second.session.prior_exchanges).toBe(1);
  });
});
