/**
 * changes: what changed in the content since a revision the agent holds (GET /api/changes?since=,
 * issue 45). The way to follow the Atlas over MCP: the server is stateless HTTP and pushes nothing,
 * so an agent keeps manifest.published_releases.corpus_rev and asks again (docs/MCP.md).
 */
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { z } from 'zod';
import { fromResponse, guarded } from '../results.ts';
import { summarizeChanges } from '../summaries.ts';
import type { ToolDeps } from '../types.ts';

export const changesInput = {
  // Not checked here: the route parses it, so a malformed revision gets the same error code over MCP as over HTTP.
  since: z
    .string()
    .max(64)
    .describe(
      'The corpus revision you hold: manifest.published_releases.corpus_rev from an earlier info call (16 lower-case hex digits), or the current_rev of an earlier changes call.',
    ),
};

export function registerChangesTool(server: McpServer, deps: ToolDeps): void {
  server.registerTool(
    'changes',
    {
      title: 'What changed since a revision',
      description:
        'Follow the corpus and the Atlas: give the corpus revision you hold (info → manifest.published_releases.corpus_rev) and get what changed since, newest first: ' +
        'the commits in between, and the records added, changed and removed, each with the fields that changed (tier from → to, answers and annotations appended, dispositions). ' +
        'Keep current_rev and call again later; up_to_date: true means nothing to apply. An unknown revision (REVISION_NOT_FOUND) or a deployment built without git history ' +
        '(HISTORY_UNAVAILABLE) means: read everything again with info and read_divergences. Free, no model call. Same as GET /api/changes.',
      inputSchema: changesInput,
      annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
    },
    (input, extra) =>
      guarded(async () =>
        fromResponse(await deps.call({ method: 'GET', path: '/api/changes', query: { since: input.since } }, extra.signal), summarizeChanges),
      ),
  );
}
