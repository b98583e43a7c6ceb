/**
 * The build's content memo (content-files/content-memo.ts) and its embedding cache
 * (scripts/lib/embedding-cache.ts): what they give back is what parsing, deriving and
 * embedding give, a file whose bytes changed is read again, and a damaged file costs only the
 * entries it lost.
 */
import { createHash } from 'node:crypto';
import { appendFileSync, closeSync, openSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { BODY_TEXT_VERSION, bodyText } from '../core/records.ts';
import { CONTENT_MEMO_FILE, openContentMemo } from '../content-files/content-memo.ts';
import { parseMarkdown } from '../content-files/frontmatter.ts';
import { readExactly, readLargeFile } from '../content-files/read-large.ts';
import { tempDir } from '../devkit/app.ts';
import { createHashedEmbedder } from '../devkit/hashed-embedder.ts';
import { createEmbeddingCache } from '../scripts/lib/embedding-cache.ts';

const work = (n: number, extra = '') =>
  `---\nid: PLY-${n}\ntitle: "Tides, ${n}"\ncontributors: [Ada]\n${extra}---\n\n# On tides ${n}\n\nThe moon pulls the sea. **Twice** a day the water rises; then it falls again.\n${'Another sentence about harbours. '.repeat(n)}\n`;

function reopen(dir: string) {
  return openContentMemo(path.join(dir, CONTENT_MEMO_FILE));
}

describe('the content memo', () => {
  it('gives what parsing and deriving give, from the second build on', () => {
    const dir = tempDir('memo');
    const texts = [work(1), work(40), work(300)];
    const first = reopen(dir);
    const made = texts.map((text) => first.read(text, parseMarkdown, true));
    expect(first.stats).toEqual({ reused: 0, made: 3 });
    first.save();

    const second = reopen(dir);
    texts.forEach((text, at) => {
      const parsed = parseMarkdown(text);
      const read = second.read(text, parseMarkdown, true);
      expect(read).toEqual({ ...parsed, bodyText: bodyText(parsed.body) });
      expect(read).toEqual(made[at]);
    });
    expect(second.stats).toEqual({ reused: 3, made: 0 });
    // Each read owns its data: changing one does not change the next.
    const once = second.read(texts[0]!, parseMarkdown, true);
    (once.data as { title: string }).title = 'changed';
    expect(second.read(texts[0]!, parseMarkdown, true).data).toMatchObject({ title: 'Tides, 1' });
  });

  it('reads a file again when one byte changed, and drops what no build uses once it outnumbers what is used', () => {
    const dir = tempDir('memo-changed');
    const memo = reopen(dir);
    memo.read(work(2), parseMarkdown, true);
    memo.read(work(3), parseMarkdown, true);
    memo.save();
    const next = reopen(dir);
    const edited = work(2).replace('twice', 'Twice').replace('falls', 'drops');
    expect(next.read(edited, parseMarkdown, true).bodyText!.passages.join(' ')).toContain('drops');
    expect(next.read(work(3), parseMarkdown, true).data).toMatchObject({ id: 'PLY-3' });
    expect(next.stats).toEqual({ reused: 1, made: 1 });
    next.save();
    // One entry no longer used against two in use: appended to, the old one still there.
    const lines = () => readFileSync(path.join(dir, CONTENT_MEMO_FILE), 'utf8').trimEnd().split('\n').length - 1;
    expect(lines()).toBe(3);
    // work 3 edited twice more: the unused entries (work 2's first text, work 3's) outnumber those in use.
    for (const after of [work(3).replace('falls', 'ebbs'), work(3).replace('falls', 'sinks')]) {
      const build = reopen(dir);
      build.read(edited, parseMarkdown, true);
      expect(build.read(after, parseMarkdown, true).data).toMatchObject({ id: 'PLY-3' });
      expect(build.stats).toEqual({ reused: 1, made: 1 });
      build.save();
    }
    expect(lines()).toBe(2);
    const last = reopen(dir);
    last.read(work(2), parseMarkdown, true);
    last.read(edited, parseMarkdown, true);
    last.read(work(3).replace('falls', 'sinks'), parseMarkdown, true);
    expect(last.stats).toEqual({ reused: 2, made: 1 });
  });

  it('derives the body text when a file first read without it is a work now', () => {
    const dir = tempDir('memo-kinds');
    const memo = reopen(dir);
    expect(memo.read(work(5), parseMarkdown, false).bodyText).toBeUndefined();
    memo.save();
    const next = reopen(dir);
    expect(next.read(work(5), parseMarkdown, true).bodyText).toEqual(bodyText(parseMarkdown(work(5)).body));
  });

  it('does not keep front matter that JSON would change (.inf, .nan)', () => {
    const dir = tempDir('memo-inf');
    const text = work(6, 'weight: .inf\nratio: .nan\n');
    const memo = reopen(dir);
    expect(memo.read(text, parseMarkdown, true).data).toMatchObject({ weight: Number.POSITIVE_INFINITY });
    memo.save();
    const next = reopen(dir);
    const again = next.read(text, parseMarkdown, true);
    expect(again.data).toMatchObject({ weight: Number.POSITIVE_INFINITY });
    expect(Number.isNaN((again.data as { ratio: number }).ratio)).toBe(true);
    expect(next.stats).toEqual({ reused: 0, made: 1 });
  });

  it('keeps a body that is not the end of the text as the body itself', () => {
    const dir = tempDir('memo-body');
    const text = work(7);
    const parse = (source: string) => ({ ...parseMarkdown(source), body: 'A body of its own.' });
    const memo = reopen(dir);
    memo.read(text, parse, true);
    memo.save();
    expect(reopen(dir).read(text, parseMarkdown, true)).toMatchObject({ body: 'A body of its own.', bodyText: { passages: ['A body of its own.'] } });
  });

  it('starts empty over another format or another parser, and loses only a torn last entry', () => {
    const dir = tempDir('memo-damaged');
    const memo = reopen(dir);
    for (const n of [8, 9, 10]) memo.read(work(n), parseMarkdown, true);
    memo.save();
    const file = path.join(dir, CONTENT_MEMO_FILE);
    const whole = readFileSync(file, 'utf8');
    // The last entry cut in the middle (a disk that filled up).
    writeFileSync(file, whole.slice(0, whole.length - 40));
    const torn = reopen(dir);
    for (const n of [8, 9, 10]) torn.read(work(n), parseMarkdown, true);
    expect(torn.stats).toEqual({ reused: 2, made: 1 });
    // Another header (another YAML parser version, another format): nothing reused.
    writeFileSync(file, whole.replace(/yaml@[^ "]+/, 'yaml@0.0.1'));
    const other = reopen(dir);
    other.read(work(8), parseMarkdown, true);
    expect(other.stats).toEqual({ reused: 0, made: 1 });
  });
});

describe('the body text the memo keeps', () => {
  it('is what BODY_TEXT_VERSION 1 gave: a change to plainText, shorten, countWords or chunkText must bump it', () => {
    const body = `# Tides\n\nThe moon pulls the *sea*. [Twice](https://example.org) a day the water rises; then it falls!\n\n\`\`\`\ncode\n\`\`\`\n\n${'A keeper logs the harbour lights each night. '.repeat(60)}\nDoes it end? Yes.`;
    const derived = bodyText(body);
    expect(derived.words).toBe(499);
    expect(derived.passages.map((passage) => passage.length)).toEqual([928, 944, 917]);
    // The whole derivation, hashed: a memo written by this version is read back only while this holds.
    expect({ version: BODY_TEXT_VERSION, hash: createHash('sha256').update(JSON.stringify(derived)).digest('hex') }).toEqual({
      version: 1,
      hash: '8b1c295ce45afbffc76c3f465f85613fa37c9979dae67464066b07c9199f4261',
    });
  });
});

describe('the embedding cache', () => {
  it('gives the vectors it was given for the keys asked for, from a cache that holds others, and cuts a torn last entry before appending', async () => {
    const dir = tempDir('embedding-cache');
    const embedder = createHashedEmbedder();
    const texts = Array.from({ length: 40 }, (_, n) => `passage number ${n} about tides`);
    const cache = createEmbeddingCache(dir, embedder);
    const first = await cache.embedAll(texts);
    expect(first).toMatchObject({ embedded: 40, cached: 0 });
    const expected = await embedder.embed(texts);
    expect(first.vectors).toEqual(expected);

    const some = [texts[3]!, texts[39]!, texts[3]!];
    const again = await createEmbeddingCache(dir, embedder).embedAll(some);
    expect(again).toMatchObject({ embedded: 0, cached: 3 });
    expect(again.vectors).toEqual([expected[3], expected[39], expected[3]]);

    // A build stopped mid-write: half an entry at the end.
    appendFileSync(cache.file, Buffer.alloc(100, 7));
    const more = [...texts.slice(0, 2), 'a new passage about harbours'];
    const after = await createEmbeddingCache(dir, embedder).embedAll(more);
    expect(after).toMatchObject({ embedded: 1, cached: 2 });
    const entryBytes = 32 + embedder.dims * 4;
    expect(statSync(cache.file).size).toBe(41 * entryBytes);
    const reread = await createEmbeddingCache(dir, embedder).embedAll(more);
    expect(reread).toMatchObject({ embedded: 0, cached: 3 });
    expect(reread.vectors).toEqual(await embedder.embed(more));
  });
});

describe('reading a large file', () => {
  it('gives the bytes readFileSync gives, read in blocks', () => {
    const file = path.join(tempDir('read-large'), 'bytes.bin');
    const bytes = Buffer.from(Array.from({ length: 300_000 }, (_, at) => (at * 7919) % 251));
    writeFileSync(file, bytes);
    expect(readLargeFile(file).equals(readFileSync(file))).toBe(true);
    writeFileSync(file, '');
    expect(readLargeFile(file).length).toBe(0);
  });

  it('fills a range exactly, or says the file ended first', () => {
    const file = path.join(tempDir('read-exactly'), 'bytes.bin');
    const bytes = Buffer.from(Array.from({ length: 5_000 }, (_, at) => (at * 31) % 253));
    writeFileSync(file, bytes);
    const fd = openSync(file, 'r');
    try {
      const part = new Uint8Array(1_000);
      readExactly(fd, part, 1_200, 'ended');
      expect(Buffer.from(part).equals(bytes.subarray(1_200, 2_200))).toBe(true);
      expect(() => readExactly(fd, new Uint8Array(1_000), 4_500, 'the file ended early')).toThrow('the file ended early');
    } finally {
      closeSync(fd);
    }
  });
});
