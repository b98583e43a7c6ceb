/**
 * Embedded store on SQLite: the concerns of storage/sqlite/ over one connection (WAL with
 * synchronous=FULL: an acknowledged write survives kill -9), the schema brought to the newest
 * migration at open.
 */
import type { Store } from './store.ts';
import { refusingIllFormedText } from './text-check.ts';
import { createSqliteContributions } from './sqlite/contributions.ts';
import { openDatabase, reportingBusy } from './sqlite/db.ts';
import { createSqliteFederation } from './sqlite/federation.ts';
import { createSqliteIdempotency } from './sqlite/idempotency.ts';
import { createSqliteJobs } from './sqlite/jobs.ts';
import { createSqliteLimits } from './sqlite/limits.ts';
import { createSqliteRecords } from './sqlite/records.ts';
import { createSqliteSecrets } from './sqlite/secrets.ts';
import { createSqliteSessions } from './sqlite/sessions.ts';
import { createSqliteSightings } from './sqlite/sightings.ts';
import { createSqliteSpend } from './sqlite/spend.ts';

/** `file` is a path, or ':memory:' for a store that lives as long as the process. */
export function createSqliteStore(file: string): Store {
  const { db, transaction } = openDatabase(file);
  return reportingBusy(
    refusingIllFormedText({
      ...createSqliteJobs(db),
      ...createSqliteContributions(db, transaction),
      ...createSqliteSessions(db),
      ...createSqliteLimits(db, transaction),
      ...createSqliteSpend(db, transaction),
      ...createSqliteRecords(db),
      ...createSqliteIdempotency(db, transaction),
      ...createSqliteFederation(db, transaction),
      ...createSqliteSightings(db, transaction),
      ...createSqliteSecrets(db),
      async close() {
        db.close();
      },
    }),
  );
}
