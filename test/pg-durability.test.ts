/**
 * The PostgreSQL store killed with kill -9 while a real API process takes writes
 * (contributions and job submissions), then restarted on the same data directory and port,
 * several rounds: nothing the API acknowledged is lost; during the outage writes get the §7
 * envelope (503 STORE_UNAVAILABLE, as /openapi.json documents), never a hang, a dropped
 * connection or a stack trace; the same API process serves writes again once PostgreSQL is
 * back (its pool reconnects), and every acknowledged job ends done or failed with a code.
 */
import type { ChildProcess } from 'node:child_process';
import { rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ERROR_CODES } from '../schemas/errors.ts';
import { createPostgresStore } from '../storage/postgres-store.ts';
import { stringifyYaml } from '../content-files/frontmatter.ts';
import { buildApp, tempDir } from '../devkit/app.ts';
import { startFakeOpenAI, type FakeOpenAI } from '../devkit/fake-openai.ts';
import { writeFixtureContent } from '../devkit/fixture-content.ts';
import { scriptDefaults, testPanelConfig } from '../devkit/live.ts';
import { assertMatchesOpenApi, createOpenApiValidator, type OpenApiValidator } from './helpers/openapi.ts';
import { POSTGRES_AVAILABLE, startPostgres, type TestPostgres } from '../devkit/postgres.ts';
import { startServerProcess, type ServerProcess } from './helpers/server-process.ts';

const ROUNDS = 5;
const CONTRIBUTION_WRITERS = 8;
const JOB_WRITERS = 2;

let postgres: TestPostgres;
let fake: FakeOpenAI;
let server: ServerProcess;
let validator: OpenApiValidator;
let dir: string | undefined;
const children: ChildProcess[] = [];

/**
 * Waits for progress (not for time): the suite's timeout is the only clock. Stops at once
 * if the API process has died, which no wait could then repair.
 */
async function until(condition: () => boolean | Promise<boolean>): Promise<void> {
  while (!(await condition())) {
    if (server.child.exitCode !== null || server.child.signalCode !== null) {
      throw new Error(`the API process exited (${server.child.signalCode ?? server.child.exitCode}):\n${server.output().slice(-3000)}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

interface Failure {
  round: number;
  method: string;
  path: string;
  status: number;
  headers: Record<string, string>;
  text: string;
}

describe.skipIf(!POSTGRES_AVAILABLE)('PostgreSQL killed with kill -9 under writes', () => {
  beforeAll(async () => {
    let built;
    [postgres, fake, built] = await Promise.all([startPostgres(), startFakeOpenAI(), buildApp(writeFixtureContent())]);
    scriptDefaults(fake);
    dir = tempDir('pg-durability');
    const configFile = path.join(dir, 'panel.yaml');
    writeFileSync(configFile, stringifyYaml(testPanelConfig(fake)));
    server = await startServerProcess({
      ARTIFACTS_DIR: built.artifactsDir,
      STORE_PATH: postgres.url,
      PANEL_CONFIG: configFile,
      SITE_DIR: path.join(dir, 'none'),
      CONTRIBUTE_RATE_LIMIT: '100000000/3600',
      LIVE_RATE_LIMIT: '100000000/3600',
      LIVE_GLOBAL_RATE_LIMIT: '100000000/3600',
      // A job whose last update was lost with the store is re-queued soon after it is back.
      JOB_SWEEP_MS: '200',
      JOB_LEASE_MS: '1000',
    });
    children.push(server.child);
    validator = createOpenApiValidator((await (await fetch(`${server.base}/openapi.json`)).json()) as object);
  }, 180_000);
  afterAll(async () => {
    for (const child of children) child.kill('SIGKILL');
    await fake?.close();
    postgres?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it(`loses no acknowledged write over ${ROUNDS} rounds, answers the outage with the envelope and recovers without a restart`, async () => {
    const contributions = new Set<string>();
    const jobs = new Set<string>();
    const failures: Failure[] = [];
    const dropped: string[] = [];
    let attempted = 0;

    for (let round = 0; round < ROUNDS; round++) {
      let stop = false;
      let state: 'up' | 'down' | 'back' = 'up';
      const acked = { up: 0, down: 0, back: 0, jobsUp: 0, jobsBack: 0 };
      let failedWhileDown = 0;

      const send = async (method: 'GET' | 'POST', pathAndQuery: string, body?: unknown): Promise<{ status: number; json?: unknown }> => {
        attempted++;
        const sentWhile = state;
        let response: Response;
        try {
          response = await fetch(
            `${server.base}${pathAndQuery}`,
            body === undefined ? { method } : { method, headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) },
          );
        } catch (error) {
          // The API process must answer every request, whatever the store does.
          dropped.push(`${method} ${pathAndQuery}: ${(error as Error).message}`);
          return { status: 0 };
        }
        const text = await response.text();
        if (response.status >= 200 && response.status < 300) return { status: response.status, json: JSON.parse(text) as unknown };
        failures.push({ round, method, path: pathAndQuery.split('?')[0]!, status: response.status, headers: Object.fromEntries(response.headers), text });
        if (sentWhile === 'down' || state === 'down') failedWhileDown++;
        return { status: response.status };
      };

      const contributionWriter = async (worker: number) => {
        for (let n = 0; !stop; n++) {
          const phase = state;
          const answer = { id: 'TST-D1', answer: `round ${round} worker ${worker} write ${n}`, identity: 'pg-durability-test', justification: 'new_position' };
          const result = await send('POST', '/api/contribute', answer);
          if (result.status === 202) {
            contributions.add((result.json as { contribution_id: string }).contribution_id);
            acked[phase]++;
          }
        }
      };
      const jobWriter = async (worker: number) => {
        for (let n = 0; !stop; n++) {
          const phase = state;
          const result = await send('GET', `/api/query?q=${encodeURIComponent(`round ${round} job ${worker}-${n}`)}&async=1`);
          if (result.status === 202) {
            jobs.add((result.json as { job_id: string }).job_id);
            if (phase === 'up') acked.jobsUp++;
            if (phase === 'back') acked.jobsBack++;
          }
          // Jobs cost a panel run each: a steady trickle, not a flood that outlasts the round.
          await new Promise((resolve) => setTimeout(resolve, 50));
        }
      };
      const writers = [
        ...Array.from({ length: CONTRIBUTION_WRITERS }, (_, worker) => contributionWriter(worker)),
        ...Array.from({ length: JOB_WRITERS }, (_, worker) => jobWriter(worker)),
      ];

      // The kill lands at a different point of the write stream each round.
      await until(() => acked.up >= 30 + ((round * 17) % 40) && acked.jobsUp >= 2);
      // Odd rounds kill every PostgreSQL process at once; even rounds only the postmaster,
      // whose backends then exit on their own, possibly finishing a commit first.
      await postgres.crash({ everything: round % 2 === 1 });
      state = 'down';
      await until(() => failedWhileDown >= 3 * CONTRIBUTION_WRITERS);
      const restarting = postgres.restart();
      state = 'back';
      await restarting;
      // Recovered by itself: the same API process acknowledges writes and jobs again.
      await until(() => acked.back >= 30 && acked.jobsBack >= 2);
      stop = true;
      await Promise.all(writers);
      expect(server.child.exitCode, server.output().slice(-2000)).toBeNull();
    }

    // Nothing dropped, and every failure is the documented envelope: 503 STORE_UNAVAILABLE, retryable, no stack.
    expect(dropped).toEqual([]);
    expect(failures.length).toBeGreaterThanOrEqual(ROUNDS * 3 * CONTRIBUTION_WRITERS);
    const codes = new Map<string, number>();
    for (const failure of failures) {
      const where = `round ${failure.round} ${failure.method} ${failure.path} → ${failure.status} ${failure.text.slice(0, 300)}`;
      expect(failure.headers['content-type'], where).toContain('application/json');
      const body = JSON.parse(failure.text) as { error: { code: string; retryable: boolean; agent_action: string; message: string } };
      expect(failure.status, where).toBe(503);
      expect(body.error, where).toMatchObject({ code: 'STORE_UNAVAILABLE', retryable: true, agent_action: expect.any(String), message: expect.any(String) });
      expect(failure.text, where).not.toMatch(/\n\s+at |node_modules|ECONNREFUSED|Connection terminated/);
      assertMatchesOpenApi(validator, failure.method, failure.path, { status: failure.status, headers: failure.headers, body });
      codes.set(
        `${failure.method} ${failure.path} ${failure.status} ${body.error.code}`,
        (codes.get(`${failure.method} ${failure.path} ${failure.status} ${body.error.code}`) ?? 0) + 1,
      );
    }
    // Both kinds of write met the outage.
    expect([...codes.keys()].sort()).toEqual(['GET /api/query 503 STORE_UNAVAILABLE', 'POST /api/contribute 503 STORE_UNAVAILABLE']);

    const store = await createPostgresStore(postgres.url);
    try {
      // Every acknowledged contribution survived the crashes.
      const stored = new Set((await store.listContributions()).map((item) => item.id));
      const lost = [...contributions].filter((id) => !stored.has(id));
      expect(contributions.size).toBeGreaterThanOrEqual(ROUNDS * 60);
      expect(attempted).toBeGreaterThan(contributions.size + jobs.size);
      expect(lost).toEqual([]);

      // Every acknowledged job was stored, and none is left queued or running: the sweep
      // re-queues what the outage interrupted, and each ends done or failed with a code.
      const missingJobs = [];
      for (const id of jobs) if (!(await store.getJob(id))) missingJobs.push(id);
      expect(missingJobs).toEqual([]);
      await until(async () => (await store.unfinishedJobs()).length === 0);
      const outcomes = new Map<string, number>();
      let rerun = 0;
      for (const id of jobs) {
        const job = (await store.getJob(id))!;
        if (job.attempts > 1) rerun++;
        expect(['done', 'failed'], id).toContain(job.status);
        if (job.status === 'failed') expect(Object.keys(ERROR_CODES), `${id}: ${JSON.stringify(job.error)}`).toContain(job.error?.code);
        const key = job.status === 'done' ? 'done' : `failed ${job.error!.code}`;
        outcomes.set(key, (outcomes.get(key) ?? 0) + 1);
      }
      expect(outcomes.get('done')).toBeGreaterThan(0);
      console.log(
        `pg-durability: ${ROUNDS} rounds, ${attempted} writes attempted, ${contributions.size} contributions and ${jobs.size} jobs acknowledged, ${lost.length} lost; ` +
          `outage answers: ${[...codes].map(([key, count]) => `${key} ×${count}`).join(', ')}; jobs: ${[...outcomes].map(([key, count]) => `${key} ×${count}`).join(', ')} (${rerun} run again after the sweep)`,
      );
    } finally {
      await store.close();
    }

    // A job polled through the API after the last recovery reads back from the store.
    const [someJob] = jobs;
    const polled = await fetch(`${server.base}/api/query?job=${someJob}`);
    expect(polled.status).toBe(200);
    expect(server.child.exitCode).toBeNull();
  }, 600_000);
});
