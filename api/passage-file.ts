/**
 * The passages file (core/search/passages.ts) read in place: its offsets in memory (8 bytes a
 * passage), each passage's text read from the file when asked for. The descriptor stays open
 * for the process's life, as the approximate index's mapping does.
 */
import { fstatSync, openSync, readSync } from 'node:fs';
import { readExactly } from '../content-files/read-large.ts';
import { passagesLayout, type PassageText } from '../core/search/passages.ts';

const ENDED = 'the passages file ended early: rebuild';

export function openPassageFile(file: string): PassageText {
  const fd = openSync(file, 'r');
  const bytes = fstatSync(fd).size;
  const header = Buffer.alloc(16);
  readSync(fd, header, 0, header.length, 0);
  const { count, offsetsAt, textAt } = passagesLayout(header, bytes);
  const offsets = new Float64Array(count + 1);
  readExactly(fd, new Uint8Array(offsets.buffer), offsetsAt, ENDED);
  if (textAt + offsets[count]! !== bytes) throw new Error(`${file} is truncated or corrupt: rebuild`);
  return {
    count,
    text(passage) {
      if (!Number.isInteger(passage) || passage < 0 || passage >= count) throw new RangeError(`no passage ${passage}`);
      const start = offsets[passage]!;
      const out = Buffer.allocUnsafe(offsets[passage + 1]! - start);
      readExactly(fd, out, textAt + start, ENDED);
      return out.toString('utf8');
    },
  };
}
