/**
 * The operating settings reach the real server process (api/server.ts): BODY_TIMEOUT_MS,
 * PUBLIC_BASE_URL, TRUST_PROXY and a rate limit read from the environment, and a TRUST_PROXY
 * that would let clients forge their address stops the start with the setting's name.
 */
import type { ChildProcess } from 'node:child_process';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp, tempDir, type BuiltApp } from '../devkit/app.ts';
import { writeFixtureContent } from '../devkit/fixture-content.ts';
import { rawRequest } from './helpers/fuzz.ts';
import { startServerProcess } from './helpers/server-process.ts';

let built: BuiltApp;
const children: ChildProcess[] = [];

beforeAll(async () => {
  built = await buildApp(writeFixtureContent());
});
afterAll(() => {
  for (const child of children) child.kill('SIGKILL');
});

function environment(extra: Record<string, string>): Record<string, string> {
  const dir = tempDir('server-ops');
  return { ARTIFACTS_DIR: built.artifactsDir, STORE_PATH: path.join(dir, 'store.db'), SITE_DIR: path.join(dir, 'no-site'), EMBED_WORKERS: '0', ...extra };
}

describe('operating settings in the server process', () => {
  it('applies BODY_TIMEOUT_MS, PUBLIC_BASE_URL, TRUST_PROXY and PLAY_RATE_LIMIT', async () => {
    const server = await startServerProcess(
      environment({ BODY_TIMEOUT_MS: '1000', PUBLIC_BASE_URL: 'https://polyphony.example/', TRUST_PROXY: '1', PLAY_RATE_LIMIT: '1/3600' }),
    );
    children.push(server.child);
    const port = Number(new URL(server.base).port);

    const slow = await rawRequest(
      port,
      Buffer.from('POST /api/play HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"slug":', 'latin1'),
      20_000,
    );
    expect(slow.status, slow.statusLine).toBe(408);
    expect(JSON.parse(slow.body).error).toMatchObject({ code: 'REQUEST_TIMEOUT', message: 'the request did not arrive in full within 1000 ms' });
    expect(slow.closed).toBe(true);

    expect(await (await fetch(`${server.base}/robots.txt`)).text()).toContain('Sitemap: https://polyphony.example/sitemap.xml\n');

    const play = (forwarded: string) =>
      fetch(`${server.base}/api/play`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', 'X-Forwarded-For': forwarded },
        body: JSON.stringify({ slug: 'harbour-talk' }),
      });
    expect((await play('198.51.100.1, 203.0.113.7')).status).toBe(202);
    expect((await play('198.51.100.2, 203.0.113.7')).status).toBe(429);
  }, 60_000);

  it.each(['1', '2'])(
    'refuses TRUST_PROXY=true at start, naming the setting (WORKERS=%s)',
    async (workers) => {
      const failure = await startServerProcess(environment({ TRUST_PROXY: 'true', WORKERS: workers })).then(
        () => new Error('the server started'),
        (error: Error) => error,
      );
      // One JSON line at level fatal, as every line of the server (docs/OPERATIONS.md).
      // (The helper's message starts with "server did not start: " before the process's output.)
      const line = failure.message.split('\n').find((text) => text.includes('invalid environment'))!;
      expect(JSON.parse(line.slice(line.indexOf('{')))).toMatchObject({
        level: 'fatal',
        msg: expect.stringMatching(/^\[server\] invalid environment: TRUST_PROXY: "true" would trust any X-Forwarded-For/),
      });
      expect(failure.message, 'a stack trace').not.toMatch(/\n\s+at /);
      // Once: with several workers the primary stops before forking any (a worker exiting on a bad setting would be restarted forever).
      expect(failure.message.match(/invalid environment/g)).toHaveLength(1);
    },
    60_000,
  );
});
