/**
 * A real server process killed with SIGKILL in the middle of a deliberation job: after a
 * restart on the same store the job is resumed and finishes; it is never left "running".
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringifyYaml } from '../scripts/lib/frontmatter.ts';
import { REPO_ROOT } from '../scripts/lib/paths.ts';
import { buildApp, tempDir, type BuiltApp } from './helpers/app.ts';
import { startFakeOpenAI, type FakeOpenAI } from './helpers/fake-openai.ts';
import { writeFixtureContent } from './helpers/fixture-content.ts';
import { scriptDefaults, testPanelConfig } from './helpers/live.ts';

let fake: FakeOpenAI;
let built: BuiltApp;
const children: ChildProcess[] = [];

beforeAll(async () => {
  fake = await startFakeOpenAI();
  built = await buildApp(writeFixtureContent());
});
afterAll(async () => {
  for (const child of children) child.kill('SIGKILL');
  await fake.close();
});

async function startServer(env: Record<string, string>): Promise<{ child: ChildProcess; base: string }> {
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
  for (let waited = 0; waited < 30_000; waited += 20) {
    const match = output.match(/listening on (http:\/\/127\.0\.0\.1:\d+)/);
    if (match) return { child, base: match[1]! };
    if (child.exitCode !== null) break;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  throw new Error(`server did not start: ${output}`);
}

async function waitFor(check: () => boolean | Promise<boolean>, limitMs: number): Promise<void> {
  for (let waited = 0; waited < limitMs; waited += 25) {
    if (await check()) return;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new Error('condition not met in time');
}

describe('jobs across kill -9', () => {
  it('resumes a deliberation interrupted by SIGKILL and finishes it', async () => {
    const dir = tempDir('restart');
    const configFile = path.join(dir, 'panel.yaml');
    writeFileSync(configFile, stringifyYaml(testPanelConfig(fake)));
    const env = { ARTIFACTS_DIR: built.artifactsDir, STORE_PATH: path.join(dir, 'store.db'), PANEL_CONFIG: configFile, SITE_DIR: path.join(dir, 'no-site') };
    scriptDefaults(fake);
    fake.setDefault('alder-live', { kind: 'hang' });

    const first = await startServer(env);
    const submitted = await (await fetch(`${first.base}/api/query?q=${encodeURIComponent('Interrupted question')}&async=1`)).json() as { job_id: string; poll_url: string };
    await waitFor(() => fake.counts('alder-live') > 0, 10_000);
    const running = await (await fetch(`${first.base}${submitted.poll_url}`)).json() as { status: string };
    expect(running.status).toBe('running');
    first.child.kill('SIGKILL');
    await new Promise((resolve) => first.child.once('exit', resolve));

    scriptDefaults(fake);
    const second = await startServer(env);
    let final: { status: string; answer?: string } = { status: 'running' };
    await waitFor(async () => {
      final = await (await fetch(`${second.base}${submitted.poll_url}`)).json() as typeof final;
      return final.status === 'done' || final.status === 'failed';
    }, 20_000);
    expect(final.status).toBe('done');
    expect(final.answer).toBeTypeOf('string');
    second.child.kill('SIGTERM');
  });
});
