/**
 * read_divergences: the Divergence Atlas. One record by id (GET /api/divergences?id=),
 * the index filtered by terms or certification (GET /api/divergences?search=&cert=), or
 * the records nearest in meaning to a question (GET /api/divergences/search?q=&k=).
 */
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { z } from 'zod';
import { CERT_FILTERS } from '../../../core/atlas.ts';
import { MAX_QUERY_CHARS } from '../../../core/query-params.ts';
import { ATLAS_SEARCH_MAX_K } from '../../routes/divergences.ts';
import { errorResult, fromResponse, guarded } from '../results.ts';
import { summarizeDivergenceIndex, summarizeDivergenceRecord, summarizeDivergenceSearch } from '../summaries.ts';
import type { ToolDeps } from '../types.ts';

export const readDivergencesInput = {
  id: z
    .string()
    .min(1)
    .max(64)
    .optional()
    .describe(
      'A record id (case-sensitive, e.g. <PFX>-D12): returns the full record with verbatim answers, model ids, tensions and its history (revisions, newest first). Use alone.',
    ),
  q: z.string().max(MAX_QUERY_CHARS).optional().describe('A question: returns the Atlas records nearest in meaning (cosine similarity). Combine only with k.'),
  k: z.number().int().min(1).max(ATLAS_SEARCH_MAX_K).optional().describe(`Number of meaning-search results, 1-${ATLAS_SEARCH_MAX_K} (default 5); only with q.`),
  search: z.string().max(500).optional().describe('Terms separated by spaces or +; lists the records where any term appears. Combinable with cert.'),
  cert: z
    .enum(CERT_FILTERS)
    .optional()
    .describe('Lists records by robustness tier: C1 paraphrase-robust, C2 pressure-robust, C3 both, certified any of them. Combinable with search.'),
};

export function registerReadDivergencesTool(server: McpServer, deps: ToolDeps): void {
  server.registerTool(
    'read_divergences',
    {
      title: 'Read the Divergence Atlas',
      description:
        'Reads curated cross-model divergence records: one question put verbatim to several models, answers side by side, the splits named as tensions. ' +
        'Give id for one full record; q (and k) to find records by meaning; search and/or cert to filter the index; nothing to list every record. ' +
        'Only tier C3 earns unqualified "genuine divergence" language; a record whose certification is "undecided" has no tier finding; a stale record is a witness of its date. ' +
        "A full record's certification names its method (perturbation-v1: whole-answer distance; perturbation-v2: stance on the named claims, with each party's side per run); the index carries how well this Atlas's instrument sees splits. Free, no model call.",
      inputSchema: readDivergencesInput,
      annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
    },
    (input, extra) =>
      guarded(async () => {
        const modes = [
          input.id !== undefined && 'id',
          input.q !== undefined && 'q',
          (input.search !== undefined || input.cert !== undefined) && 'search/cert',
        ].filter((mode): mode is string => typeof mode === 'string');
        if (modes.length > 1 || (input.k !== undefined && input.q === undefined)) {
          return errorResult({
            status: 400,
            code: 'CONFLICTING_PARAMETERS',
            message: input.k !== undefined && input.q === undefined ? 'k only applies to a meaning search with q' : `${modes.join(', ')} cannot be combined`,
            agent_action: 'Give id alone, q (with optional k) alone, or search and/or cert.',
            retryable: false,
            suggested_next_call: null,
            suggested_tool: null,
          });
        }
        if (input.id !== undefined) {
          return fromResponse(await deps.call({ method: 'GET', path: '/api/divergences', query: { id: input.id } }, extra.signal), summarizeDivergenceRecord);
        }
        if (input.q !== undefined) {
          const query = { q: input.q, k: input.k === undefined ? undefined : String(input.k) };
          return fromResponse(await deps.call({ method: 'GET', path: '/api/divergences/search', query }, extra.signal), summarizeDivergenceSearch);
        }
        return fromResponse(
          await deps.call({ method: 'GET', path: '/api/divergences', query: { search: input.search, cert: input.cert } }, extra.signal),
          summarizeDivergenceIndex,
        );
      }),
  );
}
