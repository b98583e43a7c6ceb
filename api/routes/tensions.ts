import { TENSION_STATUSES, type TensionStatus } from '../../schemas/vocab.ts';
import { parseOrSuggest, without } from '../core/next-call.ts';
import { rejectUnknownParameters, single, type RawQuery } from '../core/query-params.ts';
import { apiError } from '../errors.ts';
import type { RouteContext, RouteDefinition } from './types.ts';

export function tensionRoutes(context: RouteContext): RouteDefinition[] {
  return [
    {
      path: '/api/tensions',
      methods: {
        GET: (request, response) => {
          const status = parseOrSuggest('/api/tensions', request.query as RawQuery, (raw) => {
            rejectUnknownParameters(raw, ['status'], '/api/tensions');
            const value = single(raw, 'status')?.trim().toLowerCase();
            if (value !== undefined && !(TENSION_STATUSES as readonly string[]).includes(value)) {
              throw apiError('UNKNOWN_STATUS', `unknown tension status "${value}"`, `Use status=${TENSION_STATUSES.join(', status=')}, or leave it out for all.`, { details: { allowed: TENSION_STATUSES }, repair: without('status') });
            }
            return value;
          });
          const all = context.corpus.tensions;
          const tensions = status ? all.filter((tension) => tension.status === (status as TensionStatus)) : all;
          const byStatus = Object.fromEntries(TENSION_STATUSES.map((value) => [value, all.filter((tension) => tension.status === value).length]));
          response.json({
            status: status ?? null,
            count: tensions.length,
            total: all.length,
            by_status: byStatus,
            status_legend: {
              unresolved: 'Named, with no settled reading of whether the voices truly disagree.',
              divergent: 'The voices hold incompatible positions on the named axis.',
              emerging: 'A split that appears in later answers or re-elicitations and is still forming.',
            },
            note: 'A tension is a persisted named-voice disagreement from a Divergence Atlas record: two voices, their claims, the axis (topic) and a status. Read the record for the verbatim answers.',
            tensions,
          });
        },
      },
    },
  ];
}
