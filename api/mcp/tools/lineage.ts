/** lineage: where a concept came from and the disagreements in its region (GET /api/lineage?concept=). */
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { z } from 'zod';
import { MAX_CONCEPT_CHARS } from '../../routes/lineage.ts';
import { fromResponse, guarded } from '../results.ts';
import { summarizeLineage } from '../summaries.ts';
import type { ToolDeps } from '../types.ts';

export const lineageInput = {
  concept: z
    .string()
    .min(1)
    .max(MAX_CONCEPT_CHARS)
    .describe('A concept id (e.g. refusal) or its label (case-insensitive). An unknown concept answers CONCEPT_NOT_FOUND with the nearest concepts.'),
};

export function registerLineageTool(server: McpServer, deps: ToolDeps): void {
  server.registerTool(
    'lineage',
    {
      title: 'Concept lineage',
      description:
        'For one concept, from the content alone: related concepts ranked by co-occurrence on the same works (undirected: no parent or child is claimed), ' +
        'the chronological spine of works and Atlas records tagged with it (id, title, contributors, ring, date), a contributor breakdown, ' +
        'and the tensions in its region split into open and repaired. Free, no model call. Same as GET /api/lineage.',
      inputSchema: lineageInput,
      annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
    },
    (input, extra) =>
      guarded(async () =>
        fromResponse(await deps.call({ method: 'GET', path: '/api/lineage', query: { concept: input.concept } }, extra.signal), summarizeLineage),
      ),
  );
}
