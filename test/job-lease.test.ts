/**
 * Job leases on both drivers, with two runners sharing one store as two processes would and
 * a clock the test moves: a job running longer than its lease is renewed by its runner's
 * heartbeat and never run by the other; a job whose runner died is reclaimed once its lease
 * has lapsed, not before; a runner whose job was taken over aborts it and does not finish it.
 */
import { afterAll, describe, expect, it, vi } from 'vitest';
import { createJobRunner, type JobHandler, type JobRunner } from '../api/jobs/runner.ts';
import type { Store } from '../storage/store.ts';
import { writeStoreDrivers } from './helpers/write-stores.ts';

const { drivers, stop } = writeStoreDrivers();
afterAll(() => stop(), 60_000);

const LEASE = 60_000;

/** A clock the test moves, and a handler that runs until the test releases it. */
function harness(store: Store) {
  let time = Date.UTC(2026, 0, 1);
  const clock = { advance: (ms: number) => (time += ms), now: () => new Date(time) };
  let ids = 0;
  const runner = (name: string, options: { heartbeatMs?: number } = {}) => {
    const runs: { attempt: number; signal: AbortSignal }[] = [];
    let release: (value: unknown) => void = () => {};
    const released = new Promise((resolve) => (release = resolve));
    let started: () => void = () => {};
    const start = new Promise<void>((resolve) => (started = resolve));
    const handler: JobHandler = async (_input, job) => {
      runs.push(job);
      started();
      const aborted = new Promise((_, reject) => job.signal.addEventListener('abort', () => reject(job.signal.reason as Error)));
      return Promise.race([released, aborted]);
    };
    const instance: JobRunner = createJobRunner({
      store,
      concurrency: 2,
      now: clock.now,
      newId: () => `job_${name}_${++ids}`,
      log: () => {},
      describeFailure: (error) => ({ code: 'JOB_FAILED', message: (error as Error).message }),
      leaseMs: LEASE,
      // An hour: the test beats by hand, except where it checks the timer itself.
      heartbeatMs: options.heartbeatMs ?? 3_600_000,
      handlers: { council: handler, deliberation: handler, trace: handler },
    });
    return { runner: instance, runs, release, start };
  };
  return { clock, runner };
}

for (const driver of drivers) {
  describe.skipIf(!driver.available)(`job leases: ${driver.name}`, () => {
    it('a job running for many leases is renewed by its heartbeat and never run by another runner', async () => {
      const store = await driver.open();
      const { clock, runner } = harness(store);
      const a = runner('a');
      const b = runner('b');
      const job = await a.runner.submit('council', { q: 'long' });
      await a.start;
      for (let beat = 0; beat < 5; beat++) {
        clock.advance(LEASE * 0.8);
        await a.runner.heartbeat();
        expect(await b.runner.resume()).toEqual({ resumed: 0, failed: 0 });
      }
      // five leases' worth of time later, the job is still the first runner's only
      expect((await store.getJob(job.id))!.lease_expires_at).toBe(new Date(clock.now().getTime() + LEASE).toISOString());
      a.release({ answer: 'once' });
      await a.runner.idle();
      expect(await store.getJob(job.id)).toMatchObject({ status: 'done', result: { answer: 'once' }, attempts: 1 });
      expect(a.runs).toHaveLength(1);
      expect(b.runs).toHaveLength(0);
      await store.close();
    });

    it("without a heartbeat the same job would be taken over: a dead runner's job is reclaimed once its lease lapses, not before", async () => {
      const store = await driver.open();
      const { clock, runner } = harness(store);
      // A process claimed the job and died: nothing renews its lease.
      await store.createJob({ id: 'job_dead', kind: 'council', input: null }, clock.now());
      expect(await store.claimJob('job_dead', clock.now(), LEASE)).toBe(true);
      const b = runner('b');
      clock.advance(LEASE - 1);
      expect(await b.runner.resume()).toEqual({ resumed: 0, failed: 0 });
      clock.advance(1);
      expect(await b.runner.resume()).toEqual({ resumed: 1, failed: 0 });
      await b.start;
      b.release({ answer: 'reclaimed' });
      await b.runner.idle();
      expect(await store.getJob('job_dead')).toMatchObject({ status: 'done', result: { answer: 'reclaimed' }, attempts: 2 });
      await store.close();
    });

    it('a runner whose job was taken over after its lease lapsed aborts it and leaves it to the new owner', async () => {
      const store = await driver.open();
      const { clock, runner } = harness(store);
      const a = runner('a');
      const b = runner('b');
      const job = await a.runner.submit('council', null);
      await a.start;
      // the first runner stalls past its lease (no heartbeat), the second takes the job over
      clock.advance(LEASE);
      expect(await b.runner.resume()).toEqual({ resumed: 1, failed: 0 });
      await b.start;
      await a.runner.heartbeat();
      expect(a.runs[0]!.signal.aborted).toBe(true);
      expect((a.runs[0]!.signal.reason as Error).name).toBe('JobLeaseLost');
      await a.runner.idle();
      // the aborted run did not finish the job: it is still running, as the second runner's
      expect(await store.getJob(job.id)).toMatchObject({ status: 'running', attempts: 2 });
      b.release({ answer: 'second' });
      await b.runner.idle();
      expect(await store.getJob(job.id)).toMatchObject({ status: 'done', result: { answer: 'second' } });
      await store.close();
    });

    it('the heartbeat runs by itself every heartbeatMs while a job runs', async () => {
      const store = await driver.open();
      const { clock, runner } = harness(store);
      const a = runner('a', { heartbeatMs: 5 });
      const job = await a.runner.submit('council', null);
      await a.start;
      clock.advance(LEASE * 10);
      const renewedTo = new Date(clock.now().getTime() + LEASE).toISOString();
      await vi.waitFor(async () => expect((await store.getJob(job.id))!.lease_expires_at).toBe(renewedTo), { timeout: 20_000, interval: 10 });
      a.release(1);
      await a.runner.idle();
      await store.close();
    });
  });
}
