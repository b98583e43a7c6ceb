/**
 * Backup and restore in operation (docs/OPERATIONS.md): `npm run backup` of the SQLite store
 * while a server process takes writes, then `npm run restore` with the server stopped: every
 * write acknowledged before the backup began is there. For PostgreSQL, the documented
 * pg_dump / pg_restore into an empty database, which a server then opens (migrations run).
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../core/paths.ts';
import { buildApp, tempDir, type BuiltApp } from '../devkit/app.ts';
import { writeFixtureContent } from '../devkit/fixture-content.ts';
import { POSTGRES_AVAILABLE, startPostgres, type TestPostgres } from '../devkit/postgres.ts';
import { createPostgresStore } from '../storage/postgres-store.ts';
import { createSqliteStore } from '../storage/sqlite-store.ts';
import { startServerProcess } from './helpers/server-process.ts';

let built: BuiltApp;
const stops: (() => void)[] = [];

beforeAll(async () => {
  built = await buildApp(writeFixtureContent());
}, 120_000);
afterAll(() => {
  for (const stop of stops) stop();
});

/** `npm run <command> -- <args>` as the script runs it (tsx), with the store of `env`. */
function runScript(script: 'backup' | 'restore', args: string[], env: Record<string, string>): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--import', 'tsx', path.join(REPO_ROOT, 'scripts', `${script}.ts`), ...args], {
      cwd: REPO_ROOT,
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.on('exit', (code) => resolve({ code, output }));
  });
}

interface Write {
  id: string;
  acknowledgedAt: number;
}

/** Clients writing contributions until stopped; each acknowledged write with when its 202 arrived. */
function writeLoad(base: string, clients: number) {
  const acknowledged: Write[] = [];
  let stop = false;
  const run = async (client: number) => {
    for (let round = 0; !stop; round++) {
      const response = await fetch(`${base}/api/contribute`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({
          id: 'TST-D1',
          answer: `Backup load ${client}.${round}: endorsing is owning.`,
          identity: `backup-${client}`,
          justification: 'missing_voice',
        }),
      });
      const body = (await response.json()) as { contribution_id?: string };
      if (response.status === 202 && body.contribution_id) acknowledged.push({ id: body.contribution_id, acknowledgedAt: Date.now() });
    }
  };
  const running = Promise.all(Array.from({ length: clients }, (_, client) => run(client)));
  return {
    acknowledged,
    async stop() {
      stop = true;
      await running;
    },
  };
}

/** Probes GET /api/ready until it says ready (the embedder warms up after the port opens); its last answer. */
async function readiness(base: string): Promise<{ status: number; body: unknown }> {
  let last = { status: 0, body: undefined as unknown };
  for (let attempt = 0; attempt < 300 && last.status !== 200; attempt++) {
    if (attempt > 0) await new Promise((resolve) => setTimeout(resolve, 100));
    const response = await fetch(`${base}/api/ready`);
    last = { status: response.status, body: await response.json() };
  }
  return last;
}

function exited(child: ChildProcess): Promise<number | null> {
  return child.exitCode !== null ? Promise.resolve(child.exitCode) : new Promise((resolve) => child.once('exit', (code) => resolve(code)));
}

describe('SQLite: npm run backup while the server writes, npm run restore with it stopped', () => {
  it('keeps every write acknowledged before the backup began, and refuses to restore under a running server', async () => {
    const dir = tempDir('backup');
    const storePath = path.join(dir, 'store.db');
    const env = {
      ARTIFACTS_DIR: built.artifactsDir,
      STORE_PATH: storePath,
      SITE_DIR: path.join(dir, 'none'),
      EMBED_WORKERS: '0',
      CONTRIBUTE_RATE_LIMIT: '100000/3600',
    };
    const server = await startServerProcess(env);
    stops.push(() => server.child.kill('SIGKILL'));
    const load = writeLoad(server.base, 4);
    await new Promise((resolve) => setTimeout(resolve, 1000));

    const backupFile = path.join(dir, 'backup.db');
    const began = Date.now();
    const backup = await runScript('backup', [backupFile], { STORE_PATH: storePath });
    const ended = Date.now();
    expect(backup.code, backup.output).toBe(0);
    expect(backup.output).toMatch(/^backed up .* schema version \d+, \d+ bytes$/m);
    await new Promise((resolve) => setTimeout(resolve, 500));
    await load.stop();

    // With the server running, a restore is refused and changes nothing.
    const refused = await runScript('restore', [backupFile], { STORE_PATH: storePath });
    expect(refused.code).toBe(1);
    expect(refused.output).toMatch(/restore refused \(STORE_IN_USE\).*stop the server before restoring/);

    server.child.kill('SIGTERM');
    expect(await exited(server.child)).toBe(0);
    const restored = await runScript('restore', [backupFile], { STORE_PATH: storePath });
    expect(restored.code, restored.output).toBe(0);
    expect(restored.output).toMatch(/the store it replaced is kept at .*\.before-restore-/);

    const before = load.acknowledged.filter((write) => write.acknowledgedAt < began);
    const after = load.acknowledged.filter((write) => write.acknowledgedAt > ended);
    expect(before.length).toBeGreaterThan(10);
    expect(after.length).toBeGreaterThan(0);
    const store = createSqliteStore(storePath);
    const missing = [];
    for (const write of before) if (!(await store.getContribution(write.id))) missing.push(write.id);
    expect(missing, 'writes acknowledged before the backup began').toEqual([]);
    // The restored store is the backup: writes acknowledged after it ended are not in it...
    for (const write of after) expect(await store.getContribution(write.id)).toBeUndefined();
    await store.close();
    // ...and are kept in the store the restore replaced.
    const kept = readdirSync(dir).find((name) => name.startsWith('store.db.before-restore-'))!;
    const previous = createSqliteStore(path.join(dir, kept));
    for (const write of load.acknowledged) expect(await previous.getContribution(write.id)).toBeDefined();
    await previous.close();

    // The server starts on the restored store.
    const again = await startServerProcess(env);
    stops.push(() => again.child.kill('SIGKILL'));
    expect(await readiness(again.base)).toMatchObject({ status: 200, body: { ready: true } });
    again.child.kill('SIGTERM');
    expect(await exited(again.child)).toBe(0);
  }, 180_000);

  it('refuses a PostgreSQL STORE_PATH, naming pg_dump', async () => {
    const result = await runScript('backup', [path.join(tempDir('backup-pg'), 'x.db')], { STORE_PATH: 'postgres://127.0.0.1:1/none' });
    expect(result.code).toBe(2);
    expect(result.output).toMatch(/pg_dump --format=custom/);
  }, 60_000);
});

describe.skipIf(!POSTGRES_AVAILABLE)('PostgreSQL: pg_dump and pg_restore as docs/OPERATIONS.md says', () => {
  let postgres: TestPostgres;
  beforeAll(async () => {
    postgres = await startPostgres();
    stops.push(() => postgres.stop());
  }, 120_000);

  it('restores a dump into an empty database that a server then opens, with every acknowledged write', async () => {
    const dir = tempDir('pg-backup');
    const env = { ARTIFACTS_DIR: built.artifactsDir, STORE_PATH: postgres.url, SITE_DIR: path.join(dir, 'none'), EMBED_WORKERS: '0' };
    const server = await startServerProcess(env);
    stops.push(() => server.child.kill('SIGKILL'));
    const load = writeLoad(server.base, 2);
    await new Promise((resolve) => setTimeout(resolve, 800));
    await load.stop();
    expect(load.acknowledged.length).toBeGreaterThan(3);

    const bin = (name: string) => {
      const found = ['/usr/lib/postgresql/15/bin', '/usr/lib/postgresql/16/bin', '/usr/bin'].map((folder) => path.join(folder, name)).find(existsSync);
      return found ?? name;
    };
    // The documented commands: a custom-format dump while the server runs, restored with the server stopped.
    const dump = path.join(dir, 'polyphony.dump');
    execFileSync(bin('pg_dump'), ['--format=custom', '--file', dump, postgres.url]);
    server.child.kill('SIGTERM');
    expect(await exited(server.child)).toBe(0);
    execFileSync(bin('psql'), [postgres.url, '-c', 'CREATE DATABASE restored']);
    const restoredUrl = postgres.url.replace(/\/postgres$/, '/restored');
    execFileSync(bin('pg_restore'), ['--no-owner', '--exit-on-error', '--dbname', restoredUrl, dump]);

    const restored = await startServerProcess({ ...env, STORE_PATH: restoredUrl });
    stops.push(() => restored.child.kill('SIGKILL'));
    expect(await readiness(restored.base)).toMatchObject({ status: 200, body: { ready: true } });
    const store = await createPostgresStore(restoredUrl);
    for (const write of load.acknowledged) expect(await store.getContribution(write.id), write.id).toBeDefined();
    await store.close();
    restored.child.kill('SIGTERM');
    expect(await exited(restored.child)).toBe(0);
  }, 180_000);
});
