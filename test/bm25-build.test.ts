/**
 * The full-text index built document by document (core/search/bm25-build.ts) is the one
 * buildBm25Data builds, byte for byte once encoded; and one carried over from a previous
 * index, with passages removed and added, is the one a new build of the same passages gives.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { buildBm25Data, decodeFullText, encodeFullText } from '../core/search/bm25.ts';
import { buildPackedFullText, carryOver, FieldBuilder, growField } from '../core/search/bm25-build.ts';
import { createTermTokenizer } from '../core/search/tokenizer.ts';

const WORDS = ['memory', 'models', 'dissent', 'bread', 'tides', 'the', 'keepers', 'graft', 'orchard', 'naïve', 'café', 'alignment', 'forgets', 'forgetting'];

const passage = fc.array(fc.constantFrom(...WORDS), { minLength: 0, maxLength: 12 }).map((words) => words.join(' '));
const corpus = fc.array(fc.record({ record: fc.nat(4), text: passage }), { minLength: 1, maxLength: 30 });

async function packed(
  chunks: readonly { record: number; text: string }[],
  recordCount: number,
  previous?: { chunks: readonly { record: number; text: string }[]; bytes: Uint8Array },
) {
  const tokenize = await createTermTokenizer();
  const old = previous && decodeFullText(previous.bytes);
  const carry = old && carryOver(old);
  // A passage the previous build had (same record and text) is carried over, each old one once.
  const free = new Map<string, number[]>();
  previous?.chunks.forEach((chunk, at) => free.set(`${chunk.record}|${chunk.text}`, [...(free.get(`${chunk.record}|${chunk.text}`) ?? []), at]));
  let carried = 0;
  const bytes = encodeFullText(
    buildPackedFullText({
      recordCount,
      chunkRecords: Uint32Array.from(chunks, (chunk) => chunk.record),
      passage(chunk, text: FieldBuilder) {
        const from = free.get(`${chunks[chunk]!.record}|${chunks[chunk]!.text}`)?.shift();
        if (carry && from !== undefined) {
          carried++;
          carry(from, text);
        } else text.addTokens(tokenize(chunks[chunk]!.text));
      },
      stemming: true,
      stopWords: true,
    }),
  );
  return { bytes, carried };
}

describe('full-text index built document by document', () => {
  const recordCount = 5;

  it('encodes to the same bytes as buildBm25Data', async () => {
    await fc.assert(
      fc.asyncProperty(corpus, async (chunks) => {
        const expected = encodeFullText(await buildBm25Data({ recordCount, chunks }));
        expect(Buffer.from((await packed(chunks, recordCount)).bytes).equals(Buffer.from(expected))).toBe(true);
      }),
      { numRuns: 60, seed: 30 },
    );
  });

  it('carries passages over from a previous index: the same bytes as a new build, the kept passages not tokenised again', async () => {
    await fc.assert(
      fc.asyncProperty(corpus, corpus, fc.array(fc.boolean(), { minLength: 30, maxLength: 30 }), async (before, added, keep) => {
        const previous = { chunks: before, bytes: encodeFullText(await buildBm25Data({ recordCount, chunks: before })) };
        // Some passages of the previous build kept, in their order, new ones between them.
        const after = before.filter((_, at) => keep[at]).flatMap((chunk, at) => (at % 2 === 0 ? [chunk, ...added.slice(at, at + 2)] : [chunk]));
        if (after.length === 0) return;
        const expected = encodeFullText(await buildBm25Data({ recordCount, chunks: after }));
        const grown = await packed(after, recordCount, previous);
        expect(Buffer.from(grown.bytes).equals(Buffer.from(expected))).toBe(true);
        expect(grown.carried).toBeGreaterThanOrEqual(before.filter((_, at) => keep[at]).length);
      }),
      { numRuns: 60, seed: 31 },
    );
  });

  it('grows a previous index by merging its renumbered postings with the new passages: the same bytes as a new build, or undefined when the kept passages changed order', async () => {
    const tokenize = await createTermTokenizer();
    let grownRuns = 0;
    await fc.assert(
      fc.asyncProperty(corpus, corpus, fc.array(fc.boolean(), { minLength: 30, maxLength: 30 }), fc.boolean(), async (before, added, keep, swap) => {
        const old = decodeFullText(encodeFullText(await buildBm25Data({ recordCount, chunks: before })));
        let after = before.filter((_, at) => keep[at]).flatMap((chunk, at) => (at % 3 === 0 ? [...added.slice(at, at + 3), chunk] : [chunk]));
        // Two kept passages exchanged: the previous order is not kept.
        const kept = after.filter((chunk) => before.includes(chunk));
        const reordered = swap && kept.length >= 2 && `${kept[0]!.record}|${kept[0]!.text}` !== `${kept[1]!.record}|${kept[1]!.text}`;
        if (reordered) {
          const [i, j] = [after.indexOf(kept[0]!), after.indexOf(kept[1]!)];
          after = after.map((chunk, at) => (at === i ? after[j]! : at === j ? after[i]! : chunk));
        }
        if (after.length === 0) return;
        const free = new Map<string, number[]>();
        before.forEach((chunk, at) => free.set(`${chunk.record}|${chunk.text}`, [...(free.get(`${chunk.record}|${chunk.text}`) ?? []), at]));
        const newDocOf = new Int32Array(before.length).fill(-1);
        const addedDocs: number[] = [];
        const field = new FieldBuilder();
        after.forEach((chunk, at) => {
          const from = free.get(`${chunk.record}|${chunk.text}`)?.shift();
          if (from !== undefined) newDocOf[from] = at;
          else {
            addedDocs.push(at);
            field.addTokens(tokenize(chunk.text));
          }
        });
        const grown = growField(old.text, newDocOf, after.length, field.finish(), Uint32Array.from(addedDocs));
        const expected = decodeFullText(encodeFullText(await buildBm25Data({ recordCount, chunks: after })));
        // The previous passages that stay, in their new places: in order unless two were exchanged
        // (or a new passage took the place of an equal previous one).
        const places = [...newDocOf].filter((doc) => doc >= 0);
        if (places.some((doc, at) => at > 0 && doc < places[at - 1]!)) {
          expect(grown).toBeUndefined();
          return;
        }
        expect(reordered).toBe(false);
        grownRuns++;
        expect(grown).toBeDefined();
        const bytes = encodeFullText({ ...expected, text: grown! });
        expect(Buffer.from(bytes).equals(Buffer.from(encodeFullText(expected)))).toBe(true);
      }),
      { numRuns: 120, seed: 32 },
    );
    expect(grownRuns).toBeGreaterThan(40);
  });
});
