/**
 * A whole file into one buffer, read in blocks: `readFileSync` refuses files past 2 GiB, which a
 * build's own caches and indexes reach at a few million passages (a buffer holds up to 4 GiB).
 */
import { closeSync, fstatSync, openSync, readSync } from 'node:fs';

const BLOCK = 1 << 28;

export function readLargeFile(file: string): Buffer {
  const fd = openSync(file, 'r');
  try {
    const size = fstatSync(fd).size;
    const bytes = Buffer.allocUnsafe(size);
    const read = readAt(fd, bytes, 0);
    return read < size ? bytes.subarray(0, read) : bytes; // the file shrank while read
  } finally {
    closeSync(fd);
  }
}

/** Fills `target` from `position` on, in blocks; throws `ended` where the file ends first. */
export function readExactly(fd: number, target: Uint8Array, position: number, ended: string): void {
  if (readAt(fd, target, position) < target.length) throw new Error(ended);
}

/** Fills `target` from `position` on, in blocks, stopping early where the file ends: the bytes read. */
export function readAt(fd: number, target: Uint8Array, position: number): number {
  let read = 0;
  while (read < target.length) {
    const got = readSync(fd, target, read, Math.min(BLOCK, target.length - read), position + read);
    if (got === 0) break;
    read += got;
  }
  return read;
}
