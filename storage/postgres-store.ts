/**
 * Scale-out store on PostgreSQL: the concerns of storage/postgres/ over one pool, so several
 * API processes share jobs, sessions, spend, persisted records, pending contributions and
 * rate-limit counters. Atomic steps use single statements or transactions with advisory
 * locks; every acknowledged write is committed first. While the database is down or
 * restarting, every method rejects with StoreUnavailableError (the API answers 503
 * STORE_UNAVAILABLE) and the pool reconnects once it is back. This module loads `pg`: it is
 * imported only when a PostgreSQL store is opened (storage/open-store.ts).
 */
import type { Store } from './store.ts';
import { refusingIllFormedText } from './text-check.ts';
import { createPostgresContributions } from './postgres/contributions.ts';
import { openPool, reportingOutages } from './postgres/db.ts';
import { createPostgresFederation } from './postgres/federation.ts';
import { createPostgresIdempotency } from './postgres/idempotency.ts';
import { createPostgresJobs } from './postgres/jobs.ts';
import { createPostgresLimits } from './postgres/limits.ts';
import { createPostgresRecords } from './postgres/records.ts';
import { createPostgresSecrets } from './postgres/secrets.ts';
import { createPostgresSessions } from './postgres/sessions.ts';
import { createPostgresSightings } from './postgres/sightings.ts';
import { createPostgresSpend } from './postgres/spend.ts';

export { isUnavailable } from './postgres/db.ts';

export async function createPostgresStore(connectionString: string, options: { max?: number } = {}): Promise<Store> {
  const { pool, transaction } = await openPool(connectionString, options);
  return reportingOutages(
    refusingIllFormedText({
      ...createPostgresJobs(pool, transaction),
      ...createPostgresContributions(pool, transaction),
      ...createPostgresSessions(pool, transaction),
      ...createPostgresLimits(pool),
      ...createPostgresSpend(pool, transaction),
      ...createPostgresRecords(pool),
      ...createPostgresIdempotency(pool, transaction),
      ...createPostgresFederation(pool, transaction),
      ...createPostgresSightings(pool, transaction),
      ...createPostgresSecrets(pool),
      async close() {
        await pool.end();
      },
    }),
  );
}
