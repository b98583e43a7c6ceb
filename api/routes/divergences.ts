import { filterRecords, indexEnvelope, nearestIds, parseCert, searchTerms } from '../../core/atlas.ts';
import { sampleQuestion } from '../../core/examples.ts';
import { parseOrSuggest, without, withValue } from '../../core/next-call.ts';
import { rejectUnknownParameters, single, type RawQuery } from '../../core/query-params.ts';
import { apiError } from '../../schemas/errors.ts';
import type { RouteContext, RouteDefinition } from './types.ts';

export const ATLAS_SEARCH_DEFAULT_K = 5;
export const ATLAS_SEARCH_MAX_K = 50;

export function divergenceRoutes(context: RouteContext): RouteDefinition[] {
  const { corpus } = context;
  return [
    {
      path: '/api/divergences',
      methods: {
        GET: (request, response) => {
          const { id, search, certParam, cert } = parseOrSuggest('/api/divergences', request.query as RawQuery, (raw) => {
            rejectUnknownParameters(raw, ['id', 'search', 'cert'], '/api/divergences');
            const certParam = single(raw, 'cert');
            return { id: single(raw, 'id'), search: single(raw, 'search'), certParam, cert: parseCert(certParam) };
          });
          if (id !== undefined) {
            const record = corpus.divergenceById.get(id.trim());
            if (!record) {
              const nearest = nearestIds(id.trim(), [...corpus.divergenceById.keys()]);
              throw apiError(
                'RECORD_NOT_FOUND',
                `no divergence record has id "${id}"`,
                nearest.length > 0
                  ? `Ids are case-sensitive. Did you mean ${nearest.join(' or ')}? Retry with that id.`
                  : 'List the records with GET /api/divergences, or find one by meaning with GET /api/divergences/search?q=<question>.',
                {
                  suggestedNextCall: nearest[0]
                    ? { method: 'GET', path: '/api/divergences', query: { id: nearest[0] } }
                    : { method: 'GET', path: '/api/divergences' },
                  details: { requested_id: id, nearest_ids: nearest, id_shape: `${corpus.site.id_prefix}-D<digits> or ${corpus.site.id_prefix}-L<digits>` },
                },
              );
            }
            response.json(record);
            return;
          }
          const terms = search !== undefined ? searchTerms(search) : undefined;
          const shown = filterRecords(corpus.divergences, terms, cert);
          response.json(
            indexEnvelope(corpus.divergences, shown, { id: id ?? null, search: search ?? null, cert: certParam ?? null }),
          );
        },
      },
    },
    {
      path: '/api/divergences/search',
      methods: {
        GET: async (request, response) => {
          const { q, k } = parseOrSuggest('/api/divergences/search', request.query as RawQuery, (raw) => {
            rejectUnknownParameters(raw, ['q', 'k'], '/api/divergences/search');
            const q = single(raw, 'q');
            if (q === undefined || q.trim() === '') {
              throw apiError('PARAM_MISSING', 'q is missing or empty', 'Resend with q set to your question, e.g. GET /api/divergences/search?q=...', {
                repair: withValue('q', sampleQuestion(corpus)),
                extra: { param_missing: true },
              });
            }
            const kParam = single(raw, 'k');
            if (kParam === undefined) return { q, k: ATLAS_SEARCH_DEFAULT_K };
            if (!/^\d+$/.test(kParam) || Number(kParam) < 1 || Number(kParam) > ATLAS_SEARCH_MAX_K) {
              throw apiError('INVALID_PARAMETER', `k must be an integer from 1 to ${ATLAS_SEARCH_MAX_K}, got "${kParam}"`, `Send k between 1 and ${ATLAS_SEARCH_MAX_K}, or leave it out for ${ATLAS_SEARCH_DEFAULT_K}.`, { repair: without('k') });
            }
            return { q, k: Number(kParam) };
          });
          const hits = await corpus.search.similar(q, (record) => record.kind === 'divergence', k);
          response.json({
            query: q,
            k: hits.length,
            index: {
              source: 'divergence-atlas',
              embedded: corpus.divergences.length,
              model: corpus.search.embedder.id,
              dims: corpus.search.embedder.dims,
            },
            note: 'Search is by meaning (cosine similarity), limited to the Atlas; media and oral records are excluded.',
            results: hits.map((hit) => {
              const record = corpus.divergenceById.get(hit.record.id)!;
              return { id: record.id, score: hit.score, question: record.question, contributors: record.contributors, excerpt: record.excerpt, href: record.href };
            }),
          });
        },
      },
    },
  ];
}
