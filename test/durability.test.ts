/**
 * 20 rounds of SIGKILL while a real server process takes writes: every acknowledged
 * contribution (202) is in the store afterwards.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSqliteStore } from '../api/storage/sqlite-store.ts';
import { REPO_ROOT } from '../scripts/lib/paths.ts';
import { buildApp, tempDir, type BuiltApp } from './helpers/app.ts';
import { writeFixtureContent } from './helpers/fixture-content.ts';

const ROUNDS = 20;
let built: BuiltApp;
const children: ChildProcess[] = [];

beforeAll(async () => {
  built = await buildApp(writeFixtureContent());
});
afterAll(() => {
  for (const child of children) child.kill('SIGKILL');
});

async function start(env: Record<string, string>): Promise<{ child: ChildProcess; base: string }> {
  // `node --import tsx` (not the tsx CLI, which forks): the pid we kill is the server itself.
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(REPO_ROOT, 'api/server.ts')], {
    cwd: REPO_ROOT,
    env: { ...process.env, PORT: '0', HOST: '127.0.0.1', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  let output = '';
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  for (let waited = 0; waited < 30_000; waited += 10) {
    const match = output.match(/listening on (http:\/\/127\.0\.0\.1:\d+)/);
    if (match) return { child, base: match[1]! };
    if (child.exitCode !== null) break;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  throw new Error(`server did not start: ${output}`);
}

describe('durability under kill -9', () => {
  it(`loses no acknowledged contribution over ${ROUNDS} rounds`, async () => {
    const storePath = path.join(tempDir('durability'), 'store.db');
    const env = { ARTIFACTS_DIR: built.artifactsDir, STORE_PATH: storePath, SITE_DIR: path.join(storePath, 'none'), CONTRIBUTE_RATE_LIMIT: '1000000/3600' };
    const acknowledged = new Set<string>();
    let attempted = 0;
    for (let round = 0; round < ROUNDS; round++) {
      const { child, base } = await start(env);
      let stop = false;
      const writer = async (worker: number) => {
        for (let n = 0; !stop; n++) {
          attempted++;
          try {
            const response = await fetch(`${base}/api/contribute`, {
              method: 'POST',
              headers: { 'Content-Type': 'application/json' },
              body: JSON.stringify({ id: 'TST-D1', answer: `round ${round} worker ${worker} write ${n}`, identity: 'durability-test', justification: 'new_position' }),
            });
            if (response.status === 202) acknowledged.add(((await response.json()) as { contribution_id: string }).contribution_id);
          } catch {
            return; // the server died mid-request: that write was never acknowledged
          }
        }
      };
      const writers = Array.from({ length: 8 }, (_, worker) => writer(worker));
      await new Promise((resolve) => setTimeout(resolve, 150 + ((round * 37) % 200)));
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGKILL');
      await exited;
      stop = true;
      await Promise.all(writers);
    }
    const store = createSqliteStore(storePath);
    const stored = new Set((await store.listContributions()).map((item) => item.id));
    await store.close();
    const lost = [...acknowledged].filter((id) => !stored.has(id));
    expect(acknowledged.size).toBeGreaterThan(ROUNDS * 5);
    expect(attempted).toBeGreaterThan(acknowledged.size);
    expect(lost).toEqual([]);
  }, 300_000);
});
