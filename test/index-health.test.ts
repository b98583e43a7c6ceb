/**
 * The server's readiness while the vector index's worker thread is down: not ready from the
 * failure (told before readiness exists, marked once it does) until a new thread serves, with
 * a log line each way (api/ops/index-health.ts).
 */
import { describe, expect, it } from 'vitest';
import { createIndexHealth } from '../api/ops/index-health.ts';
import { createReadiness } from '../api/ops/readiness.ts';

const store = { spendStatus: async () => ({}) } as unknown as Parameters<typeof createReadiness>[0]['store'];

describe("readiness and the vector index's worker thread", () => {
  it('is not ready from a failure until the thread is replaced, whether told before readiness exists or after', async () => {
    const lines: string[] = [];
    const errors: string[] = [];
    const health = createIndexHealth(
      (line) => lines.push(line),
      (line) => errors.push(line),
    );
    health.failed(new Error('the vector index worker exited with code 1'));
    const readiness = createReadiness({ store });
    expect((await readiness.check()).ready).toBe(true);
    health.attach(readiness);
    const down = await readiness.check();
    expect(down.ready).toBe(false);
    expect(down.checks.artifacts.reason).toMatch(/worker thread failed \(the vector index worker exited with code 1\); a new one is being started/);
    expect(errors).toEqual([expect.stringMatching(/exited with code 1: searches take the exact scan/)]);
    health.recovered();
    expect((await readiness.check()).ready).toBe(true);
    expect(lines).toEqual([expect.stringMatching(/was replaced: searches take the approximate index again/)]);
    health.failed(new Error('the vector index worker failed: boom'));
    expect((await readiness.check()).checks.artifacts.ok).toBe(false);
  });
});
