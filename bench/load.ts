/**
 * `npm run bench:load`: drives the running server on loopback with autocannon, with 1 and
 * with 2 API processes (WORKERS), for Atlas reads, repeated and distinct fast-path
 * questions, and job submission (a fake OpenAI-compatible panel answers). The reference for
 * distinct questions is the query embedder alone, measured in this run. Each configuration
 * runs on the embedded SQLite store and, where PostgreSQL's binaries are installed, again
 * with the processes sharing one PostgreSQL store (a throw-away cluster on a free loopback
 * port, a fresh database per configuration).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import autocannon from 'autocannon';
import pg from 'pg';
import { createUseLiteEmbedder } from '../providers/embedder.ts';
import { buildArtifacts } from '../scripts/build.ts';
import { stringifyYaml } from '../content-files/frontmatter.ts';
import { REPO_ROOT } from '../core/paths.ts';
import { startFakeOpenAI } from '../devkit/fake-openai.ts';
import { scriptDefaults, testPanelConfig } from '../devkit/live.ts';
import { POSTGRES_AVAILABLE, startPostgres, type TestPostgres } from '../devkit/postgres.ts';

const DURATION = Number(process.env.LOAD_SECONDS ?? 10);
const CONNECTIONS = 32;

async function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const port = (server.address() as { port: number }).port;
      server.close(() => resolve(port));
    });
  });
}

async function startServer(env: Record<string, string>, workers: number): Promise<{ child: ChildProcess; base: string }> {
  const port = await freePort();
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(REPO_ROOT, 'api/server.ts')], {
    cwd: REPO_ROOT,
    env: { ...process.env, ...env, PORT: String(port), HOST: '127.0.0.1', WORKERS: String(workers) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  while ((output.match(/listening on/g) ?? []).length < workers) {
    if (child.exitCode !== null) throw new Error(output);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return { child, base: `http://127.0.0.1:${port}` };
}

async function stopServer(child: ChildProcess): Promise<void> {
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, 10_000))]);
  child.kill('SIGKILL');
  await new Promise((resolve) => setTimeout(resolve, 500));
}

/** A fresh database in the cluster, so that jobs queued by one configuration never run in the next. */
async function freshDatabase(url: string, name: string): Promise<string> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(`CREATE DATABASE ${name}`);
  } finally {
    await client.end();
  }
  return url.replace(/\/[^/]*$/, `/${name}`);
}

interface Scenario {
  name: string;
  path: (n: number) => string;
  expect: number;
}

async function run(base: string, scenario: Scenario) {
  let n = 0;
  const result = await autocannon({
    url: base,
    connections: CONNECTIONS,
    duration: DURATION,
    requests: [{ setupRequest: (request) => ({ ...request, path: scenario.path(n++) }) }],
  });
  const non2xx = result.non2xx;
  return {
    name: scenario.name,
    rps: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    errors: result.errors + result.timeouts + non2xx,
    total: result.requests.total,
  };
}

async function main() {
  const artifactsDir = mkdtempSync(path.join(os.tmpdir(), 'polyphony-load-'));
  const embedder = await createUseLiteEmbedder();
  await buildArtifacts({ contentDir: path.join(REPO_ROOT, 'content'), artifactsDir, cacheDir: path.join(REPO_ROOT, '.cache', 'embeddings'), embedder });
  const fake = await startFakeOpenAI();
  scriptDefaults(fake);
  const configFile = path.join(artifactsDir, 'panel.yaml');
  writeFileSync(configFile, stringifyYaml(testPanelConfig(fake)));

  // Reference: the query embedder alone, one process, distinct questions.
  const started = performance.now();
  const count = 200;
  for (let i = 0; i < count; i++) await embedder.embed([`distinct reference question number ${i} about model disagreement`]);
  const embedderRate = count / ((performance.now() - started) / 1000);

  const scenarios: Scenario[] = [
    { name: 'Atlas read (GET /api/divergences?id=…)', path: (n) => `/api/divergences?id=PLY-D${1001 + (n % 26)}`, expect: 200 },
    { name: 'Atlas index (GET /api/divergences)', path: () => '/api/divergences', expect: 200 },
    { name: 'fast path, repeated question', path: () => '/api/query?q=Can+a+model+own+its+refusals%3F', expect: 200 },
    {
      name: 'fast path, all-distinct questions',
      path: (n) => `/api/query?q=${encodeURIComponent(`what do the voices say about memory and continuity, question ${n}`)}`,
      expect: 200,
    },
    { name: 'job submission (async=1)', path: (n) => `/api/query?q=${encodeURIComponent(`load job ${n}`)}&async=1`, expect: 202 },
  ];
  const measure = async (title: string, workers: number, storePath?: string) => {
    const storeDir = mkdtempSync(path.join(os.tmpdir(), 'polyphony-load-store-'));
    const { child, base } = await startServer(
      {
        ARTIFACTS_DIR: artifactsDir,
        STORE_PATH: storePath ?? path.join(storeDir, 'store.db'),
        PANEL_CONFIG: configFile,
        SITE_DIR: path.join(storeDir, 'none'),
        // Load, not abuse: lift the per-client limits for this loopback client.
        LIVE_RATE_LIMIT: '100000000/3600',
        LIVE_GLOBAL_RATE_LIMIT: '100000000/3600',
      },
      workers,
    );
    console.log(`\n### ${title}`);
    console.log('| scenario | req/s | p50 ms | p99 ms | errors or non-2xx |');
    console.log('| --- | --- | --- | --- | --- |');
    for (const scenario of scenarios) {
      const result = await run(base, scenario);
      console.log(`| ${result.name} | ${result.rps.toFixed(0)} | ${result.p50} | ${result.p99} | ${result.errors} of ${result.total} |`);
    }
    await stopServer(child);
  };
  const processes = (workers: number) => `${workers} API process${workers > 1 ? 'es' : ''}`;

  console.log(`\n## Load on loopback: ${CONNECTIONS} connections, ${DURATION} s per scenario`);
  console.log(`reference: query embedder alone, distinct questions, one process: ${embedderRate.toFixed(0)} questions/s`);
  for (const workers of [1, 2]) await measure(processes(workers), workers);

  // Scale-out: the same scenarios with the processes sharing one PostgreSQL store.
  let postgres: TestPostgres | undefined;
  try {
    postgres = POSTGRES_AVAILABLE ? await startPostgres() : undefined;
  } catch (error) {
    console.log(`\nPostgreSQL store: skipped (${(error as Error).message.split('\n')[0]})`);
  }
  if (!POSTGRES_AVAILABLE) console.log('\nPostgreSQL store: skipped (no PostgreSQL binaries: initdb, pg_ctl)');
  if (postgres) {
    try {
      for (const workers of [1, 2]) {
        const url = await freshDatabase(postgres.url, `polyphony_load_${workers}`);
        await measure(`${processes(workers)} sharing one PostgreSQL store`, workers, url);
      }
    } finally {
      postgres.stop();
    }
  }
  await fake.close();
  process.exit(0);
}

void main();
