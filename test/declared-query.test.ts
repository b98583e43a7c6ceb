/**
 * The one query parser (core/declared-query.ts): how a declaration reads raw strings, what it
 * refuses with which code, and the mend each refusal carries (the suggested_next_call of a GET).
 */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { declaredCodes, parseDeclaredQuery } from '../core/declared-query.ts';
import { parseOrSuggest } from '../core/next-call.ts';
import { commaList, flagParameter, queryParameter } from '../schemas/api/parameters.ts';
import { ApiError, type RawQuery } from '../schemas/errors.ts';

const PARAMETERS = [
  queryParameter('q', z.string().max(10), 'The question.', { required: true, example: 'tides', code: 'QUERY_TOO_LONG' }),
  queryParameter('cert', z.enum(['C1', 'certified']), 'Robustness.', { trim: true, caseInsensitive: true, code: 'UNKNOWN_CERT' }),
  queryParameter('layers', commaList(['canon', 'research']), 'Layers.', { list: true, caseInsensitive: true, code: 'UNKNOWN_LAYER' }),
  queryParameter('limit', z.number().int().min(1).max(5).default(3), 'Records.'),
  queryParameter('si', z.string(), 'Identity.', { trim: true, emptyIsAbsent: true }),
  flagParameter('async', 'Background job.'),
] as const;

function refusal(raw: RawQuery): ApiError {
  try {
    parseOrSuggest('/p', raw, (candidate) => parseDeclaredQuery(PARAMETERS, candidate, { path: '/p', examples: { q: 'harbour' } }));
  } catch (error) {
    if (error instanceof ApiError) return error;
    throw error;
  }
  throw new Error(`accepted ${JSON.stringify(raw)}`);
}

describe('parseDeclaredQuery', () => {
  it('reads closed values in their own case, lists without blanks or repeats, numbers, flags as booleans, and defaults', () => {
    const query = parseDeclaredQuery(PARAMETERS, { q: 'tides', cert: ' c1 ', layers: 'Canon, ,canon,research', async: 'TRUE', si: '  ' }, { path: '/p' });
    expect(query).toEqual({ q: 'tides', cert: 'C1', layers: ['canon', 'research'], limit: 3, si: undefined, async: true });
    expect(parseDeclaredQuery(PARAMETERS, { q: 'tides', async: 'false', limit: '5' }, { path: '/p' })).toMatchObject({ async: false, limit: 5 });
  });

  it('refuses with the declared code, and each refusal mends to a query the parser accepts', () => {
    const cases: [RawQuery, string, RawQuery | undefined][] = [
      [{ q: 'tides', bogus: '1' }, 'UNKNOWN_PARAMETER', { q: 'tides' }],
      [{ q: ['tides', 'harbour'] }, 'PARAM_REPEATED', { q: 'tides' }],
      [{ cert: 'C1' }, 'PARAM_MISSING', { cert: 'C1', q: 'harbour' }],
      [{ q: ' ' }, 'PARAM_MISSING', { q: 'harbour' }],
      [{ q: 'a'.repeat(12) }, 'QUERY_TOO_LONG', { q: 'a'.repeat(10) }],
      [{ q: 'tides', cert: 'C4' }, 'UNKNOWN_CERT', { q: 'tides' }],
      [{ q: 'tides', layers: 'canon,realms' }, 'UNKNOWN_LAYER', { q: 'tides' }],
      [{ q: 'tides', layers: ',' }, 'UNKNOWN_LAYER', { q: 'tides' }],
      [{ q: 'tides', limit: '6' }, 'INVALID_PARAMETER', { q: 'tides' }],
      [{ q: 'tides', limit: '2.5' }, 'INVALID_PARAMETER', { q: 'tides' }],
      [{ q: 'tides', async: 'yes' }, 'INVALID_PARAMETER', { q: 'tides' }],
    ];
    for (const [raw, code, mended] of cases) {
      const error = refusal(raw);
      expect([JSON.stringify(raw), error.code]).toEqual([JSON.stringify(raw), code]);
      expect(error.toBody().error.agent_action.length).toBeGreaterThan(10);
      expect(error.options.suggestedNextCall).toEqual({ method: 'GET', path: '/p', query: mended });
    }
    expect(refusal({ q: ' ' }).toBody()).toMatchObject({ param_missing: true });
  });

  it('derives the codes a declaration can produce by running the parser on generated faults', () => {
    expect(declaredCodes(PARAMETERS).sort()).toEqual(
      ['INVALID_PARAMETER', 'PARAM_MISSING', 'PARAM_REPEATED', 'QUERY_TOO_LONG', 'UNKNOWN_CERT', 'UNKNOWN_LAYER', 'UNKNOWN_PARAMETER'].sort(),
    );
    // An open string that may be blank cannot be refused: only unknown and repeated names are.
    expect(declaredCodes([queryParameter('id', z.string(), 'An id.')]).sort()).toEqual(['PARAM_REPEATED', 'UNKNOWN_PARAMETER']);
    expect(declaredCodes([])).toEqual(['UNKNOWN_PARAMETER']);
    expect(declaredCodes(undefined)).toEqual([]);
  });
});
