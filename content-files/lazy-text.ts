/**
 * Text a build reads once or twice, kept as the file's UTF-8 bytes rather than as strings until
 * it is read. A string of text with one character past Latin-1 (a curly quote) takes two bytes a
 * character in V8's heap: at a million passages the content's text was about 3 GB a copy, and
 * a build held three copies (the file, its passages, the passages as indexed). Bytes live outside
 * the heap, and a string read from them is garbage once used (bench/README.md, issue 44).
 */
import type { BodyText } from '../core/records.ts';

/**
 * `entry` with the file's text (`raw`) and its body, read from the file's bytes when asked. The
 * body is the bytes' tail when it is the text's end (as gray-matter gives it), else kept as
 * given; bytes that are not valid UTF-8 (decoded with replacement characters, so offsets would
 * not match) keep both strings. The entry is not to be spread: a spread reads both.
 */
export function withFileText<T extends object>(entry: T, bytes: Buffer, text: string, body: string): T & { readonly raw: string; readonly body: string } {
  if (Buffer.byteLength(text) !== bytes.length) return Object.assign(entry, { raw: text, body });
  const bodyStart = text.endsWith(body) ? bytes.length - Buffer.byteLength(body) : body;
  return Object.defineProperties(entry, {
    raw: { enumerable: true, get: () => bytes.toString('utf8') },
    body: { enumerable: true, get: () => (typeof bodyStart === 'string' ? bodyStart : bytes.toString('utf8', bodyStart)) },
  }) as T & { readonly raw: string; readonly body: string };
}

/** A work's body text with its passages kept as UTF-8 bytes and their lengths, read back as strings when asked. */
export function packBodyText(derived: BodyText): BodyText {
  const { words } = derived;
  const excerpt = detachStrings(derived.excerpt);
  const joined = derived.passages.join('');
  // A lone surrogate would not survive UTF-8 (nor the lengths): such text stays as it is.
  if (!(joined as string & { isWellFormed(): boolean }).isWellFormed()) return derived; // Node 20 has it; TypeScript's lib here does not
  const lengths = Uint32Array.from(derived.passages, (passage) => passage.length);
  const bytes = Buffer.from(joined);
  return {
    excerpt,
    words,
    get passages() {
      const text = bytes.toString('utf8');
      const passages: string[] = [];
      let at = 0;
      for (const length of lengths) passages.push(text.slice(at, (at += length)));
      return passages;
    },
  };
}

/**
 * `value` with every string in it (in plain objects and arrays, changed in place) copied out of
 * the text it was cut from. V8 keeps a substring of 13 characters or more as a slice that holds
 * its whole source: a YAML parser's title held its whole file, a memo line's excerpt its whole
 * line with every passage (issue 44's heap snapshot).
 */
export function detachStrings<T>(value: T): T {
  if (typeof value === 'string') return (value.length < 13 ? value : Buffer.from(value, 'utf16le').toString('utf16le')) as T;
  if (Array.isArray(value)) {
    for (let index = 0; index < value.length; index++) value[index] = detachStrings(value[index]);
  } else if (value !== null && typeof value === 'object' && Object.getPrototypeOf(value) === Object.prototype) {
    const record = value as Record<string, unknown>;
    for (const key of Object.keys(record)) record[key] = detachStrings(record[key]);
  }
  return value;
}
