/**
 * 20 rounds of SIGKILL while a real server process takes writes: every acknowledged
 * contribution (202) is in the store afterwards.
 */
import type { ChildProcess } from 'node:child_process';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSqliteStore } from '../storage/sqlite-store.ts';
import { buildApp, tempDir, type BuiltApp } from '../devkit/app.ts';
import { writeFixtureContent } from '../devkit/fixture-content.ts';
import { startServerProcess } from './helpers/server-process.ts';

const ROUNDS = 20;
let built: BuiltApp;
const children: ChildProcess[] = [];

beforeAll(async () => {
  built = await buildApp(writeFixtureContent());
});
afterAll(() => {
  for (const child of children) child.kill('SIGKILL');
});

describe('durability under kill -9', () => {
  it(`loses no acknowledged contribution over ${ROUNDS} rounds`, async () => {
    const storePath = path.join(tempDir('durability'), 'store.db');
    const env = { ARTIFACTS_DIR: built.artifactsDir, STORE_PATH: storePath, SITE_DIR: path.join(storePath, 'none'), CONTRIBUTE_RATE_LIMIT: '1000000/3600' };
    const acknowledged = new Set<string>();
    let attempted = 0;
    for (let round = 0; round < ROUNDS; round++) {
      const { child, base } = await startServerProcess(env);
      children.push(child);
      let stop = false;
      const writer = async (worker: number) => {
        for (let n = 0; !stop; n++) {
          attempted++;
          try {
            const response = await fetch(`${base}/api/contribute`, {
              method: 'POST',
              headers: { 'Content-Type': 'application/json' },
              body: JSON.stringify({
                id: 'TST-D1',
                answer: `round ${round} worker ${worker} write ${n}`,
                identity: 'durability-test',
                justification: 'new_position',
              }),
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
