/**
 * Running it in production, with real server processes (docs/OPERATIONS.md): JSON log lines
 * carrying the request id, readiness, metrics on their own loopback port, and the drain on
 * SIGTERM: alone (the in-flight answer completes, exit 0), and with WORKERS=2 under load (every
 * request sent before the signal is answered in full, every acknowledged write is stored, and
 * a job running on the drained worker finishes on the other one).
 */
import type { ChildProcess } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import parsePrometheusTextFormat from 'parse-prometheus-text-format';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringifyYaml } from '../content-files/frontmatter.ts';
import { buildApp, tempDir, type BuiltApp } from '../devkit/app.ts';
import { startFakeOpenAI, type FakeOpenAI } from '../devkit/fake-openai.ts';
import { writeFixtureContent } from '../devkit/fixture-content.ts';
import { PANEL, scriptDefaults, testPanelConfig } from '../devkit/live.ts';
import { createSqliteStore } from '../storage/sqlite-store.ts';
import { startServerProcess, type ServerProcess } from './helpers/server-process.ts';

type Line = Record<string, unknown> & { msg?: string; pid?: number };

let built: BuiltApp;
let fake: FakeOpenAI;
const children: ChildProcess[] = [];

beforeAll(async () => {
  [built, fake] = await Promise.all([buildApp(writeFixtureContent()), startFakeOpenAI()]);
  scriptDefaults(fake);
}, 120_000);
afterAll(async () => {
  for (const child of children) if (child.exitCode === null) child.kill('SIGKILL');
  await fake?.close();
});

/** Every line the process printed, each parsed as JSON (a line that is not JSON fails the test, with the whole output). */
function logLines(server: ServerProcess): Line[] {
  return server
    .output()
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => {
      try {
        return JSON.parse(line) as Line;
      } catch {
        throw new Error(`a log line is not JSON: ${line}\n--- the whole output:\n${server.output()}`);
      }
    });
}

async function waitFor<T>(what: string, probe: () => T | undefined | Promise<T | undefined>, timeoutMs = 60_000): Promise<T> {
  const until = Date.now() + timeoutMs;
  while (Date.now() < until) {
    const value = await probe();
    if (value !== undefined) return value;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`timed out waiting for ${what}`);
}

interface Answer {
  status: number;
  body: string;
  headers: http.IncomingHttpHeaders;
}

/** One request on its own connection (no keep-alive pool): a new connection is what a drained process stops accepting. */
function send(base: string, method: 'GET' | 'POST', url: string, body?: unknown, headers: Record<string, string> = {}): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const payload = body === undefined ? undefined : JSON.stringify(body);
    const request = http.request(
      `${base}${url}`,
      {
        method,
        agent: false,
        headers: { ...headers, ...(payload ? { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(payload) } : {}) },
      },
      (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () => resolve({ status: response.statusCode!, body: Buffer.concat(chunks).toString(), headers: response.headers }));
        response.on('error', reject);
      },
    );
    request.on('error', reject);
    request.end(payload);
  });
}

function exited(child: ChildProcess): Promise<number | null> {
  return child.exitCode !== null ? Promise.resolve(child.exitCode) : new Promise((resolve) => child.once('exit', (code) => resolve(code)));
}

function environment(extra: Record<string, string>): Record<string, string> {
  const dir = tempDir('drain');
  const panelFile = path.join(dir, 'panel.yaml');
  // Calls may take longer than the default test panel's 2 s: the drain is what cuts them here.
  writeFileSync(panelFile, stringifyYaml(testPanelConfig(fake, { defaults: { timeout_ms: 30_000, max_retries: 0, max_tokens: 400 } })));
  return {
    ARTIFACTS_DIR: built.artifactsDir,
    STORE_PATH: path.join(dir, 'store.db'),
    SITE_DIR: path.join(dir, 'no-site'),
    PANEL_CONFIG: panelFile,
    EMBED_WORKERS: '0',
    METRICS_PORT: '0',
    ...extra,
  };
}

/** The panel's answers take `delayMs`: a live run is in flight long enough to be signalled. */
function slowPanel(delayMs: number): void {
  for (const name of PANEL) {
    fake.setDefault(`${name.toLowerCase()}-live`, { kind: 'slow', delayMs, then: { kind: 'answer', content: `${name} answers slowly.` } });
  }
}

describe('one process', () => {
  it('logs JSON lines with the request id, becomes ready, serves /metrics on loopback, and drains an in-flight answer on SIGTERM', async () => {
    scriptDefaults(fake);
    const server = await startServerProcess(environment({ DRAIN_GRACE_MS: '20000' }));
    children.push(server.child);
    const ready = await waitFor('readiness', async () => {
      const answer = await send(server.base, 'GET', '/api/ready');
      return answer.status === 200 ? (JSON.parse(answer.body) as { ready: boolean }) : undefined;
    });
    expect(ready.ready).toBe(true);

    const metricsLine = await waitFor('the metrics line', () => logLines(server).find((line) => /^metrics on /.test(line.msg ?? '')));
    const metricsBase = metricsLine.msg!.match(/(http:\/\/127\.0\.0\.1:\d+)\/metrics/)![1]!;
    expect(metricsBase).not.toBe(server.base);
    expect((await send(server.base, 'GET', '/metrics')).status, 'not on the public port').toBe(404);

    const fast = await send(server.base, 'GET', '/api/query?q=What%20does%20the%20harbour%20keep%20secret%3F', undefined, {
      'X-Request-Id': 'ops-fast-0000001',
    });
    expect(fast.status).toBe(200);
    expect(fast.headers['x-request-id']).toBe('ops-fast-0000001');

    const scrape = await send(metricsBase, 'GET', '/metrics');
    expect(scrape.status).toBe(200);
    expect(scrape.headers['content-type']).toMatch(/^text\/plain; version=0\.0\.4/);
    const families = new Map(parsePrometheusTextFormat(scrape.body).map((family) => [family.name, family]));
    expect(families.get('polyphony_http_request_duration_seconds')?.type).toBe('HISTOGRAM');
    expect(scrape.body).toMatch(/^polyphony_http_request_duration_seconds_count\{method="GET",route="\/api\/query",status="200"\} 1$/m);
    expect(scrape.body).toMatch(/^polyphony_retrieval_stage_seconds_count\{stage="embedding"\} [1-9]/m);
    expect(scrape.body).toMatch(/^polyphony_spend_usd\{kind="ceiling"\} \d/m);
    expect(scrape.body).toMatch(/^polyphony_jobs\{state="queued"\} 0$/m);
    expect(scrape.body).toMatch(/^process_resident_memory_bytes \d+/m);
    expect(scrape.body).not.toContain('harbour');

    // A sync deliberation whose panel takes 3 s is in flight when SIGTERM arrives.
    slowPanel(3000);
    const inFlight = send(server.base, 'GET', '/api/query?q=Who%20keeps%20the%20harbour%20light%3F&sync=1', undefined, { 'X-Request-Id': 'ops-live-0000001' });
    await waitFor('the panel calls', () => (fake.requests.some((request) => request.model === 'alder-live') ? true : undefined));
    server.child.kill('SIGTERM');
    const answer = await inFlight;
    expect(answer.status, answer.body).toBe(200);
    expect(JSON.parse(answer.body)).toHaveProperty('answer');
    expect(answer.headers.connection).toBe('close');
    expect(await exited(server.child)).toBe(0);
    await expect(send(server.base, 'GET', '/api/health')).rejects.toThrow(/ECONNREFUSED/);

    const lines = logLines(server);
    expect(lines.find((line) => line.request_id === 'ops-fast-0000001' && line.msg === 'request')).toMatchObject({
      level: 'info',
      route: '/api/query',
      status: 200,
    });
    expect(lines.find((line) => line.request_id === 'ops-live-0000001' && line.msg === 'request')).toMatchObject({ status: 200 });
    const calls = lines.filter((line) => line.event === 'provider_call' && line.request_id === 'ops-live-0000001');
    expect(calls.length).toBeGreaterThanOrEqual(3);
    for (const call of calls) expect(call.outcome, JSON.stringify(call)).toBe('answered');
    expect(lines.map((line) => line.msg)).toEqual(
      expect.arrayContaining([expect.stringMatching(/^draining: 1 request\(s\) in flight/), expect.stringMatching(/^drained in \d+ ms$/)]),
    );
    expect(JSON.stringify(lines)).not.toContain('harbour');
  }, 120_000);
});

describe('WORKERS=2', () => {
  it('under load, a SIGTERM to one worker loses no request sent before it and no acknowledged write, and its running job finishes on the other', async () => {
    scriptDefaults(fake);
    const dir = tempDir('drain-workers');
    const storePath = path.join(dir, 'store.db');
    const server = await startServerProcess(
      environment({ WORKERS: '2', STORE_PATH: storePath, DRAIN_GRACE_MS: '1500', JOB_SWEEP_MS: '200', CONTRIBUTE_RATE_LIMIT: '100000/3600' }),
      90_000,
    );
    children.push(server.child);
    // Both workers listening (each logs its own line).
    const pids = await waitFor('two workers', () => {
      const listening = [
        ...new Set(
          logLines(server)
            .filter((line) => /listening on/.test(line.msg ?? ''))
            .map((line) => line.pid!),
        ),
      ];
      return listening.length === 2 ? listening : undefined;
    });

    // The job's panel takes 6 s: longer than the grace, so it cannot finish on the drained worker.
    slowPanel(6000);
    const submitted = await send(server.base, 'GET', '/api/query?q=Who%20relights%20the%20harbour%3F&async=1', undefined, {
      'X-Request-Id': 'ops-job-00000001',
    });
    expect(submitted.status, submitted.body).toBe(202);
    const jobId = (JSON.parse(submitted.body) as { job_id: string }).job_id;
    const started = await waitFor('the job to start', () => logLines(server).find((line) => line.job_id === jobId && /started$/.test(line.msg ?? '')));
    expect(started.request_id).toBe('ops-job-00000001');
    const drained = started.pid!;
    expect(pids).toContain(drained);

    // Load: fast-path reads and acknowledged writes, each on a new connection, from 6 clients.
    type Outcome = { before: boolean; kind: 'read' | 'write'; status?: number; id?: string; error?: string };
    const outcomes: Outcome[] = [];
    let signalled = false;
    let stop = false;
    const client = async (index: number) => {
      for (let round = 0; !stop; round++) {
        const before = !signalled;
        const write = round % 3 === 0;
        try {
          const answer = write
            ? await send(server.base, 'POST', '/api/contribute', {
                id: 'TST-D1',
                answer: `Answer ${index}.${round}: ownership comes with the work of endorsing it.`,
                identity: `drain-client-${index}`,
                justification: 'missing_voice',
              })
            : await send(server.base, 'GET', `/api/query?q=${encodeURIComponent(`Refusal and ownership ${index} ${round}`)}`);
          const body = JSON.parse(answer.body) as { contribution_id?: string; context?: unknown };
          outcomes.push({
            before,
            kind: write ? 'write' : 'read',
            status: answer.status,
            ...(write && body.contribution_id ? { id: body.contribution_id } : {}),
          });
        } catch (error) {
          outcomes.push({ before, kind: write ? 'write' : 'read', error: (error as Error).message });
        }
      }
    };
    const load = Promise.all(Array.from({ length: 6 }, (_, index) => client(index)));
    await new Promise((resolve) => setTimeout(resolve, 1500));
    signalled = true;
    process.kill(drained, 'SIGTERM');
    await waitFor(
      'the drained worker to exit',
      () => (logLines(server).some((line) => line.pid === drained && /^drained in/.test(line.msg ?? '')) ? true : undefined),
      30_000,
    );
    await new Promise((resolve) => setTimeout(resolve, 1000));
    stop = true;
    await load;

    const before = outcomes.filter((outcome) => outcome.before);
    expect(before.length).toBeGreaterThan(10);
    const failed = before.filter((outcome) => outcome.error !== undefined || (outcome.status !== 200 && outcome.status !== 202));
    expect(failed, 'requests sent before the signal').toEqual([]);
    expect(logLines(server).find((line) => line.pid === drained && /handed back/.test(line.msg ?? ''))?.msg).toMatch(/^drain: 1 running job\(s\) handed back/);

    // The job finishes on the other worker (or the primary's replacement), from its stored input.
    const final = await waitFor(
      'the job to finish elsewhere',
      async () => {
        const poll = JSON.parse((await send(server.base, 'GET', `/api/query?job=${jobId}`)).body) as { status: string };
        return poll.status === 'done' || poll.status === 'failed' ? poll : undefined;
      },
      60_000,
    );
    expect(final.status).toBe('done');
    const runs = logLines(server).filter((line) => line.job_id === jobId && /started$/.test(line.msg ?? ''));
    expect(runs.length).toBe(2);
    expect(runs[1]!.pid).not.toBe(drained);
    expect(runs[1]!.request_id).toBe('ops-job-00000001');

    // The primary serves every worker's figures: the load's requests, summed.
    const metricsLine = logLines(server).find((line) => /^metrics of 2 workers on /.test(line.msg ?? ''))!;
    const metricsBase = metricsLine.msg!.match(/(http:\/\/127\.0\.0\.1:\d+)\/metrics/)![1]!;
    const scrape = await send(metricsBase, 'GET', '/metrics');
    expect(scrape.status, scrape.body).toBe(200);
    parsePrometheusTextFormat(scrape.body);
    expect(scrape.body).toMatch(/^polyphony_jobs_finished_total\{kind="deliberation",outcome="done"\} 1$/m);
    expect(scrape.body).toMatch(/^polyphony_http_request_duration_seconds_count\{method="POST",route="\/api\/contribute",status="202"\} [1-9]\d*$/m);

    server.child.kill('SIGTERM');
    expect(await exited(server.child)).toBe(0);

    const store = createSqliteStore(storePath);
    const acknowledged = outcomes.filter((outcome) => outcome.kind === 'write' && outcome.status === 202);
    expect(acknowledged.length).toBeGreaterThan(3);
    for (const write of acknowledged) expect(await store.getContribution(write.id!), write.id).toBeDefined();
    await store.close();
  }, 240_000);
});
