/**
 * The matching of a build's passages to the previous build's (scripts/lib/passage-match.ts):
 * each previous passage taken once, in order, as a list per identity would take them.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { matchPassages } from '../scripts/lib/passage-match.ts';

/** The plain way: every identity's previous passages in a list, each match taking the first. */
function reference(identities: readonly string[], previous: readonly string[]): number[] {
  const lists = new Map<string, number[]>();
  previous.forEach((identity, chunk) => lists.set(identity, [...(lists.get(identity) ?? []), chunk]));
  return identities.map((identity) => lists.get(identity)?.shift() ?? -1);
}

describe('matching passages to the previous build', () => {
  it('takes each previous passage once, first come first taken, repeats included', () => {
    expect(Array.from(matchPassages(['b', 'x', 'a', 'e', 'e', 'e'], ['a', 'b', 'e', 'c', 'e']))).toEqual([1, -1, 0, 2, 4, -1]);
    const identities = fc.array(fc.constantFrom('a', 'b', 'c', 'd', 'e', 'f'), { maxLength: 40 });
    fc.assert(
      fc.property(identities, identities, (now, before) => {
        expect(Array.from(matchPassages(now, before))).toEqual(reference(now, before));
      }),
      { numRuns: 300, seed: 33 },
    );
  });
});
