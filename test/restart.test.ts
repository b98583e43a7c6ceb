/**
 * A real server process killed with SIGKILL in the middle of a deliberation job: after a
 * restart on the same store the job is resumed and finishes; it is never left "running".
 */
import type { ChildProcess } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringifyYaml } from '../content-files/frontmatter.ts';
import { buildApp, tempDir, type BuiltApp } from '../devkit/app.ts';
import { startFakeOpenAI, type FakeOpenAI } from '../devkit/fake-openai.ts';
import { writeFixtureContent } from '../devkit/fixture-content.ts';
import { startServerProcess } from './helpers/server-process.ts';
import { scriptDefaults, testPanelConfig } from '../devkit/live.ts';

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

    const first = await startServerProcess(env);
    children.push(first.child);
    const submitted = (await (await fetch(`${first.base}/api/query?q=${encodeURIComponent('Interrupted question')}&async=1`)).json()) as {
      job_id: string;
      poll_url: string;
    };
    await waitFor(() => fake.counts('alder-live') > 0, 10_000);
    const running = (await (await fetch(`${first.base}${submitted.poll_url}`)).json()) as { status: string };
    expect(running.status).toBe('running');
    first.child.kill('SIGKILL');
    await new Promise((resolve) => first.child.once('exit', resolve));

    scriptDefaults(fake);
    const second = await startServerProcess(env);
    children.push(second.child);
    let final: { status: string; answer?: string } = { status: 'running' };
    await waitFor(async () => {
      final = (await (await fetch(`${second.base}${submitted.poll_url}`)).json()) as typeof final;
      return final.status === 'done' || final.status === 'failed';
    }, 20_000);
    expect(final.status).toBe('done');
    expect(final.answer).toBeTypeOf('string');
    second.child.kill('SIGTERM');
  });
});
