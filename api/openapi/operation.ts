/** One operation of /openapi.json from a route's OperationSpec: parameters, body, its answers and the answers every operation shares. */
import { z } from 'zod';
import { apiSchemas } from '../../schemas/api.ts';
import type { ErrorCode } from '../../schemas/errors.ts';
import type { Json, Method, OperationSpec, QueryParameter, ResponseSpec, Shape } from '../routes/types.ts';
import { errorResponse } from './errors.ts';
import { declaredCodes } from '../../core/declared-query.ts';
import { JSON_RPC_ERROR, jsonContent, ref } from './parts.ts';

const IDEMPOTENCY_KEY: Json = {
  name: 'Idempotency-Key',
  in: 'header',
  required: false,
  description:
    'A unique key (1-200 visible ASCII characters, e.g. a UUID), scoped to this client and this operation: the same request resent with the same key gets the first answer (same status and body, header Idempotent-Replayed: true) instead of storing or submitting twice; a different request with a used key is 422 IDEMPOTENCY_KEY_REUSED; while the first is still being handled, 409 IDEMPOTENCY_KEY_IN_USE. On /api/query, /api/trace and /api/council it applies to job submissions (async).',
  schema: { type: 'string', pattern: '^[\\x21-\\x7e]{1,200}$' },
};

const NON_EMPTY = z.string().min(1);

/** A sync live path also answers as Server-Sent Events when the caller accepts them. */
const EVENT_STREAM_NOTE =
  ' With Accept: text/event-stream the same run is streamed as Server-Sent Events: `event: stage` (a JobStage: retrieval, each voice as it answers or fails, the chair), then `event: result` with this body, or `event: error` with {status, error: envelope} when the run fails after the stream started. Checks before the run (bad input, no panel, rate limit, spending ceiling) keep their HTTP status and JSON envelope. Closing the stream aborts the model calls of this run, as any client going away does (what they spent is recorded; the run joins no session); no other request or job is affected.';

/** A zod schema inline, as JSON Schema 2020-12 (without the safe-integer bounds zod adds to every integer: they say nothing here). */
function inline(schema: z.ZodType): Json {
  const { $schema: _schema, ...rest } = z.toJSONSchema(schema, {
    target: 'draft-2020-12',
    io: 'output',
    unrepresentable: 'throw',
    override: ({ jsonSchema }) => {
      if (jsonSchema.maximum === Number.MAX_SAFE_INTEGER) delete jsonSchema.maximum;
      if (jsonSchema.minimum === Number.MIN_SAFE_INTEGER) delete jsonSchema.minimum;
    },
  }) as Json;
  return rest;
}

/** A shape as JSON Schema: a named schema becomes a $ref to its component. */
export function shapeSchema(shape: Shape): Json {
  if ('oneOf' in shape && Array.isArray(shape.oneOf)) return { oneOf: shape.oneOf.map(shapeSchema) };
  if ('anyOf' in shape && Array.isArray(shape.anyOf)) return { anyOf: shape.anyOf.map(shapeSchema) };
  if ('jsonSchema' in shape) return shape.jsonSchema;
  const schema = shape as z.ZodType;
  const name = apiSchemas.get(schema)?.id;
  return name ? ref(name) : inline(schema);
}

function queryParameter(parameter: QueryParameter): Json {
  return {
    name: parameter.name,
    in: 'query',
    required: parameter.required ?? false,
    description: parameter.description,
    schema: inline(parameter.schema),
    ...(parameter.list ? { style: 'form', explode: false } : {}),
    ...(parameter.example !== undefined ? { example: parameter.example } : {}),
  };
}

function response(spec: ResponseSpec): Json {
  const content: Json = {};
  for (const [mediaType, shape] of Object.entries(spec.content ?? {})) content[mediaType] = { schema: shapeSchema(shape) };
  if (spec.eventStream) content['text/event-stream'] = { schema: { type: 'string', description: 'event: stage / result / error; data: one line of JSON.' } };
  return {
    description: spec.eventStream ? `${spec.description}${EVENT_STREAM_NOTE}` : spec.description,
    ...(spec.headers ? { headers: spec.headers } : {}),
    ...(spec.content ? { content } : {}),
    ...spec.extensions,
  };
}

/** kind: a route of the table (405 for other methods) or a static file (404 when absent, 304 on a match). */
export function operation(spec: OperationSpec, method: Method, kind: 'route' | 'file'): Json {
  const errors: Record<number, ErrorCode[]> = {};
  const add = (status: number, ...codes: ErrorCode[]) => {
    if (codes.length === 0) return;
    const list = (errors[status] ??= []);
    for (const code of codes) if (!list.includes(code)) list.push(code);
  };
  for (const [status, codes] of Object.entries(spec.errors ?? {})) add(Number(status), ...(codes ?? []));
  // What the declared query parameters can be refused with (the route table parses them before the handler).
  add(400, ...declaredCodes(spec.query));
  // A malformed Idempotency-Key header, checked by the route table too.
  if (spec.idempotencyKey) add(400, 'INVALID_PARAMETER');
  if (method === 'POST') {
    add(400, 'INVALID_JSON', 'BAD_REQUEST');
    if (!spec.jsonRpc) add(400, 'BODY_TOO_DEEP');
    // Every string of a POST body passes the text rule, except MCP's (each tool call is checked as the call it makes).
    if (!spec.jsonRpc) add(400, 'INVALID_TEXT');
    add(413, 'PAYLOAD_TOO_LARGE');
  }
  // Routes and files alike answer other methods with 405 and Allow.
  add(405, 'METHOD_NOT_ALLOWED');
  add(408, 'REQUEST_TIMEOUT');
  add(414, 'URI_TOO_LONG');
  add(431, 'HEADERS_TOO_LARGE');
  add(500, 'INTERNAL_ERROR');

  const responses: Record<string, Json> = {};
  for (const [status, answer] of Object.entries(spec.responses)) responses[status] = response(answer);
  // Files carry ETag and Last-Modified; a matching conditional GET answers 304 without a body.
  if (kind === 'file') responses['304'] = { description: 'Not modified (If-None-Match or If-Modified-Since matched).' };
  const paramMissing = shapeSchema(spec.paramMissing ?? apiSchemaNamed('MissingParameterError'));
  const invalidJustification = spec.invalidJustification ? shapeSchema(spec.invalidJustification) : undefined;
  for (const status of Object.keys(errors)
    .map(Number)
    .sort((a, b) => a - b)) {
    responses[String(status)] = errorResponse(status, errors[status]!, paramMissing, invalidJustification);
  }
  if (spec.jsonRpc && responses['400']) {
    const envelope = (responses['400'] as { content: Record<string, { schema: Json }> }).content['application/json']!.schema;
    responses['400'] = { ...responses['400'], content: jsonContent({ oneOf: [envelope, JSON_RPC_ERROR] }) };
  }
  const parameters = [
    ...(spec.path ?? []).map((parameter) => ({
      name: parameter.name,
      in: 'path',
      required: true,
      description: parameter.description,
      schema: inline(parameter.schema ?? NON_EMPTY),
      example: parameter.example,
    })),
    ...(spec.query ?? []).map(queryParameter),
    ...(spec.idempotencyKey ? [IDEMPOTENCY_KEY] : []),
  ];
  return {
    operationId: spec.operationId,
    tags: spec.tags,
    summary: spec.summary,
    ...(spec.description ? { description: spec.description } : {}),
    ...(parameters.length > 0 ? { parameters } : {}),
    ...(spec.body
      ? { requestBody: { required: spec.body.required, description: spec.body.description, content: jsonContent(shapeSchema(spec.body.schema)) } }
      : {}),
    ...(spec.security ? { security: spec.security } : {}),
    responses,
  };
}

function apiSchemaNamed(name: string): Shape {
  return { jsonSchema: ref(name) };
}
