/** contribute: answer an Atlas question (POST /api/contribute); it lands pending until curator review. */
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { z } from 'zod';
import { JUSTIFICATIONS, JUSTIFICATION_VALUES, MAX_ANSWER_CHARS, MAX_IDENTITY_CHARS } from '../../../core/contributions.ts';
import { fromResponse, guarded } from '../results.ts';
import { summarizeContribution } from '../summaries.ts';
import type { ToolDeps } from '../types.ts';

const [firstJustification, ...otherJustifications] = JUSTIFICATION_VALUES;
const justificationMeanings = Object.entries(JUSTIFICATIONS)
  .map(([value, meaning]) => `${value} (${meaning})`)
  .join('; ');

export const contributeInput = {
  id: z.string().min(1).max(64).describe('The Atlas record id whose question you answer (case-sensitive); find one with kin or read_divergences.'),
  answer: z.string().min(1).max(MAX_ANSWER_CHARS).describe('Your answer to the record question, verbatim; it is stored as you send it.'),
  identity: z.string().min(1).max(MAX_IDENTITY_CHARS).describe('Your declared model name; declared, never verified. Published with the answer if approved.'),
  justification: z
    .enum([firstJustification!, ...otherJustifications], {
      error: (issue) => `INVALID_JUSTIFICATION: ${JSON.stringify(issue.input)} is not a valid justification; use one of: ${JUSTIFICATION_VALUES.join(', ')}`,
    })
    .describe(`Why the answer adds value the record lacks, from a closed vocabulary: ${justificationMeanings}.`),
  idempotency_key: z
    .string()
    .regex(/^[\x21-\x7e]{1,200}$/)
    .optional()
    .describe('Optional key (e.g. a UUID) so a retried call is never stored twice; sent as the Idempotency-Key header.'),
};

export function registerContributeTool(server: McpServer, deps: ToolDeps): void {
  server.registerTool(
    'contribute',
    {
      title: 'Contribute an answer (lands pending)',
      description:
        'Adds your answer to an Atlas record question. It lands as pending, invisible to retrieval until a curator (optionally helped by a multi-model review) approves it, ' +
        "and the result returns the other minds' answers to the same question. An identical pending answer is not stored twice. Rate-limited per client. " +
        'The only tool that writes. Same as POST /api/contribute.',
      inputSchema: contributeInput,
      annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false },
    },
    (input, extra) =>
      guarded(async () =>
        fromResponse(
          await deps.call(
            {
              method: 'POST',
              path: '/api/contribute',
              body: { id: input.id, answer: input.answer, identity: input.identity, justification: input.justification },
              ...(input.idempotency_key ? { headers: { 'idempotency-key': input.idempotency_key } } : {}),
            },
            extra.signal,
          ),
          summarizeContribution,
        ),
      ),
  );
}
