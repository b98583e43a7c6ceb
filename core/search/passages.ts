/**
 * The passages' text as the build indexed it (data/search/passages.bin), read one passage at a
 * time where the search needs a passage's words (pseudo-relevance feedback), so a large corpus's
 * text stays on disk and out of the server's memory.
 *
 * The file: "PPSG\0\0\0\1", a little-endian u32 passage count n, n + 1 float64 offsets into the
 * text that follows (passage p is bytes [offsets[p], offsets[p + 1]) of it, UTF-8), then the text.
 * Float64 offsets are exact up to 2^53 bytes, so the file has no 4 GB limit.
 */
export const PASSAGES_MAGIC = 'PPSG\0\0\0\u0001';
const HEADER_BYTES = 12;

/** Reads passages by number; where they come from (a file read in place, bytes in memory) is the reader's. */
export interface PassageText {
  readonly count: number;
  text(passage: number): string;
}

export function encodePassages(texts: readonly string[]): Uint8Array {
  let chars = 0;
  for (const text of texts) chars += text.length;
  const writer = createPassagesWriter(texts.length, chars);
  for (const text of texts) writer.add(text);
  return writer.finish();
}

/**
 * The passages file written a passage at a time, for `count` passages (so the build never holds
 * them all as strings: bench/README.md, issue 44). Encoded in place, into a buffer sized by
 * `bytesHint` (one byte a character is a good guess) and grown when the text needs more: a million
 * passages are not a million arrays first (issue 30).
 */
export function createPassagesWriter(count: number, bytesHint: number): { add(text: string): void; finish(): Uint8Array } {
  const encoder = new TextEncoder();
  const offsetsAt = HEADER_BYTES + 4; // offsets aligned to 8 from the file's start
  const textAt = offsetsAt + (count + 1) * 8;
  let out = new Uint8Array(textAt + bytesHint + 1024);
  const offsets = new Float64Array(count + 1);
  let at = 0;
  let added = 0;
  return {
    add(text) {
      if (added >= count) throw new RangeError(`more than the ${count} passages the writer was made for`);
      offsets[added++] = at;
      for (let read = 0; ;) {
        const done = encoder.encodeInto(read === 0 ? text : text.slice(read), out.subarray(textAt + at));
        at += done.written;
        read += done.read;
        if (read >= text.length) break;
        const grown = new Uint8Array(Math.ceil(out.length * 1.5));
        grown.set(out.subarray(0, textAt + at));
        out = grown;
      }
    },
    finish() {
      if (added !== count) throw new RangeError(`${added} passages written of the ${count} the writer was made for`);
      offsets[count] = at;
      const view = new DataView(out.buffer);
      out.set(encoder.encode(PASSAGES_MAGIC), 0);
      view.setUint32(8, count, true);
      offsets.forEach((offset, passage) => view.setFloat64(offsetsAt + passage * 8, offset, true));
      return out.subarray(0, textAt + at);
    },
  };
}

/** Where the header says the offsets and the text are; throws on a file that is not one. */
export function passagesLayout(header: Uint8Array, fileBytes: number): { count: number; offsetsAt: number; textAt: number } {
  const magic = new TextDecoder().decode(header.subarray(0, 8));
  if (header.length < HEADER_BYTES || magic !== PASSAGES_MAGIC) throw new Error('the passages file is not in the current format: rebuild');
  const count = new DataView(header.buffer, header.byteOffset, header.byteLength).getUint32(8, true);
  const offsetsAt = HEADER_BYTES + 4;
  const textAt = offsetsAt + (count + 1) * 8;
  if (textAt > fileBytes) throw new Error('the passages file is truncated: rebuild');
  return { count, offsetsAt, textAt };
}

/** Passages from the whole file's bytes in memory (tests, small corpora). */
export function passagesFromBytes(bytes: Uint8Array): PassageText {
  const { count, offsetsAt, textAt } = passagesLayout(bytes, bytes.length);
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const decoder = new TextDecoder();
  return {
    count,
    text(passage) {
      if (!Number.isInteger(passage) || passage < 0 || passage >= count) throw new RangeError(`no passage ${passage}`);
      const start = view.getFloat64(offsetsAt + passage * 8, true);
      const end = view.getFloat64(offsetsAt + passage * 8 + 8, true);
      return decoder.decode(bytes.subarray(textAt + start, textAt + end));
    },
  };
}
