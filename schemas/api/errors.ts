/** The error envelope and the 400 bodies that carry more than it (spec §7). */
import { z } from 'zod';
import { ERROR_CODES, type ErrorCode } from '../errors.ts';
import { named, text } from './common.ts';

export const ERROR_CODE_NAMES = Object.keys(ERROR_CODES) as [ErrorCode, ...ErrorCode[]];

export const ErrorCodeSchema = named(
  'ErrorCode',
  z.enum(ERROR_CODE_NAMES).describe('Stable machine-readable code; see x-error-catalogue for each status and meaning.'),
);

export const SuggestedCallSchema = named(
  'SuggestedCall',
  z
    .strictObject({
      method: text('HTTP method of the next request.'),
      path: text('Path of the next request.'),
      query: z.record(z.string(), z.string()).optional().describe('Query parameters of the next request.'),
      body: z.unknown().optional().describe('JSON body of the next request.'),
      headers: z
        .record(z.string(), z.string())
        .optional()
        .describe('Request headers the next request needs (e.g. the same Idempotency-Key to collect a pending answer).'),
    })
    .describe('A concrete next request.'),
);
export type SuggestedCall = z.infer<typeof SuggestedCallSchema>;

export const ErrorBodySchema = named(
  'ErrorBody',
  z
    .strictObject({
      code: ErrorCodeSchema.describe('Stable machine-readable code.'),
      message: text('What went wrong.'),
      agent_action: text('What a calling model should do next.'),
      retryable: z.boolean().describe('Whether the same request may succeed when retried.'),
      suggested_next_call: SuggestedCallSchema.nullable().describe('A concrete next request, or null when none applies.'),
      details: z.record(z.string(), z.unknown()).optional().describe('Machine-readable specifics (allowed values, nearest ids, limits).'),
    })
    .describe('The `error` object of the envelope.'),
);
export type ErrorBody = z.infer<typeof ErrorBodySchema>;

export const ErrorEnvelopeSchema = named(
  'ErrorEnvelope',
  z.strictObject({ error: ErrorBodySchema }).describe('Error envelope (spec §7): every 4xx and 5xx JSON response.'),
);
export type ErrorEnvelope = z.infer<typeof ErrorEnvelopeSchema>;

export const QueryUsageSchema = named(
  'QueryUsage',
  z
    .strictObject({
      endpoint: text('The endpoint this usage document describes.'),
      required: z.record(z.string(), z.string()).describe('Required parameters and their meaning.'),
      optional: z.record(z.string(), z.string()).describe('Optional parameters and their meaning.'),
      example: text('An example request path.'),
    })
    .describe('Usage document of GET /api/query.'),
);
export type QueryUsage = z.infer<typeof QueryUsageSchema>;

export const ParamMissingErrorSchema = named(
  'ParamMissingError',
  z
    .strictObject({
      param_missing: z.literal(true).describe('Always true: q was missing or empty.'),
      usage: QueryUsageSchema,
      error: ErrorBodySchema.extend({ code: z.literal('PARAM_MISSING').describe('Always PARAM_MISSING.') }).describe('The `error` object of the envelope.'),
    })
    .describe(
      '400 on GET /api/query when q is missing or empty and job is absent: the usage document plus param_missing true. The service never answers a question that was not asked.',
    ),
);
export type ParamMissingError = z.infer<typeof ParamMissingErrorSchema>;

export const MissingParameterErrorSchema = named(
  'MissingParameterError',
  z
    .strictObject({
      param_missing: z.literal(true).describe('Always true: the required parameter was missing or empty.'),
      error: ErrorBodySchema.extend({ code: z.literal('PARAM_MISSING').describe('Always PARAM_MISSING.') }).describe('The `error` object of the envelope.'),
    })
    .describe('400 when a required parameter (q on /api/divergences/search, identity on /api/kin) is missing or empty.'),
);
export type MissingParameterError = z.infer<typeof MissingParameterErrorSchema>;
