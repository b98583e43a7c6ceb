/**
 * How many questions a search index scores at once: the others wait their turn, first come
 * first served. Its work on the server's thread (the words, the fusion, the feedback) pauses
 * for the other threads (the question's embedding, the vector index's search and products);
 * two questions at a time fill those pauses, while more only share the thread and the caches
 * between them: 8 distinct questions at a time over HTTP were answered 21.3–23.0 a second at a
 * million passages with every question let in, 28.3–34.7 with two (p95 569–598 → 288–352 ms);
 * at 100k 69.4 → 79.4 (bench/README.md, session 16); the same answers.
 */
export interface Admission {
  /** Runs `task` once fewer than the slots are taken; its slot is freed when it settles. */
  run<T>(task: () => Promise<T>): Promise<T>;
  /** Tasks running. */
  readonly running: number;
  /** Tasks waiting for a slot. */
  readonly waiting: number;
}

/** Questions scored at once by default (SEARCH_CONCURRENCY). */
export const DEFAULT_SEARCH_SLOTS = 2;

export function createAdmission(slots: number): Admission {
  if (!Number.isInteger(slots) || slots < 1) throw new Error(`search slots must be a whole number of at least 1, not ${slots}`);
  let running = 0;
  const queue: (() => void)[] = [];
  const leave = () => {
    const next = queue.shift();
    if (next) next();
    else running--;
  };
  return {
    async run(task) {
      if (running < slots) running++;
      else await new Promise<void>((resolve) => queue.push(resolve)); // the slot is handed over as it is freed
      try {
        return await task();
      } finally {
        leave();
      }
    },
    get running() {
      return running;
    },
    get waiting() {
      return queue.length;
    },
  };
}
