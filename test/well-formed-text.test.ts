/** The one text rule of writes (core/well-formed-text.ts): NUL and unpaired surrogates, found anywhere. */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { findIllFormedText } from '../core/well-formed-text.ts';

describe('findIllFormedText', () => {
  it('flags exactly the strings that are not well-formed or hold NUL, for any UTF-16 string', () => {
    fc.assert(
      fc.property(
        fc.string({ unit: 'binary', maxLength: 40 }),
        fc.string({ unit: fc.integer({ min: 0, max: 0xffff }).map((code) => String.fromCharCode(code)), maxLength: 40 }),
        (a, b) => {
          for (const text of [a, b, a + b]) {
            // The reference: encodeURIComponent throws on exactly the unpaired surrogates.
            const wellFormed = (() => {
              try {
                encodeURIComponent(text);
                return true;
              } catch {
                return false;
              }
            })();
            const storable = wellFormed && !text.includes('\u0000');
            expect(findIllFormedText(text) === undefined).toBe(storable);
          }
        },
      ),
    );
  });

  it('names the field, the problem, the index and the character', () => {
    expect(findIllFormedText({ a: 'ok', b: ['fine', 'x\ud800y'] }, 'body')).toEqual({
      field: 'body.b[1]',
      problem: 'lone_surrogate',
      index: 1,
      character: 'U+D800',
    });
    expect(findIllFormedText({ 'odd key': 'a\u0000' }, 'body')).toEqual({ field: 'body["odd key"]', problem: 'nul', index: 1, character: 'U+0000' });
    expect(findIllFormedText({ ['k\udc00']: 1 }, 'body')).toMatchObject({ field: 'body.(key)', problem: 'lone_surrogate', character: 'U+DC00' });
    // A surrogate pair is one well-formed character; order and non-strings are irrelevant.
    expect(findIllFormedText({ emoji: '\ud83d\ude00', n: 1, t: true, z: null, d: new Date(0) }, 'body')).toBeUndefined();
  });

  it('walks a body nested far deeper than the call stack would allow', () => {
    let deep: unknown = 'bottom \u0000';
    for (let level = 0; level < 200_000; level++) deep = [deep];
    expect(findIllFormedText({ q: deep }, 'body')).toMatchObject({ problem: 'nul', field: expect.stringMatching(/^body\.q(\[0\])+$/) });
  });
});
