/**
 * Pieces the route specs (api/routes/) share: response helpers, headers, error maps of a
 * kind of path, and query-parameter helpers. Plain data; api/openapi.ts writes them out.
 */
import { z } from 'zod';
import type { ErrorMap, Json, ResponseSpec, Shape } from '../routes/types.ts';
import { AsyncJobAcceptedSchema } from '../../schemas/api.ts';

export const ref = (name: string): Json => ({ $ref: `#/components/schemas/${name}` });
export const jsonContent = (schema: Json): Json => ({ 'application/json': { schema } });

export const RATE_HEADERS: Json = {
  RateLimit: { description: 'limit=<n>, remaining=<n>, reset=<seconds> (draft IETF RateLimit fields).', schema: { type: 'string' } },
  'RateLimit-Policy': { description: '<limit>;w=<window seconds>.', schema: { type: 'string' } },
};

/** RateLimit fields are sent when a new submission is stored (not on replays or duplicates). */
export const SUBMISSION_HEADERS: Json = {
  ...RATE_HEADERS,
  'Idempotent-Replayed': {
    description: 'true when this is the stored answer to an earlier request with the same Idempotency-Key (same status and body).',
    schema: { type: 'string', enum: ['true'] },
  },
};

export const CACHE_HEADER: Json = { 'Cache-Control': { description: 'public, max-age=300 (5 minutes).', schema: { type: 'string' } } };

/** Sent on / and /api/agent-entry (api/http/discovery.ts). */
export const DISCOVERY_LINK_HEADER: Json = {
  Link: {
    description: 'RFC 8288 links: </openapi.json> with rel="service-desc" (this document) and </llms.txt> with rel="describedby".',
    required: true,
    schema: { type: 'string' },
  },
};

const LOCATION_HEADER: Json = { Location: { description: 'The poll URL.', required: true, schema: { type: 'string' } } };

export const JSON_RPC_ERROR: Json = {
  type: 'object',
  required: ['jsonrpc', 'error'],
  properties: {
    jsonrpc: { const: '2.0' },
    id: { anyOf: [{ type: 'string' }, { type: 'number' }, { type: 'null' }] },
    error: { type: 'object', required: ['code', 'message'], properties: { code: { type: 'integer' }, message: { type: 'string' }, data: {} } },
  },
};

/** A JSON answer. */
export function ok(description: string, schema: Shape, headers?: Json): ResponseSpec {
  return { description, ...(headers ? { headers } : {}), content: { 'application/json': schema } };
}

/** A text answer (markdown, plain text, XML). */
export function textAnswer(description: string, mediaType: 'text/markdown' | 'text/plain' | 'application/xml', headers?: Json): ResponseSpec {
  return { description, ...(headers ? { headers } : {}), content: { [mediaType]: z.string() } };
}

/** 202 of a job submission. */
export function accepted(description: string): ResponseSpec {
  return ok(description, AsyncJobAcceptedSchema, LOCATION_HEADER);
}

export { commaList, flag, flagParameter, queryParameter } from '../../schemas/api/parameters.ts';

export const noParameters: ErrorMap = { 400: ['UNKNOWN_PARAMETER'] };
// Live paths: 503 LIVE_PANEL_UNAVAILABLE while no panel is configured; with one, SPENDING_CEILING_REACHED,
// 502 PROVIDER_FAILED when no model of the panel could answer, and 503 STORE_UNAVAILABLE while
// the store (jobs, sessions, spend, rate limits) cannot be reached.
export const livePanel: ErrorMap = {
  429: ['RATE_LIMITED'],
  502: ['PROVIDER_FAILED'],
  503: ['LIVE_PANEL_UNAVAILABLE', 'SPENDING_CEILING_REACHED', 'STORE_UNAVAILABLE'],
};
export const storeDown: ErrorMap = { 503: ['STORE_UNAVAILABLE'] };
/** Writes and job submissions that take an Idempotency-Key. */
export const keyed: ErrorMap = { 409: ['IDEMPOTENCY_KEY_IN_USE'], 422: ['IDEMPOTENCY_KEY_REUSED'] };
export const missingFile: ErrorMap = { 404: ['ROUTE_NOT_FOUND'] };
