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
    for (let read = 0; read < size;) {
      const got = readSync(fd, bytes, read, Math.min(BLOCK, size - read), read);
      if (got === 0) return bytes.subarray(0, read); // the file shrank while read
      read += got;
    }
    return bytes;
  } finally {
    closeSync(fd);
  }
}
