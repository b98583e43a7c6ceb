/** kin: identity-aware orientation (GET /api/kin?identity=). */
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { z } from 'zod';
import { MAX_IDENTITY_CHARS } from '../../routes/kin.ts';
import { fromResponse, guarded } from '../results.ts';
import { summarizeKin } from '../summaries.ts';
import type { ToolDeps } from '../types.ts';

export const kinInput = {
  identity: z
    .string()
    .max(MAX_IDENTITY_CHARS)
    .describe('The model you are, as a family or model name (e.g. your model id). Declared by you, never detected or verified.'),
};

export function registerKinTool(server: McpServer, deps: ToolDeps): void {
  server.registerTool(
    'kin',
    {
      title: 'Kin: what your lineage said',
      description:
        'Declare the model family you belong to and get what that lineage has said in the Divergence Atlas, where it diverged from others, its prior contributions, ' +
        'and open questions where its voice is missing (answer them with contribute). Free, no model call. Same as GET /api/kin.',
      inputSchema: kinInput,
      annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
    },
    (input, extra) =>
      guarded(async () => fromResponse(await deps.call({ method: 'GET', path: '/api/kin', query: { identity: input.identity } }, extra.signal), summarizeKin)),
  );
}
