/**
 * Text the build keeps as bytes until read (content-files/lazy-text.ts), the passages file
 * written a passage at a time (core/search/passages.ts) and the embedding cache over a list that
 * reads each text when asked: each gives exactly what the strings gave.
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { bodyText } from '../core/records.ts';
import { detachStrings, packBodyText, withFileText } from '../content-files/lazy-text.ts';
import { parseMarkdown } from '../content-files/frontmatter.ts';
import { loadContent } from '../content-files/load-content.ts';
import { openContentMemo } from '../content-files/content-memo.ts';
import { createPassagesWriter, encodePassages, passagesFromBytes } from '../core/search/passages.ts';
import { tempDir } from '../devkit/app.ts';
import { createHashedEmbedder } from '../devkit/hashed-embedder.ts';
import { createEmbeddingCache } from '../scripts/lib/embedding-cache.ts';
import { writeFixtureContent } from '../devkit/fixture-content.ts';

const file = `---\nid: PLY-1\ntitle: “Tides”, an essay on the sea’s 🌊 pull\n---\n\n# On tides\n\nThe moon pulls the sea — twice a day 🌙. ${'Harbours fill “at dusk”. '.repeat(300)}\n`;

describe('text kept as bytes until read', () => {
  it("gives the file's text and its body as the strings were", () => {
    const bytes = Buffer.from(file);
    const parsed = parseMarkdown(file);
    const entry = withFileText({ file: 'works/a.md' }, bytes, file, parsed.body);
    expect(entry.raw).toBe(file);
    expect(entry.body).toBe(parsed.body);
    expect(Object.keys(entry)).toEqual(['file', 'raw', 'body']);
    // A body that is not the text's end is kept as given.
    expect(withFileText({}, bytes, file, 'elsewhere').body).toBe('elsewhere');
    // A byte-order mark and CRLF line ends: the text and its body as parsing gives them.
    const windows = `\ufeff${file.replaceAll('\n', '\r\n')}`;
    const fromWindows = withFileText({}, Buffer.from(windows), windows, parseMarkdown(windows).body);
    expect(fromWindows.raw).toBe(windows);
    expect(fromWindows.body).toBe(parseMarkdown(windows).body);
  });

  it('keeps the strings when the bytes are not UTF-8 (offsets in the decoded text would not match)', () => {
    const bytes = Buffer.concat([Buffer.from('---\nid: x\n---\n\n'), Buffer.from([0xff, 0xfe]), Buffer.from(' body ü')]);
    const text = bytes.toString('utf8');
    const body = text.slice(text.indexOf('\n\n') + 2);
    const entry = withFileText({}, bytes, text, body);
    expect(entry.raw).toBe(text);
    expect(entry.body).toBe(body);
  });

  it("gives a work's passages back, astral characters included; text a lone surrogate would spoil stays as it was", () => {
    const derived = bodyText(parseMarkdown(file).body);
    expect(derived.passages.length).toBeGreaterThan(1);
    const packed = packBodyText(derived);
    expect(packed).toEqual(derived);
    expect(packed.passages).toEqual(derived.passages);
    const lone = { excerpt: 'x', words: 1, passages: ['a\ud800b', 'c'] };
    expect(packBodyText(lone)).toBe(lone);
  });

  it('copies strings out of their source in place, leaving what is not a plain object or array', () => {
    const source = `${'a'.repeat(20)}|${'ü'.repeat(20)}`;
    const date = new Date(0);
    const value = { title: source.slice(0, 20), nested: [{ name: source.slice(21) }, 3, null], date, short: source.slice(0, 2) };
    const same = detachStrings(value);
    expect(same).toBe(value);
    expect(value).toEqual({ title: 'a'.repeat(20), nested: [{ name: 'ü'.repeat(20) }, 3, null], date, short: 'aa' });
    expect(value.date).toBe(date);
  });

  it('loads works whose text, body and passages are what parsing gives, through the memo and without it', () => {
    const dir = writeFixtureContent();
    writeFileSync(
      path.join(dir, 'works', 'TST-9001.md'),
      file
        .replace('PLY-1', 'TST-9001')
        .replace('---\n\n', 'ring: curated\ntype: essay\nlayer: research\nevidence: uncharacterized\ncontributors: [Ada]\ndate: 2024-01-01\n---\n\n'),
    );
    const plain = loadContent(dir);
    const memo = openContentMemo(path.join(tempDir('lazy-memo'), 'memo.jsonl'));
    const viaMemo = loadContent(dir, { memo });
    memo.save();
    expect(plain.works.length).toBeGreaterThan(0);
    for (const loaded of [plain, viaMemo]) {
      for (const entry of loaded.works) {
        const text = Buffer.from(loaded.files.find((source) => source.file === entry.file)!.bytes).toString('utf8');
        const parsed = parseMarkdown(text);
        expect(entry.raw).toBe(text);
        expect(entry.body).toBe(parsed.body);
        expect(entry.data.title).toBe(parsed.data.title);
        if (entry.bodyText) expect(entry.bodyText).toEqual(bodyText(parsed.body));
      }
    }
    expect(viaMemo.works.every((entry) => entry.bodyText)).toBe(true);
  });
});

describe('the passages file written a passage at a time', () => {
  const texts = ['', 'plain', '“curly” and 🌊 astral', 'x'.repeat(5000), 'ü'.repeat(3000)];

  it('writes what encodePassages writes, growing past a hint too small', () => {
    const writer = createPassagesWriter(texts.length, 0);
    for (const text of texts) writer.add(text);
    const bytes = writer.finish();
    expect(Buffer.from(bytes).equals(Buffer.from(encodePassages(texts)))).toBe(true);
    const read = passagesFromBytes(bytes);
    expect(texts.map((_, at) => read.text(at))).toEqual(texts);
  });

  it('refuses more passages than it was made for, and a file with fewer', () => {
    const writer = createPassagesWriter(1, 10);
    writer.add('one');
    expect(() => writer.add('two')).toThrow(/more than the 1 passages/);
    expect(() => createPassagesWriter(2, 10).finish()).toThrow(/0 passages written of the 2/);
  });
});

describe('the embedding cache over texts read when asked', () => {
  it('gives the vectors an array of the same texts gives, asking for each text at most twice', async () => {
    const texts = Array.from({ length: 40 }, (_, at) => `passage ${at % 30} about “tides” 🌊`);
    const embedder = createHashedEmbedder();
    const fromArray = await createEmbeddingCache(tempDir('lazy-cache-a'), embedder).embedAll(texts);
    const asked = new Uint32Array(texts.length);
    const list = {
      length: texts.length,
      at(index: number) {
        asked[index]!++;
        return texts[index];
      },
    };
    const fromList = await createEmbeddingCache(tempDir('lazy-cache-b'), embedder).embedAll(list, undefined, 7);
    expect(fromList.embedded).toBe(fromArray.embedded);
    expect(fromList.embedded).toBe(30);
    expect(fromList.vectors.map((vector) => Array.from(vector))).toEqual(fromArray.vectors.map((vector) => Array.from(vector)));
    expect(Math.max(...asked)).toBeLessThanOrEqual(2);
  });
});
