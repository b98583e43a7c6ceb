/**
 * An exclusive lock between processes that share a content folder (the server and a curator's
 * CLI, or two servers): a lock file created with O_EXCL, holding its owner's pid and host. A
 * writer waits for it (synchronously: the edits it guards are synchronous file work) up to a
 * deadline; a lock whose owner died on this host is taken over, since no one else would ever
 * remove it.
 */
import { closeSync, openSync, readFileSync, unlinkSync, writeSync } from 'node:fs';
import { hostname } from 'node:os';

export class LockTimeoutError extends Error {}

export interface LockOptions {
  /** How long to wait for another holder before giving up (default 30 s). */
  waitMs?: number;
}

const RETRY_MS = 20;
const pause = new Int32Array(new SharedArrayBuffer(4));

function sleepSync(ms: number): void {
  Atomics.wait(pause, 0, 0, ms);
}

function ownerIsGone(content: string): boolean {
  const [pid, host] = content.split('\n');
  if (host !== hostname() || !pid || !/^\d+$/.test(pid)) return false;
  try {
    process.kill(Number(pid), 0);
    return false;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'ESRCH';
  }
}

function tryAcquire(lockFile: string): boolean {
  try {
    const descriptor = openSync(lockFile, 'wx');
    try {
      writeSync(descriptor, `${process.pid}\n${hostname()}\n${new Date().toISOString()}\n`);
    } finally {
      closeSync(descriptor);
    }
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw error;
  }
}

/** Runs `work` holding the lock file; the lock is released whatever `work` does. */
export function withFileLock<T>(lockFile: string, work: () => T, options: LockOptions = {}): T {
  const deadline = Date.now() + (options.waitMs ?? 30_000);
  while (!tryAcquire(lockFile)) {
    let holder: string;
    try {
      holder = readFileSync(lockFile, 'utf8');
    } catch {
      continue; // released between the two calls: try again at once
    }
    // A holder killed before it wrote its pid leaves an empty file; it is not taken over
    // (its age alone cannot tell a slow writer from a dead one) and times out as any other.
    if (holder !== '' && ownerIsGone(holder)) {
      try {
        if (readFileSync(lockFile, 'utf8') === holder) unlinkSync(lockFile);
      } catch {
        // someone else took it over first
      }
      continue;
    }
    if (Date.now() >= deadline) {
      throw new LockTimeoutError(
        `${lockFile} is held by another writer (${holder.split('\n').slice(0, 2).join(' on ')}); nothing was written. Try again, or remove the file if that process is gone.`,
      );
    }
    sleepSync(RETRY_MS);
  }
  try {
    return work();
  } finally {
    try {
      unlinkSync(lockFile);
    } catch {
      // already gone: nothing to release
    }
  }
}
