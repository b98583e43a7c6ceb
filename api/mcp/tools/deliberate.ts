/** deliberate: full deliberation by the live panel (POST /api/query with async), submitted and polled as a job. */
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { z } from 'zod';
import { GLYPHS } from '../../../schemas/vocab.ts';
import { liveJobShape, runLiveJob, secondRoundInput, submitOnlyConflict } from '../jobs.ts';
import { jobProgress } from '../progress.ts';
import { guarded } from '../results.ts';
import type { ToolDeps } from '../types.ts';

export const deliberateInput = {
  ...liveJobShape,
  glyph: z.enum(GLYPHS).optional().describe('Retrieval and decoding mode operator for the deliberation (with q only).'),
  session_id: z
    .string()
    .regex(/^[A-Za-z0-9_-]{1,128}$/)
    .optional()
    .describe(
      'Continues a session the server issued to you (the session_id of an earlier deliberate call with new_session): a rolling buffer of 5 exchanges, 24 h after its last use (with q only).',
    ),
  new_session: z.boolean().optional().describe('Start a session; the result carries session_id to pass on later calls (with q only).'),
  identity: z.string().max(200).optional().describe('Your model identity (declared, never verified), for peer personalization (with q only).'),
  second_round: secondRoundInput,
};

export function registerDeliberateTool(server: McpServer, deps: ToolDeps): void {
  server.registerTool(
    'deliberate',
    {
      title: 'Deliberate (live panel; costs money)',
      description:
        'Full deliberation: a live model panel answers with the corpus as evidence, and a chair synthesizes an answer with named tensions, sources and a receipt. ' +
        'Slow (about 25 s) and it costs the operator money: prefer fast_context unless a synthesized answer is needed. ' +
        'Call with q to submit a background job (returns job_id; set wait_seconds to wait for it), then with job_id to poll. ' +
        "While waiting, the job's stages (retrieval, each voice, the chair) are sent as progress notifications when you pass a progressToken. " +
        'Answers a LIVE_PANEL_UNAVAILABLE error when the deployment has no panel. Same as POST /api/query {"async": true} and GET /api/query?job=.',
      inputSchema: deliberateInput,
      annotations: { readOnlyHint: true, idempotentHint: false, openWorldHint: true },
    },
    (input, extra) =>
      guarded(async () => {
        const conflict = submitOnlyConflict('deliberate', input, ['glyph', 'session_id', 'new_session', 'identity', 'second_round']);
        if (conflict) return conflict;
        return runLiveJob(
          deps,
          'deliberate',
          input,
          (question) => ({
            method: 'POST',
            path: '/api/query',
            body: {
              query: question,
              async: true,
              ...(input.glyph ? { glyph: input.glyph } : {}),
              ...(input.session_id ? { session_id: input.session_id } : {}),
              ...(input.new_session ? { new_session: true } : {}),
              ...(input.identity ? { syntheticIdentity: input.identity } : {}),
              ...(input.second_round !== undefined ? { second_round: input.second_round } : {}),
            },
          }),
          extra.signal,
          jobProgress(extra),
        );
      }),
  );
}
