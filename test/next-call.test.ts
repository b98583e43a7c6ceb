/**
 * The mended GET of core/next-call.ts, for all inputs: whatever GET /api/query refuses,
 * its suggested_next_call is a query the same parser accepts, and it keeps every value the
 * caller sent that was not refused.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseOrSuggest, truncate } from '../core/next-call.ts';
import { parseQueryParameters, QUERY_PARAMETERS, type RawQuery } from '../core/query-params.ts';
import { ApiError } from '../schemas/errors.ts';

const VALUES: Record<string, string[]> = {
  q: ['tides', '', ' ', 'x'.repeat(4001), `${'é'.repeat(3999)}😀`],
  mode: ['retrieve', 'trace', 'fast'],
  async: ['1', 'true', '0', 'maybe'],
  sync: ['1', 'no'],
  job: ['job_1', ''],
  glyph: ['Ξ', 'Z'],
  format: ['brief', 'xml'],
  si: ['alder-2', ''],
  layers: ['divergence', 'bogus', ''],
  sources: ['canon,research', 'nope'],
  exclude: ['research', 'research,divergence,canon,realms'],
  exclude_ids: ['TST-1', ''],
  evidence_threshold: ['fictional', 'solid'],
  rings: ['core', 'gold'],
  ring: ['open', ''],
  tier: ['media', 'x'],
  limit: ['3', '0', '999', 'ten'],
  second_round: ['1', '0', 'maybe'],
  bogus: ['1'],
  __proto__: ['x'],
};

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
const names = [...QUERY_PARAMETERS, 'bogus', '__proto__'];
const value = (name: string) => fc.constantFrom(...VALUES[name]!);
const rawQuery = fc
  .uniqueArray(fc.constantFrom(...names), { maxLength: 8 })
  .chain((chosen) =>
    fc
      .tuple(
        ...chosen.map((name) =>
          fc.oneof({ weight: 4, arbitrary: value(name) }, { weight: 1, arbitrary: fc.array(value(name), { minLength: 2, maxLength: 3 }) }),
        ),
      )
      .map((values) => ({ chosen, values })),
  )
  .map(({ chosen, values }) => {
    const raw: RawQuery = Object.create(null) as RawQuery;
    chosen.forEach((name, index) => (raw[name] = values[index]));
    return raw;
  });

describe('suggested_next_call of GET /api/query', () => {
  it('is always a query the parser accepts, keeping what was not refused', () => {
    fc.assert(
      fc.property(rawQuery, (raw) => {
        try {
          parseOrSuggest('/api/query', raw, parseQueryParameters);
        } catch (error) {
          expect(error).toBeInstanceOf(ApiError);
          const call = (error as ApiError).options.suggestedNextCall;
          expect(call).toMatchObject({ method: 'GET', path: '/api/query' });
          const query = call!.query ?? {};
          expect(() => parseQueryParameters(query)).not.toThrow();
          // A value the suggestion keeps is one the caller sent (or the first of a repeat); q may be filled in or shortened.
          for (const [name, kept] of Object.entries(query)) {
            if (name === 'q') continue;
            const sent = raw[name];
            expect(Array.isArray(sent) ? sent[0] : sent).toBe(kept);
          }
        }
      }),
      { numRuns: 2000 },
    );
  });

  it('never cuts a surrogate pair when shortening', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme', maxLength: 60 }), fc.integer({ min: 0, max: 80 }), (text, limit) => {
        const cut = truncate(text, limit);
        expect(cut.length).toBeLessThanOrEqual(limit);
        expect(text.startsWith(cut)).toBe(true);
        expect(cut).not.toMatch(LONE_SURROGATE);
      }),
    );
  });
});
