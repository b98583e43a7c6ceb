/** Jobs and their stages on SQLite. */
import { CANCELLED, JOB_COLUMNS, toJob, type JobRow, type JobsStore, type JobStage } from '../jobs.ts';
import { parseJson, type Database } from './db.ts';

export function createSqliteJobs(db: Database): JobsStore {
  const statements = {
    insert: db.prepare('INSERT INTO jobs (id, kind, status, input, attempts, created_at, updated_at) VALUES (?, ?, ?, ?, 0, ?, ?)'),
    get: db.prepare(`SELECT ${JOB_COLUMNS} FROM jobs WHERE id = ?`),
    claim: db.prepare("UPDATE jobs SET status = 'running', attempts = attempts + 1, updated_at = ?, lease_expires_at = ? WHERE id = ? AND status = 'queued'"),
    renew: db.prepare("UPDATE jobs SET lease_expires_at = ? WHERE id = ? AND attempts = ? AND status = 'running'"),
    finish: db.prepare("UPDATE jobs SET status = ?, result = ?, error = ?, updated_at = ? WHERE id = ? AND status = 'running'"),
    cancel: db.prepare("UPDATE jobs SET status = 'cancelled', error = ?, updated_at = ? WHERE id = ? AND status IN ('queued', 'running')"),
    unfinished: db.prepare(`SELECT ${JOB_COLUMNS} FROM jobs WHERE status IN ('queued', 'running') ORDER BY created_at`),
    requeue: db.prepare("UPDATE jobs SET status = 'queued', updated_at = ? WHERE id = ?"),
    addStage: db.prepare('INSERT INTO job_stages (job_id, seq, stage) SELECT ?, COALESCE(MAX(seq), 0) + 1, ? FROM job_stages WHERE job_id = ?'),
    stages: db.prepare('SELECT stage FROM job_stages WHERE job_id = ? ORDER BY seq'),
  };
  const read = (id: string) => {
    const row = statements.get.get(id) as JobRow | undefined;
    return row ? toJob(row, parseJson) : undefined;
  };
  return {
    async createJob(job, now) {
      const at = now.toISOString();
      statements.insert.run(job.id, job.kind, 'queued', JSON.stringify(job.input ?? null), at, at);
      return read(job.id)!;
    },
    getJob: async (id) => read(id),
    async claimJob(id, now, leaseMs = 0) {
      return statements.claim.run(now.toISOString(), now.getTime() + leaseMs, id).changes === 1;
    },
    async renewJobLease(id, attempt, now, leaseMs) {
      return statements.renew.run(now.getTime() + leaseMs, id, attempt).changes === 1;
    },
    async finishJob(id, outcome, now) {
      if ('result' in outcome) statements.finish.run('done', JSON.stringify(outcome.result), null, now.toISOString(), id);
      else statements.finish.run('failed', null, JSON.stringify(outcome.error), now.toISOString(), id);
    },
    async cancelJob(id, now) {
      statements.cancel.run(JSON.stringify(CANCELLED), now.toISOString(), id);
      return read(id);
    },
    async unfinishedJobs() {
      return (statements.unfinished.all() as JobRow[]).map((row) => toJob(row, parseJson));
    },
    async requeueJob(id, now) {
      statements.requeue.run(now.toISOString(), id);
    },
    async addJobStage(jobId, stage) {
      statements.addStage.run(jobId, JSON.stringify(stage), jobId);
    },
    async jobStages(jobId) {
      return (statements.stages.all(jobId) as { stage: string }[]).map((row) => JSON.parse(row.stage) as JobStage);
    },
  };
}
