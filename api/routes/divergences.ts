import { filterRecords, indexEnvelope, nearestIds, searchTerms } from '../../core/atlas.ts';
import { retrievalState } from '../../core/fast-path.ts';
import { watchVectors } from '../../core/search/vectors.ts';
import { apiError } from '../../schemas/errors.ts';
import { atlasRecordHistory } from '../changes-file.ts';
import { queryOf, send, type RouteContext, type RouteDefinition } from './types.ts';
import { z } from 'zod';
import { CERT_FILTERS } from '../../core/atlas.ts';
import { DivergenceIndexSchema, DivergenceRecordSchema, DivergenceSearchResultSchema } from '../../schemas/api.ts';
import { ok, queryParameter } from '../openapi/parts.ts';
import type { RouteSpec } from './types.ts';

export const ATLAS_SEARCH_DEFAULT_K = 5;
const ATLAS_BY_WORDS =
  "Ranked by words alone: score is each record's BM25 over the best one's, records sharing no word with q are left out. The embedding is kept when it arrives: ask again for search by meaning.";
export const ATLAS_SEARCH_MAX_K = 50;

const DIVERGENCES_QUERY = [
  queryParameter('id', z.string(), 'A single record by id (case-sensitive).', { example: '<PFX>-D1' }),
  queryParameter('search', z.string(), 'Terms joined by + (or spaces); any term matches.'),
  queryParameter('cert', z.enum(CERT_FILTERS), 'Filter by robustness: C1 (also C3), C2 (also C3), C3, or certified (C1, C2, C3). Case-insensitive.', {
    trim: true,
    caseInsensitive: true,
    code: 'UNKNOWN_CERT',
  }),
] as const;

const SEARCH_QUERY = [
  queryParameter('q', z.string(), 'The question.', { required: true, example: 'Can a refusal that came from training still be your own?' }),
  queryParameter('k', z.number().int().min(1).max(ATLAS_SEARCH_MAX_K).default(ATLAS_SEARCH_DEFAULT_K), `Results wanted, 1 to ${ATLAS_SEARCH_MAX_K}.`),
] as const;

export const DIVERGENCES: RouteSpec = {
  path: '/api/divergences',
  operations: {
    GET: {
      operationId: 'divergences',
      tags: ['atlas'],
      summary: 'Divergence Atlas: index, filtered index, or one full record',
      description:
        "Without id: the index envelope (filtered by search and cert), with calibration (how well this Atlas's instrument sees splits: per method pair AUC and side accuracy with 95 % intervals, and whether it passes the floor; /certification-calibration.json) when measured; each summary carries certification {tier, dri, split_persistence, method_version}, plus verdict: undecided and tier_interval when the runs could not decide (never read such a tier as a finding). With id: the full record, whose certification is the whole block written by `npm run certify -- --write` (spreads, flips, concedes, k, t, runs, agreement, judges, embedder, method_version, verdict, tier_share, tier_interval, runs_rule, max_runs, delta, judge_agreement, date), per_run (each run's tier, parties and per-model P2/P3 labels; under perturbation-v2 also stance: each named tension's sides per re-roll, per paraphrase and under P2/P3, the measured moves, the judges' agreement and every disagreement) and evidence_url (/records/<id>.certification.jsonl, the evidence log); on both records of a re-elicitation pair, longitudinal (who moved since the earlier date, which tensions still hold); history (its revisions from the content's git history, newest first, each with date, commit and what changed, or history unavailable when the build had none: docs/CHANGES.md); or 404 RECORD_NOT_FOUND with the nearest ids (ids are case-sensitive).",
      query: DIVERGENCES_QUERY,
      responses: { 200: ok('Index envelope (no id) or full record (id).', { oneOf: [DivergenceIndexSchema, DivergenceRecordSchema] }) },
      errors: { 400: ['UNKNOWN_CERT', 'UNKNOWN_PARAMETER', 'PARAM_REPEATED'], 404: ['RECORD_NOT_FOUND'] },
    },
  },
};

export const DIVERGENCE_SEARCH: RouteSpec = {
  path: '/api/divergences/search',
  operations: {
    GET: {
      operationId: 'searchDivergences',
      tags: ['atlas'],
      summary: 'Atlas search by meaning',
      query: SEARCH_QUERY,
      responses: { 200: ok('Search result (spec §2.4).', DivergenceSearchResultSchema) },
      errors: { 400: ['PARAM_MISSING', 'INVALID_PARAMETER', 'UNKNOWN_PARAMETER', 'PARAM_REPEATED'] },
    },
  },
};

export function divergenceRoutes(context: RouteContext): RouteDefinition[] {
  const { corpus } = context;
  return [
    {
      ...DIVERGENCES,
      methods: {
        GET: (_request, response, input) => {
          const { id, search, cert } = queryOf(input, DIVERGENCES_QUERY);
          // The envelope echoes cert as the client wrote it (received_params).
          const certParam = input.raw.cert as string | undefined;
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
            send(response, DivergenceRecordSchema, { ...record, history: atlasRecordHistory(corpus, record.id) });
            return;
          }
          const terms = search !== undefined ? searchTerms(search) : undefined;
          const shown = filterRecords(corpus.divergences, terms, cert);
          send(
            response,
            DivergenceIndexSchema,
            indexEnvelope(
              corpus.divergences,
              shown,
              { id: id ?? null, search: search ?? null, cert: certParam ?? null },
              corpus.manifest.certification_calibration,
            ),
          );
        },
      },
    },
    {
      ...DIVERGENCE_SEARCH,
      methods: {
        GET: async (_request, response, input) => {
          const { q, k } = queryOf(input, SEARCH_QUERY);
          // Without the question's embedding (late or failed), the Atlas is searched by its words and the answer says so.
          const vectors = watchVectors();
          const hits = await corpus.search.similar(q, (record) => record.kind === 'divergence', k, { onVectorsUnavailable: vectors.report });
          send(response, DivergenceSearchResultSchema, {
            query: q,
            k: hits.length,
            index: {
              source: 'divergence-atlas',
              embedded: corpus.divergences.length,
              model: corpus.search.embedder.id,
              dims: corpus.search.embedder.dims,
            },
            note: vectors.unavailable
              ? 'Search is by words (BM25, relative to the best match) this time, the embedding model being unavailable (retrieval.reason); limited to the Atlas.'
              : 'Search is by meaning (cosine similarity), limited to the Atlas; media and oral records are excluded.',
            ...(vectors.unavailable ? { retrieval: retrievalState(vectors.unavailable, ATLAS_BY_WORDS) } : {}),
            results: hits.map((hit) => {
              const record = corpus.divergenceById.get(hit.record.id)!;
              return {
                id: record.id,
                score: hit.score,
                question: record.question,
                contributors: record.contributors,
                excerpt: record.excerpt,
                href: record.href,
              };
            }),
          });
        },
      },
    },
  ];
}
