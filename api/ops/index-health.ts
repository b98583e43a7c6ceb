/** Readiness while the vector index's worker thread is down (api/server.ts, providers/vector-index-worker.ts). */
import type { Readiness } from './readiness.ts';

/**
 * A failure of the vector index's worker thread while serving: searches take the exact scan
 * (slower) until a new thread has opened the index, so the process says it is not ready
 * meanwhile; told before readiness exists, it is marked once readiness is attached.
 */
export function createIndexHealth(log: (message: string) => void, logError: (message: string) => void) {
  let failure: Error | undefined;
  let readiness: Pick<Readiness, 'mark'> | undefined;
  const mark = () => {
    if (!readiness) return;
    if (!failure) return readiness.mark('artifacts', undefined);
    readiness.mark(
      'artifacts',
      `the vector index's worker thread failed (${failure.message}); a new one is being started (if this lasts, the index file changed or cannot be opened: restart the process)`,
    );
  };
  return {
    failed: (error: Error) => {
      failure = error;
      logError(`${error.message}: searches take the exact scan (slower) until a new thread has opened the vector index`);
      mark();
    },
    recovered: () => {
      failure = undefined;
      log("the vector index's worker thread was replaced: searches take the approximate index again");
      mark();
    },
    attach(target: Pick<Readiness, 'mark'>) {
      readiness = target;
      if (failure) mark();
    },
  };
}
