/**
 * The build holds no copy of the corpus's text as strings (content-files/lazy-text.ts,
 * core/search/passages.ts's writer; bench/README.md, issue 44): a corpus whose text, as the
 * strings V8 keeps it (two bytes a character once a curly quote is in it), is larger than the
 * heap the build is given still builds its search. Before, the build held the files' text,
 * the works' passages and the passages as indexed: three copies, where a million passages
 * needed a 16 GB heap.
 */
import { execFileSync } from 'node:child_process';
import { readdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { tempDir } from '../devkit/app.ts';
import { writeFixtureContent } from '../devkit/fixture-content.ts';
import { stringifyMarkdown } from '../content-files/frontmatter.ts';
import { seededRandom } from '../core/random.ts';

const WORKS = 1_600;
const HEAP_MB = 160;

/** A work's body of about 24,000 characters, curly quotes in every sentence, from a seeded draw of words. */
function body(random: () => number): string {
  const words = ['tide', 'harbour', 'moon', 'salt', 'pull', 'shore', 'keel', 'current', 'estuary', 'gull', 'breakwater', 'ebb'];
  const sentences: string[] = [];
  for (let chars = 0; chars < 24_000;) {
    const picked = Array.from({ length: 8 + Math.floor(random() * 10) }, () => words[Math.floor(random() * words.length)]!);
    const sentence = `The “${picked[0]}” ${picked.slice(1).join(' ')} — ${Math.floor(random() * 1e6)}.`;
    sentences.push(sentence);
    chars += sentence.length + 1;
  }
  return sentences.join(' ');
}

describe('the build within a heap smaller than its text', () => {
  it(`builds the search of ${WORKS} works (~73 MB of text as strings) in a ${HEAP_MB} MB heap`, () => {
    const contentDir = writeFixtureContent();
    const random = seededRandom(44);
    let characters = 0;
    for (let n = 0; n < WORKS; n++) {
      const text = body(random);
      characters += text.length;
      const data = {
        id: `TST-${20_000 + n}`,
        title: `On the “tides”, ${n}`,
        ring: 'curated',
        type: 'essay',
        layer: 'research',
        evidence: 'uncharacterized',
        contributors: ['Ada'],
        date: '2024-01-01',
      };
      writeFileSync(path.join(contentDir, 'works', `${data.id}.md`), stringifyMarkdown(data, text));
    }
    // The text alone, as two-byte strings, is past a third of the heap: three copies could not fit.
    expect((characters * 2) / 2 ** 20).toBeGreaterThan(HEAP_MB / 3 + 10);
    const output = execFileSync(
      process.execPath,
      [
        `--max-old-space-size=${HEAP_MB}`,
        '--import',
        'tsx',
        path.join(import.meta.dirname, 'helpers', 'search-build-heap.ts'),
        contentDir,
        tempDir('build-heap-cache'),
      ],
      { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] },
    );
    const built = JSON.parse(output.trim().split('\n').pop()!) as {
      works: number;
      chunks: number;
      passageBytes: number;
      fullTextBytes: number;
      heapMb: number;
    };
    const works = readdirSync(path.join(contentDir, 'works')).length;
    expect(built.works).toBe(works);
    expect(built.chunks).toBeGreaterThan(WORKS * 5);
    // Every character of every passage written (UTF-8: the curly quotes three bytes each).
    expect(built.passageBytes).toBeGreaterThan(characters);
    expect(built.fullTextBytes).toBeGreaterThan(0);
    expect(built.heapMb).toBeLessThan(HEAP_MB);
  }, 240_000);
});
