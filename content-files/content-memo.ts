/**
 * What a build keeps of each content file from one build to the next, keyed by the file's bytes:
 * its front matter as parsed (before validation, which always runs) and, for works, what its
 * body gives (records.ts's bodyText). At 250,000 works, parsing the YAML and deriving the text
 * again were most of an incremental build (bench/README.md, issue 30); a file whose bytes did not
 * change is neither parsed nor derived again.
 *
 * One JSON-lines file: a header naming the format and what the entries depend on (the memo's
 * own format, the body-text derivation's version, the YAML and front-matter parsers'
 * versions), then one entry per file. A header that differs, or a file that cannot be read,
 * starts an empty memo; a torn or unreadable entry is skipped. Saving appends the entries this
 * build made; once the entries no build uses any more outnumber those in use, it writes the
 * file again with those in use only, to a temporary file renamed into place.
 */
import { createHash } from 'node:crypto';
import { closeSync, existsSync, mkdirSync, openSync, renameSync, writeSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { BODY_TEXT_VERSION, bodyText, type BodyText } from '../core/records.ts';
import type { ParsedMarkdown } from './frontmatter.ts';
import { readLargeFile } from './read-large.ts';

export const CONTENT_MEMO_FORMAT = 'polyphony-content-memo@1';
/** The memo's file in a build's cache folder. */
export const CONTENT_MEMO_FILE = 'content-memo.jsonl';

export interface ContentMemo {
  /**
   * A markdown file's front matter and body as `parse` gives them and, with `withBodyText` (a
   * work), what its body gives: from the memo when the file's text is known.
   */
  read(text: string, parse: (text: string) => ParsedMarkdown, withBodyText: boolean): ParsedMarkdown & { bodyText?: BodyText };
  /** Files taken from the memo and files parsed this build. */
  readonly stats: { reused: number; made: number };
  /** Writes the entries this build made (and drops those no build uses any more, when they pile up); the memo is read-only after it. */
  save(): void;
}

interface Entry {
  /** The front matter as parsed. */
  d: Record<string, unknown>;
  /** Where the body starts in the text, or the body itself when it is not the text's end. */
  b: number | string;
  /** bodyText(body), for works. */
  t?: BodyText;
}

function dependencies(): string {
  const require = createRequire(import.meta.url);
  const version = (name: string) => (require(`${name}/package.json`) as { version: string }).version;
  return `body-text@${BODY_TEXT_VERSION} yaml@${version('yaml')} gray-matter@${version('gray-matter')}`;
}

/** Whether JSON keeps `value` as it is: finite numbers, plain objects and arrays, strings, booleans, null. */
function survivesJson(value: unknown): boolean {
  if (value === null || typeof value === 'string' || typeof value === 'boolean') return true;
  if (typeof value === 'number') return Number.isFinite(value) && !Object.is(value, -0);
  if (Array.isArray(value)) return value.every(survivesJson);
  if (typeof value === 'object' && Object.getPrototypeOf(value) === Object.prototype) {
    return Object.entries(value as object).every(([key, inner]) => key !== '__proto__' && survivesJson(inner));
  }
  return false;
}

function parseEntry(line: string): Entry | undefined {
  try {
    return JSON.parse(line) as Entry;
  } catch {
    return undefined;
  }
}

function keyOf(text: string): string {
  return createHash('sha256').update(text).digest('base64');
}

/** A line's key: the 44 characters of a base64 sha256, then a tab. */
const KEY_CHARS = 44;

export function openContentMemo(file: string): ContentMemo {
  const header = JSON.stringify({ format: CONTENT_MEMO_FORMAT, depends_on: dependencies() });
  // The file's bytes and where each entry's line is in them: an entry is decoded when its file is
  // read, so a million passages' worth of text is not held as strings (bench/README.md, issue 30).
  let bytes: Buffer | undefined;
  const known = new Map<string, { start: number; end: number }>();
  let appendable = false;
  if (existsSync(file)) {
    try {
      bytes = readLargeFile(file);
      let end = bytes.indexOf(10);
      if (end > 0 && bytes.toString('utf8', 0, end) === header) {
        for (let start = end + 1; start < bytes.length; start = end + 1) {
          end = bytes.indexOf(10, start);
          if (end < 0) break; // a torn last line: that file is parsed again
          if (end > start + KEY_CHARS && bytes[start + KEY_CHARS] === 9) known.set(bytes.toString('latin1', start, start + KEY_CHARS), { start, end });
        }
        appendable = bytes[bytes.length - 1] === 10;
      }
    } catch {
      known.clear();
    }
  }
  // Lines of the entries this build took from the file, and the lines of those it made, as UTF-8
  // bytes: outside the heap, where a million passages' text as strings would not fit (lazy-text.ts).
  const kept: { start: number; end: number }[] = [];
  const made: Buffer[] = [];
  const stats = { reused: 0, made: 0 };

  const lineOf = (key: string, data: string, entry: Omit<Entry, 'd'>) => Buffer.from(`${key}\t{"d":${data},${JSON.stringify(entry).slice(1)}\n`);

  return {
    stats,
    read(text, parse, withBodyText) {
      const key = keyOf(text);
      const at = known.get(key);
      const entry = at && bytes ? parseEntry(bytes.toString('utf8', at.start + KEY_CHARS + 1, at.end)) : undefined;
      if (at && entry && (entry.t || !withBodyText)) {
        known.delete(key);
        kept.push(at);
        stats.reused++;
        const body = typeof entry.b === 'number' ? text.slice(entry.b) : entry.b;
        return { data: entry.d, body, ...(entry.t ? { bodyText: entry.t } : {}) };
      }
      const parsed = parse(text);
      stats.made++;
      const derived = withBodyText ? bodyText(parsed.body) : undefined;
      if (survivesJson(parsed.data)) {
        // The front matter serialised now (the caller owns the object); the body text is only read.
        const body = text.endsWith(parsed.body) ? text.length - parsed.body.length : parsed.body;
        made.push(lineOf(key, JSON.stringify(parsed.data), { b: body, ...(derived ? { t: derived } : {}) }));
      }
      return derived ? { ...parsed, bodyText: derived } : parsed;
    },
    save() {
      mkdirSync(path.dirname(file), { recursive: true });
      // Appended to while the entries no build used any more are at most as many as those in use;
      // past that, written again with the entries in use only (the memo never grows far past the content).
      if (appendable && bytes && known.size <= kept.length + made.length) {
        const fd = openSync(file, 'a');
        try {
          writeLines(fd, made);
        } finally {
          closeSync(fd);
        }
      } else {
        const temporary = `${file}.${process.pid}.tmp`;
        const fd = openSync(temporary, 'w');
        try {
          writeLines(fd, [Buffer.from(`${header}\n`)]);
          for (const { start, end } of kept) for (let at = start; at <= end;) at += writeSync(fd, bytes!, at, end + 1 - at);
          writeLines(fd, made);
        } finally {
          closeSync(fd);
        }
        renameSync(temporary, file);
      }
      bytes = undefined;
      known.clear();
      kept.length = 0;
      made.length = 0;
    },
  };
}

/** Lines in batches, each batch written whole (a short write continued): another build appending at once never splits a line of ours. */
function writeLines(fd: number, lines: readonly Buffer[]): void {
  for (let at = 0; at < lines.length; at += 1000) {
    const bytes = Buffer.concat(lines.slice(at, at + 1000));
    for (let written = 0; written < bytes.length;) written += writeSync(fd, bytes, written, bytes.length - written);
  }
}
