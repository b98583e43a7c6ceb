/**
 * council: one new question to the live panel, answers kept verbatim side by side
 * (GET /api/council?async=1). Persisting a record (POST with a bearer secret) is not
 * exposed over MCP: an agent holding the ingestion secret should not be the norm.
 */
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { liveJobShape, runLiveJob, secondRoundInput, submitOnlyConflict } from '../jobs.ts';
import { jobProgress } from '../progress.ts';
import { guarded } from '../results.ts';
import type { ToolDeps } from '../types.ts';

export const councilInput = { ...liveJobShape, second_round: secondRoundInput };

export function registerCouncilTool(server: McpServer, deps: ToolDeps): void {
  server.registerTool(
    'council',
    {
      title: 'Council: ask the live panel (costs money)',
      description:
        'Sends a new question verbatim to the live model panel in parallel and returns every answer verbatim with its model id, a reading and named tensions. ' +
        'Slow and costly: use it sparingly, for a new question no Atlas record fits (check read_divergences with q first). The result is not persisted over MCP; it carries a council_id under which an operator can commit exactly that result (POST /api/council with the bearer secret) within 24 h. ' +
        'Call with q to submit a background job (returns job_id; set wait_seconds to wait for it), then with job_id to poll. ' +
        'Answers a LIVE_PANEL_UNAVAILABLE error when the deployment has no panel. Same as GET /api/council?q=&async=1.',
      inputSchema: councilInput,
      annotations: { readOnlyHint: true, idempotentHint: false, openWorldHint: true },
    },
    (input, extra) =>
      guarded(
        async () =>
          submitOnlyConflict('council', input, ['second_round']) ??
          runLiveJob(
            deps,
            'council',
            input,
            (question) => ({
              method: 'GET',
              path: '/api/council',
              query: { q: question, async: '1', ...(input.second_round !== undefined ? { second_round: input.second_round ? '1' : '0' } : {}) },
            }),
            extra.signal,
            jobProgress(extra),
          ),
      ),
  );
}
