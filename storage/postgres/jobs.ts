/** Jobs and their stages on PostgreSQL: a claim is one conditional UPDATE, so exactly one process wins it. */
import type pg from 'pg';
import { CANCELLED, JOB_COLUMNS, toJob, type JobRow, type JobsStore, type JobStage } from '../jobs.ts';
import { asIs, lock, type Transaction } from './db.ts';

export function createPostgresJobs(pool: pg.Pool, transaction: Transaction): JobsStore {
  const read = async (id: string) => {
    const { rows } = await pool.query<JobRow>(`SELECT ${JOB_COLUMNS} FROM jobs WHERE id = $1`, [id]);
    return rows[0] ? toJob(rows[0], asIs) : undefined;
  };
  return {
    async createJob(job, now) {
      const at = now.toISOString();
      const { rows } = await pool.query<JobRow>(
        `INSERT INTO jobs (id, kind, status, input, attempts, created_at, updated_at) VALUES ($1, $2, 'queued', $3, 0, $4, $4) RETURNING ${JOB_COLUMNS}`,
        [job.id, job.kind, JSON.stringify(job.input ?? null), at],
      );
      return toJob(rows[0]!, asIs);
    },
    getJob: read,
    async claimJob(id, now, leaseMs = 0) {
      const { rowCount } = await pool.query(
        "UPDATE jobs SET status = 'running', attempts = attempts + 1, updated_at = $1, lease_expires_at = $2 WHERE id = $3 AND status = 'queued'",
        [now.toISOString(), now.getTime() + leaseMs, id],
      );
      return rowCount === 1;
    },
    async renewJobLease(id, attempt, now, leaseMs) {
      const { rowCount } = await pool.query("UPDATE jobs SET lease_expires_at = $1 WHERE id = $2 AND attempts = $3 AND status = 'running'", [
        now.getTime() + leaseMs,
        id,
        attempt,
      ]);
      return rowCount === 1;
    },
    async finishJob(id, outcome, now) {
      if ('result' in outcome)
        await pool.query("UPDATE jobs SET status = 'done', result = $1, updated_at = $2 WHERE id = $3 AND status = 'running'", [
          JSON.stringify(outcome.result),
          now.toISOString(),
          id,
        ]);
      else
        await pool.query("UPDATE jobs SET status = 'failed', error = $1, updated_at = $2 WHERE id = $3 AND status = 'running'", [
          JSON.stringify(outcome.error),
          now.toISOString(),
          id,
        ]);
    },
    async cancelJob(id, now) {
      await pool.query("UPDATE jobs SET status = 'cancelled', error = $1, updated_at = $2 WHERE id = $3 AND status IN ('queued', 'running')", [
        JSON.stringify(CANCELLED),
        now.toISOString(),
        id,
      ]);
      return read(id);
    },
    async unfinishedJobs() {
      const { rows } = await pool.query<JobRow>(`SELECT ${JOB_COLUMNS} FROM jobs WHERE status IN ('queued', 'running') ORDER BY created_at`);
      return rows.map((row) => toJob(row, asIs));
    },
    async requeueJob(id, now) {
      await pool.query("UPDATE jobs SET status = 'queued', updated_at = $1 WHERE id = $2", [now.toISOString(), id]);
    },
    async addJobStage(jobId, stage) {
      // Stages are text, not JSONB: kept byte for byte, as the voices' answers they carry.
      await transaction(async (client) => {
        await lock(client, `stages:${jobId}`);
        await client.query('INSERT INTO job_stages (job_id, seq, stage) SELECT $1, COALESCE(MAX(seq), 0) + 1, $2 FROM job_stages WHERE job_id = $1', [
          jobId,
          JSON.stringify(stage),
        ]);
      });
    },
    async jobStages(jobId) {
      const { rows } = await pool.query<{ stage: string }>('SELECT stage FROM job_stages WHERE job_id = $1 ORDER BY seq', [jobId]);
      return rows.map((row) => JSON.parse(row.stage) as JobStage);
    },
  };
}
